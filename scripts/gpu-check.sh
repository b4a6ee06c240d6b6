#!/usr/bin/env bash
# The device check (docs/gpu.md, "The device check"): on a machine with an NVIDIA GPU, from this repository with no
# install step, first say what the GPU benchmarks need and lack (the driver, each framework's CUDA build, Triton's
# build tools), then time the quick profile on cpu and gpu, report it, and gate the working tree against itself there.
# Every output goes to OUT (default docs/results/gpu/DATE). A failing step does not stop the later ones: it says on
# stderr which failed and why ("gpu-check.sh: step N (NAME) failed: ..."), and the script exits 1 at the end if any
# failed. Where the solvers cannot be listed it times the base ones and skips the gate, saying so, and exits 1.
# --dry-run prints the commands (one a line, after "+ ") and runs and creates nothing. --skip-compile leaves
# torch_compile out of the timed solvers and the gate: it compiles in every trial, too long for a short budget.
set -euo pipefail

USAGE="usage: scripts/gpu-check.sh [--dry-run] [--skip-compile] [OUT]"
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
skip_compile=0
out=""
for arg in "$@"; do
    case $arg in
        --dry-run) dry_run=1 ;;
        --skip-compile) skip_compile=1 ;;
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
base_solvers=$BASE_SOLVERS
if ((skip_compile)); then
    base_solvers=,$base_solvers,
    base_solvers=${base_solvers//,torch_compile,/,}
    base_solvers=${base_solvers:1:-1}
fi

if "$PYTHON" -c 'import tensorflow' >/dev/null 2>&1; then
    with_tensorflow=1
else
    with_tensorflow=0
fi
# The solvers to time, and those of them that run on a GPU, from the registry (solvers/__init__.py): the one line that
# starts "solvers: ". Where that fails, what else it printed (a traceback's last line) says why; steps 1 and 2 then
# take the base solvers and step 5 (the gate) is skipped, since which of them run on a GPU is the registry's to say.
failed=0
failures=""
listing_status=0
listing=$("$PYTHON" -c '
import sys
import solvers
names = sys.argv[1].split(",")
if sys.argv[2] == "1":
    names += [name for name, solver in solvers.REGISTRY.items() if "tensorflow" in solver.needs]
print("solvers:", ",".join(names), ",".join(name for name in names if "gpu" in solvers.get(name).devices))
' "$base_solvers" "$with_tensorflow" 2>&1) || listing_status=$?
listed="" last_said=""
while IFS= read -r line; do
    if [[ $line == "solvers: "* ]]; then
        listed=${line#solvers: }
    elif [[ -n ${line//[[:space:]]/} ]]; then
        last_said=$line
    fi
done <<<"$listing"
solver_list="" gpu_solvers=""
read -r solver_list gpu_solvers _ <<<"$listed" || true
listing_failure=""
if ((listing_status)); then
    listing_failure="$PYTHON exited $listing_status${last_said:+: $last_said}"
elif [[ -z $listing ]]; then
    listing_failure="$PYTHON printed nothing"
elif [[ -z $solver_list ]]; then
    listing_failure="$PYTHON printed no \"solvers: \" line${last_said:+, its last: $last_said}"
elif [[ -z $gpu_solvers ]]; then
    listing_failure="no solver it listed ($solver_list) runs on a GPU"
fi
if [[ -n $listing_failure ]]; then
    solver_list=${solver_list:-$base_solvers} gpu_solvers=""
    echo "gpu-check.sh: listing the solvers failed: $listing_failure;" \
         "steps 1 and 2 take $solver_list, step 5 (gate) is skipped" >&2
    failed=1
    failures="listing the solvers"
fi

# Before anything is timed: the driver, each framework's CUDA build and the driver it needs, Triton's build tools for
# torch_compile; one line each, and exit 1 where something a GPU benchmark needs is missing (solvers/prerequisites.py).
prerequisites_command=("$PYTHON" -m solvers.prerequisites --solvers "$solver_list")
# -rs: pytest.txt says why each skipped benchmark skipped.
pytest_command=("$PYTHON" -m pytest perf/test_fssgd.py -p no:cacheprovider -rs --devices cpu,gpu --solvers "$solver_list"
                --benchmark-json "$out/run.json")
report_command=("$PYTHON" -m perf.report "$out/run.json" --out "$out")
# Plots where matplotlib imports; asked for without it, the report is an error rather than a report without them.
"$PYTHON" -c 'import matplotlib' >/dev/null 2>&1 || report_command+=(--no-plots)
# Whether step 2 timed anything on the GPU at all: its gpu benchmarks skip, and pytest passes, when none is seen.
gpu_timed_command=("$PYTHON" -m perf.report.device_check "$out/run.json")
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
    shown "${prerequisites_command[@]}"
    shown "${pytest_command[@]}"
    shown "${report_command[@]}"
    shown "${gpu_timed_command[@]}"
    [[ -z $gpu_solvers ]] || shown "${gate_command[@]}"
    exit "$failed"
fi

# Nothing can be kept without OUT: the one failure that stops the script before its steps.
if ! mkdir -p "$out" || ! : >"$out/status.txt"; then
    echo "gpu-check.sh: cannot write to OUT ($out); nothing ran" >&2
    exit 1
fi
[[ -z $listing_failure ]] || echo "listing the solvers: failed: $listing_failure" >>"$out/status.txt"
{
    echo "date: $(date -u '+%F %T UTC')"
    echo "python: $PYTHON ($(command -v "$PYTHON" || echo 'not found'))"
    echo "tensorflow importable: $([[ $with_tensorflow == 1 ]] && echo yes || echo no)"
    echo "torch_compile: $( ((skip_compile)) && echo 'left out (--skip-compile)' || echo timed)"
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
    git status --short -- . ${exclude[@]+"${exclude[@]}"} 2>&1 | head || true
    echo
    echo "## nvidia-smi"
    if command -v nvidia-smi >/dev/null; then nvidia-smi 2>&1 || echo "(exit $?)"; else echo "(nvidia-smi not found)"; fi
    echo
    echo "## commands run, each with its exit status and wall time"
    shown cd "$PWD"
    shown export "PYTHONPATH=$PYTHONPATH"
} >"$out/environment.txt"

step_number=0
# step NAME LOG COMMAND...: runs it, its output also to LOG; a failure is said on stderr and recorded, and the script
# goes on. With no COMMAND, the step is skipped (LOG is then why), which counts as a failure.
step() {
    local name=$1 log=$2 status began said="" line
    shift 2
    step_number=$((step_number + 1))
    if (($# == 0)); then
        echo "step $name: skipped, $log" | tee -a "$out/status.txt" "$out/environment.txt"
        echo "gpu-check.sh: step $step_number ($name) skipped: $log" >&2
        failed=1
        failures+="${failures:+, }$name"
        return 0
    fi
    shown "$@" | tee -a "$out/environment.txt" || true
    began=$SECONDS
    set +e
    "$@" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    set -e
    echo "  exit $status after $((SECONDS - began)) s" >>"$out/environment.txt"
    echo "step $name: exit $status" | tee -a "$out/status.txt"
    if ((status != 0)); then
        while IFS= read -r line; do
            [[ -z ${line//[[:space:]]/} ]] || said=$line
        done <"$log" || true
        echo "gpu-check.sh: step $step_number ($name) failed: exit $status${said:+: $said};" \
             "all it printed is in $log" >&2
        failed=1
        failures+="${failures:+, }$name"
    fi
}

step prerequisites "$out/prerequisites.txt" "${prerequisites_command[@]}"
step pytest "$out/pytest.txt" "${pytest_command[@]}"
step report "$out/report.txt" "${report_command[@]}"
step gpu-timed "$out/gpu-timed.txt" "${gpu_timed_command[@]}"
if [[ -n $gpu_solvers ]]; then
    step gate "$out/gate.txt" "${gate_command[@]}"
else
    step gate "the solvers that run on a GPU are not known (listing the solvers failed)"
fi

verdict=$( ((failed)) && echo "FAILED ($failures)" || echo 'every step passed')
echo "gpu-check.sh: $verdict, after ${SECONDS} s; see $out/status.txt"
exit "$failed"
