#!/usr/bin/env bash
# The device check (docs/gpu.md, "The device check"): on a machine with an NVIDIA GPU, from this repository with no
# install step, time the quick profile on cpu and gpu, report it, and gate the working tree against itself on the GPU.
# Every output goes to OUT (default docs/results/gpu/DATE). A failing step does not stop the later ones; the script
# exits 1 at the end if any failed. --dry-run prints the commands (one a line, after "+ ") and runs and creates nothing.
set -euo pipefail

USAGE="usage: scripts/gpu-check.sh [--dry-run] [OUT]"
# Timed on both devices where they can run; every TensorFlow solver of the registry joins them where TensorFlow imports.
BASE_SOLVERS=jax_fori_loop,jax_step,torch_eager,torch_compile,numpy_loop
# The gate's screening budget in seconds (python -m perf.gate --budget): it still takes its 5 passes, then confirms.
GATE_BUDGET_S=60

usage_error() {
    echo "gpu-check.sh: $1" >&2
    echo "$USAGE" >&2
    exit 2
}

dry_run=0
out=""
for arg in "$@"; do
    case $arg in
        --dry-run) dry_run=1 ;;
        -h | --help) echo "$USAGE"; exit 0 ;;
        -*) usage_error "unknown option $arg" ;;
        *) [[ -z $out ]] || usage_error "one OUT folder at most, got $out and $arg"; out=$arg ;;
    esac
done

# Everything runs from the repository root; an OUT given is relative to where the script was started.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -n $out && $out != /* && $PWD != "$root" ]]; then
    out=$PWD/$out
fi
cd "$root"
out=${out:-docs/results/gpu/$(date +%F)}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PYTHON=${PYTHON:-python3}

if "$PYTHON" -c 'import tensorflow' >/dev/null 2>&1; then
    with_tensorflow=1
else
    with_tensorflow=0
fi
# The solvers to time, and those of them that run on a GPU, from the registry (solvers/__init__.py).
read -r solver_list gpu_solvers < <("$PYTHON" -c '
import sys
import solvers
names = sys.argv[1].split(",")
if sys.argv[2] == "1":
    names += [name for name, solver in solvers.REGISTRY.items() if "tensorflow" in solver.needs]
print(",".join(names), ",".join(name for name in names if "gpu" in solvers.get(name).devices))
' "$BASE_SOLVERS" "$with_tensorflow")
[[ -n $gpu_solvers ]] || { echo "gpu-check.sh: cannot list the solvers with $PYTHON" >&2; exit 1; }

# -rs: pytest.txt says why each skipped benchmark skipped.
pytest_command=("$PYTHON" -m pytest perf/test_fssgd.py -p no:cacheprovider -rs --devices cpu,gpu --solvers "$solver_list"
                --benchmark-json "$out/run.json")
report_command=("$PYTHON" -m perf.report "$out/run.json" --out "$out")
# Plots where matplotlib imports; asked for without it, the report is an error rather than a report without them.
"$PYTHON" -c 'import matplotlib' >/dev/null 2>&1 || report_command+=(--no-plots)
# Whether step 1 timed anything on the GPU at all: its gpu benchmarks skip, and pytest passes, when none is seen.
gpu_timed_command=("$PYTHON" -c 'import json, sys; devices = [benchmark["extra_info"].get("device") for benchmark in json.load(open(sys.argv[1]))["benchmarks"]]; print("timed:", devices.count("cpu"), "benchmarks on cpu,", devices.count("gpu"), "on gpu"); sys.exit(0 if "gpu" in devices else "no benchmark was timed on the GPU: see the skips in pytest.txt")' "$out/run.json")
gate_command=("$PYTHON" -m perf.gate . . --devices gpu --solvers "$gpu_solvers" --budget "$GATE_BUDGET_S"
              --json "$out/gate.json")

# A command as one line a shell can run again: words quoted only where they need it.
shown() {
    local word quoted line=""
    for word in "$@"; do
        if [[ $word =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then
            line+=" $word"
        elif [[ $word != *\'* ]]; then
            line+=" '$word'"
        else
            printf -v quoted '%q' "$word"
            line+=" $quoted"
        fi
    done
    echo "+$line"
}

if ((dry_run)); then
    shown cd "$PWD"
    shown export "PYTHONPATH=$PYTHONPATH"
    shown "${pytest_command[@]}"
    shown "${report_command[@]}"
    shown "${gpu_timed_command[@]}"
    shown "${gate_command[@]}"
    exit 0
fi

mkdir -p "$out"
: >"$out/status.txt"
{
    echo "date: $(date -u '+%F %T UTC')"
    echo "python: $PYTHON ($(command -v "$PYTHON" || echo 'not found'))"
    echo "tensorflow importable: $([[ $with_tensorflow == 1 ]] && echo yes || echo no)"
    echo
    echo "## versions and devices"
    "$PYTHON" -c '
import platform
print("python", platform.python_version())
for name in ("numpy", "jax", "torch"):
    try:
        module = __import__(name)
    except Exception as error:
        print(name, "not importable:", type(error).__name__, error)
    else:
        print(name, module.__version__)
try:
    import jax
    print("jax devices:", jax.devices())
except Exception as error:
    print("jax devices: none:", type(error).__name__, error)
try:
    import torch
    print("torch cuda:", torch.version.cuda, [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])
except Exception as error:
    print("torch cuda: none:", type(error).__name__, error)
' 2>&1 || echo "(exit $?)"
    echo
    echo "## git"
    git rev-parse HEAD 2>&1 || echo "(no git history here)"
    exclude=()  # OUT itself, being written, where it lies in the tree
    [[ $out == /* ]] || exclude=(":(exclude)$out")
    git status --short -- . "${exclude[@]}" 2>&1 | head || true
    echo
    echo "## nvidia-smi"
    if command -v nvidia-smi >/dev/null; then nvidia-smi 2>&1 || echo "(exit $?)"; else echo "(nvidia-smi not found)"; fi
    echo
    echo "## commands run, each with its exit status and wall time"
    shown cd "$PWD"
    shown export "PYTHONPATH=$PYTHONPATH"
} >"$out/environment.txt"

failed=0
step() {
    local name=$1 log=$2 status began
    shift 2
    shown "$@" | tee -a "$out/environment.txt"
    began=$SECONDS
    set +e
    "$@" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    set -e
    echo "  exit $status after $((SECONDS - began)) s" >>"$out/environment.txt"
    echo "step $name: exit $status" | tee -a "$out/status.txt"
    ((status == 0)) || failed=1
}

step pytest "$out/pytest.txt" "${pytest_command[@]}"
step report "$out/report.txt" "${report_command[@]}"
step gpu-timed "$out/gpu-timed.txt" "${gpu_timed_command[@]}"
step gate "$out/gate.txt" "${gate_command[@]}"

echo "gpu-check.sh: $( ((failed)) && echo 'FAILED' || echo 'every step passed'), after ${SECONDS} s; see $out/status.txt"
exit "$failed"
