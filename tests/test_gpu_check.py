"""scripts/gpu-check.sh, the device check (docs/gpu.md), on the CPU: its dry run's commands and solvers, its OUT folder,
its usage errors, its first step (prerequisites), --skip-compile, and a real run whose python is a fake that answers each step with a chosen exit status. Nothing is
timed. Whether TensorFlow imports is faked with a tensorflow module put first on PYTHONPATH (empty: it imports; raising
ImportError: it does not), so the tests hold whether or not TensorFlow is installed."""

import datetime
import importlib.util
import json
import os
import shlex
import subprocess
import sys

import pytest
from helpers import ROOT

import solvers

SCRIPT = ROOT / "scripts" / "gpu-check.sh"
USAGE = "usage: scripts/gpu-check.sh [--dry-run] [--skip-compile] [OUT]"
BASE = ["jax_fori_loop", "jax_step", "torch_eager", "torch_compile", "numpy_loop"]
WITHOUT_COMPILE = [name for name in BASE if name != "torch_compile"]
TENSORFLOW_SOLVERS = [name for name, solver in solvers.REGISTRY.items() if "tensorflow" in solver.needs]


def gpu_capable(names):
    return [name for name in names if "gpu" in solvers.REGISTRY[name].devices]


@pytest.fixture(params=[True, False], ids=["with-tensorflow", "without-tensorflow"])
def tensorflow(request, tmp_path):
    """(whether tensorflow imports, a PYTHONPATH folder that makes it so)."""
    folder = tmp_path / ("tensorflow-importable" if request.param else "tensorflow-missing")
    folder.mkdir()
    (folder / "tensorflow.py").write_text("" if request.param else "raise ImportError('no tensorflow in this test')\n")
    return request.param, folder


def run_script(*args, cwd=ROOT, python=sys.executable, pythonpath=None):
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHON")}
    env["PYTHON"] = str(python)
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def commands(result) -> list[list[str]]:
    """The dry run's steps, each split as a shell would split it, after its cd to the root and PYTHONPATH."""
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines and all(line.startswith("+ ") for line in lines), result.stdout
    split = [shlex.split(line[2:]) for line in lines]
    assert split[0] == ["cd", str(ROOT)]
    assert split[1][0] == "export" and split[1][1].split("=", 1)[1].split(":")[0] == str(ROOT)
    return split[2:]


def option(command, name):
    return command[command.index(name) + 1]


def test_without_matplotlib_the_report_step_asks_for_tables_only(tmp_path):
    (tmp_path / "matplotlib.py").write_text("raise ImportError('no matplotlib in this test')\n")
    _, _, report, *_ = commands(run_script("--dry-run", "out", pythonpath=tmp_path))
    assert report == [sys.executable, "-m", "perf.report", "out/run.json", "--out", "out", "--no-plots"]


def test_the_dry_run_names_the_steps_and_the_solvers(tensorflow):
    importable, folder = tensorflow
    found = commands(run_script("--dry-run", "out", pythonpath=folder))
    listed = BASE + (TENSORFLOW_SOLVERS if importable else [])
    prerequisites, pytest_run, report, gpu_timed, gate = found
    assert prerequisites == [sys.executable, "-m", "solvers.prerequisites", "--solvers", ",".join(listed)]
    assert pytest_run[:4] == [sys.executable, "-m", "pytest", "perf/test_fssgd.py"]
    assert option(pytest_run, "--devices") == "cpu,gpu"
    assert option(pytest_run, "--solvers").split(",") == listed
    assert option(pytest_run, "--benchmark-json") == "out/run.json"
    plots = [] if importlib.util.find_spec("matplotlib") else ["--no-plots"]  # the test's Python is the script's
    assert report == [sys.executable, "-m", "perf.report", "out/run.json", "--out", "out", *plots]
    assert gpu_timed == [sys.executable, "-m", "perf.report.device_check", "out/run.json"]
    assert gate[:5] == [sys.executable, "-m", "perf.gate", ".", "."]
    assert option(gate, "--devices") == "gpu"
    assert option(gate, "--solvers").split(",") == gpu_capable(listed)
    assert "numpy_loop" not in option(gate, "--solvers")
    assert option(gate, "--json") == "out/gate.json"
    assert float(option(gate, "--budget")) > 0


def test_the_tensorflow_solvers_are_the_registrys():
    """The fixture above compares with the registry; here, that the registry has some, so it can tell."""
    assert TENSORFLOW_SOLVERS and "tf1_feed_dict" in TENSORFLOW_SOLVERS
    assert set(BASE) <= set(solvers.REGISTRY)


@pytest.mark.parametrize("started_in", ["root", "elsewhere"])
def test_out_defaults_to_todays_folder_under_docs_results_gpu(tmp_path, tensorflow, started_in):
    before = datetime.date.today().isoformat()
    cwd = ROOT if started_in == "root" else tmp_path
    _, pytest_run, report, *_ = commands(run_script("--dry-run", cwd=cwd, pythonpath=tensorflow[1]))
    after = datetime.date.today().isoformat()
    assert option(report, "--out") in (f"docs/results/gpu/{before}", f"docs/results/gpu/{after}")
    assert option(pytest_run, "--benchmark-json") == option(report, "--out") + "/run.json"


def test_a_relative_out_is_where_the_script_was_started_and_quoted(tmp_path, tensorflow):
    found = commands(run_script("--dry-run", "my results", cwd=tmp_path, pythonpath=tensorflow[1]))
    assert option(found[2], "--out") == f"{tmp_path}/my results"
    assert option(found[4], "--json") == f"{tmp_path}/my results/gate.json"


def test_an_absolute_out_stays_as_given(tmp_path, tensorflow):
    found = commands(run_script(tmp_path / "out", "--dry-run", pythonpath=tensorflow[1]))
    assert option(found[1], "--benchmark-json") == f"{tmp_path}/out/run.json"


def test_the_dry_run_creates_nothing(tmp_path):
    """Once, not per tensorflow parameter: two runs at once could not tell which made the default folder."""
    missing = tmp_path / "tensorflow-missing"
    missing.mkdir()
    (missing / "tensorflow.py").write_text("raise ImportError('no tensorflow in this test')\n")
    start = tmp_path / "start"
    start.mkdir()
    default = ROOT / "docs" / "results" / "gpu" / datetime.date.today().isoformat()
    existed = default.exists()
    try:
        for args in (["--dry-run"], ["--dry-run", start / "out"], ["--dry-run", "relative"]):
            result = run_script(*args, cwd=start, pythonpath=missing)
            assert result.returncode == 0, result.stderr
            assert list(start.iterdir()) == []
            assert existed or not default.exists()
    finally:
        if not existed and default.is_dir() and not any(default.iterdir()):
            default.rmdir()  # what a faulty script made, gone again, with its parent if empty
            if not any(default.parent.iterdir()):
                default.parent.rmdir()


@pytest.mark.parametrize("args, said", [
    (["--bogus"], "unknown option --bogus"),
    (["--dry-run", "-n"], "unknown option -n"),
    (["first", "second"], "one OUT folder at most, got first and second"),
    (["--dry-run", "first", "second"], "one OUT folder at most"),
])
def test_a_usage_error_exits_2_naming_the_usage(tmp_path, args, said):
    result = run_script(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert said in result.stderr and USAGE in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert list(tmp_path.iterdir()) == []


FAKE_PYTHON = """#!{python}
import json, os, sys
args = sys.argv[1:]
exits = json.loads(os.environ["FAKE_EXITS"])
if args[:1] == ["-c"] and "import solvers" in args[1] and os.environ.get("FAKE_LISTING"):
    if os.environ["FAKE_LISTING"] == "fails":
        print("Traceback (most recent call last):", file=sys.stderr)
        print("RuntimeError: the registry is broken in this test", file=sys.stderr)
        sys.exit(3)
    sys.exit(0)  # "silent": prints nothing
if args[:1] == ["-m"] and args[1] in exits:
    print("fake", args[1])
    if args[1] == "pytest" and os.environ.get("FAKE_DEVICES"):
        benchmarks = [{{"extra_info": {{"device": device, "solver": "torch_compile", "trial_setup_s": [20.0, 18.5]}}}}
                      for device in os.environ["FAKE_DEVICES"].split(",")]
        with open(args[args.index("--benchmark-json") + 1], "w") as run:
            json.dump({{"benchmarks": benchmarks}}, run)
    sys.exit(exits[args[1]])
os.execv(sys.executable, [sys.executable, *args])
"""


@pytest.fixture
def fake_python(tmp_path, monkeypatch):
    """fake_python(pytest=N, perf.report=N, perf.gate=N, devices=..., listing=...): a python whose -m steps only print
    and exit N (the fake pytest writing a run.json with a benchmark on each of devices), and whose listing of the
    solvers, with listing "fails" or "silent", exits 3 with a traceback or 0 printing nothing; everything else is the
    real one."""
    def make(devices="", listing="", **exits):
        path = tmp_path / "python"
        path.write_text(FAKE_PYTHON.format(python=sys.executable))
        path.chmod(0o755)
        monkeypatch.setenv("FAKE_EXITS", json.dumps({name.replace("_", "."): code for name, code in exits.items()}))
        monkeypatch.setenv("FAKE_DEVICES", devices)
        monkeypatch.setenv("FAKE_LISTING", listing)
        return path

    return make


def test_a_failing_step_is_recorded_and_the_later_ones_still_run(tmp_path, tensorflow, fake_python):
    python = fake_python(solvers_prerequisites=0, pytest=3, perf_report=0, perf_gate=10)  # no run.json: gpu-timed fails
    result = run_script(tmp_path / "out", python=python, pythonpath=tensorflow[1])
    assert result.returncode == 1, result.stdout + result.stderr
    out = tmp_path / "out"
    assert (out / "status.txt").read_text().splitlines() == [
        "step prerequisites: exit 0", "step pytest: exit 3", "step report: exit 0", "step gpu-timed: exit 1",
        "step gate: exit 10"]
    assert (out / "prerequisites.txt").read_text() == "fake solvers.prerequisites\n"
    assert (out / "pytest.txt").read_text() == "fake pytest\n"
    assert (out / "report.txt").read_text() == "fake perf.report\n"
    assert (out / "gate.txt").read_text() == "fake perf.gate\n"
    environment = (out / "environment.txt").read_text()
    for heading in ("date: ", "## versions and devices", "numpy ", "## git", "## nvidia-smi", "## commands run"):
        assert heading in environment
    assert f"tensorflow importable: {'yes' if tensorflow[0] else 'no'}" in environment
    assert environment.count("\n+ ") == 7 and f"\n+ cd {ROOT}\n" in environment and "  exit 3 after" in environment


def test_every_step_passing_exits_0_and_no_gpu_benchmark_fails(tmp_path, tensorflow, fake_python):
    passing = fake_python(solvers_prerequisites=0, pytest=0, perf_report=0, perf_gate=0, devices="cpu,gpu")
    result = run_script(tmp_path / "passed", python=passing, pythonpath=tensorflow[1])
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "passed" / "gpu-timed.txt").read_text().splitlines() == [
        "timed: 1 benchmarks on cpu, 1 on gpu",
        "setup and warm-up before the timed rounds, compiles included: 77 s in all",
        "  torch_compile on cpu: 38.5 s over 2 trials, 20.0 s the longest",
        "  torch_compile on gpu: 38.5 s over 2 trials, 20.0 s the longest"]
    cpu_only = fake_python(solvers_prerequisites=0, pytest=0, perf_report=0, perf_gate=0, devices="cpu")
    result = run_script(tmp_path / "cpu-only", python=cpu_only, pythonpath=tensorflow[1])
    assert result.returncode == 1
    assert "step gpu-timed: exit 1" in (tmp_path / "cpu-only" / "status.txt").read_text()
    assert "no benchmark was timed on the GPU" in (tmp_path / "cpu-only" / "gpu-timed.txt").read_text()


def test_each_failing_step_says_which_and_why_on_stderr(tmp_path, fake_python):
    python = fake_python(solvers_prerequisites=1, pytest=3, perf_report=0, perf_gate=10)  # no run.json: gpu-timed fails
    result = run_script(tmp_path / "out", python=python)
    assert result.returncode == 1
    out = tmp_path / "out"
    assert ("gpu-check.sh: step 1 (prerequisites) failed: exit 1: fake solvers.prerequisites; all it printed is in "
            f"{out}/prerequisites.txt") in result.stderr
    assert f"gpu-check.sh: step 2 (pytest) failed: exit 3: fake pytest; all it printed is in {out}/pytest.txt" \
        in result.stderr
    assert f"gpu-check.sh: step 4 (gpu-timed) failed: exit 1: no {out}/run.json: step 2 (pytest) wrote none" \
        in result.stderr
    assert "gpu-check.sh: step 5 (gate) failed: exit 10: fake perf.gate" in result.stderr
    assert "step 3" not in result.stderr and "Traceback" not in result.stderr
    assert "gpu-check.sh: FAILED (prerequisites, pytest, gpu-timed, gate)" in result.stdout


LISTING_SAID = {"fails": "exited 3: RuntimeError: the registry is broken in this test", "silent": "printed nothing"}


@pytest.mark.parametrize("listing", ["fails", "silent"])
def test_when_the_solvers_cannot_be_listed_it_says_why_times_the_base_ones_and_skips_the_gate(
        tmp_path, fake_python, listing):
    python = fake_python(solvers_prerequisites=0, pytest=0, perf_report=0, perf_gate=0, devices="cpu,gpu",
                         listing=listing)
    result = run_script(tmp_path / "out", python=python)
    assert result.returncode == 1, result.stdout + result.stderr
    said = f"{python} {LISTING_SAID[listing]}"
    assert f"gpu-check.sh: listing the solvers failed: {said}; steps 1 and 2 take {','.join(BASE)}, step 5 (gate) " \
           "is skipped" in result.stderr
    assert "gpu-check.sh: step 5 (gate) skipped: the solvers that run on a GPU are not known" in result.stderr
    out = tmp_path / "out"
    assert (out / "status.txt").read_text().splitlines() == [
        f"listing the solvers: failed: {said}", "step prerequisites: exit 0", "step pytest: exit 0",
        "step report: exit 0", "step gpu-timed: exit 0",
        "step gate: skipped, the solvers that run on a GPU are not known (listing the solvers failed)"]
    assert (out / "pytest.txt").read_text() == "fake pytest\n" and not (out / "gate.txt").exists()
    assert f"--solvers {','.join(BASE)} " in (out / "environment.txt").read_text()
    assert "gpu-check.sh: FAILED (listing the solvers, gate)" in result.stdout


def test_a_dry_run_that_cannot_list_the_solvers_says_why_shows_the_rest_and_exits_1(tmp_path, fake_python):
    python = fake_python(listing="fails")
    result = run_script("--dry-run", tmp_path / "out", python=python)
    assert result.returncode == 1
    assert f"gpu-check.sh: listing the solvers failed: {python} {LISTING_SAID['fails']}" in result.stderr
    shown = subprocess.CompletedProcess(result.args, 0, result.stdout, "")  # commands() wants a dry run that passed
    prerequisites, pytest_run, report, gpu_timed = commands(shown)  # no gate
    assert option(prerequisites, "--solvers").split(",") == option(pytest_run, "--solvers").split(",") == BASE
    assert not (tmp_path / "out").exists()


def test_an_out_that_cannot_be_written_says_so_and_exits_1(tmp_path, fake_python):
    (tmp_path / "a-file").write_text("")
    result = run_script(tmp_path / "a-file" / "out",
                        python=fake_python(solvers_prerequisites=0, pytest=0, perf_report=0, perf_gate=0))
    assert result.returncode == 1
    assert f"gpu-check.sh: cannot write to OUT ({tmp_path}/a-file/out); nothing ran" in result.stderr


def test_skip_compile_leaves_torch_compile_out_of_every_step(tensorflow):
    importable, folder = tensorflow
    prerequisites, pytest_run, report, gpu_timed, gate = commands(run_script("--dry-run", "--skip-compile", "out",
                                                                             pythonpath=folder))
    listed = WITHOUT_COMPILE + (TENSORFLOW_SOLVERS if importable else [])
    assert option(prerequisites, "--solvers").split(",") == option(pytest_run, "--solvers").split(",") == listed
    assert option(gate, "--solvers").split(",") == gpu_capable(listed)
    assert "torch_compile" not in " ".join(prerequisites + pytest_run + gate)


def test_the_usage_names_skip_compile_and_the_option_goes_anywhere(tmp_path):
    result = run_script("--help")
    assert result.returncode == 0 and result.stdout == USAGE + "\n"
    found = commands(run_script("out", "--skip-compile", "--dry-run", cwd=tmp_path))
    assert option(found[1], "--benchmark-json") == f"{tmp_path}/out/run.json"
    assert "torch_compile" not in option(found[1], "--solvers")


def test_the_prerequisites_step_runs_first_and_its_lines_are_kept(tmp_path, fake_python):
    """The real python -m solvers.prerequisites, on this machine: the driver line first, a verdict line last, the exit
    status the verdict's; the later steps run whatever it says."""
    python = fake_python(pytest=0, perf_report=0, perf_gate=0, devices="cpu,gpu")
    result = run_script(tmp_path / "out", python=python)
    out = tmp_path / "out"
    lines = (out / "prerequisites.txt").read_text().splitlines()
    assert lines[0].startswith("driver: ") and lines[-1].startswith(("ready: ", "NOT READY: "))
    status = (out / "status.txt").read_text().splitlines()
    ready = lines[-1].startswith("ready: ")
    assert status[0] == f"step prerequisites: exit {0 if ready else 1}"
    assert status[1:] == ["step pytest: exit 0", "step report: exit 0", "step gpu-timed: exit 0", "step gate: exit 0"]
    assert ready or f"gpu-check.sh: step 1 (prerequisites) failed: exit 1: {lines[-1]}; all it printed is in " \
                    f"{out}/prerequisites.txt" in result.stderr
    assert "Traceback" not in result.stderr
    commands_run = (out / "environment.txt").read_text().split("## commands run")[1]
    assert commands_run.index("-m solvers.prerequisites") < commands_run.index("-m pytest")


def test_a_run_with_skip_compile_says_so_and_times_without_torch_compile(tmp_path, fake_python):
    python = fake_python(solvers_prerequisites=0, pytest=0, perf_report=0, perf_gate=0, devices="cpu,gpu")
    result = run_script("--skip-compile", tmp_path / "out", python=python)
    assert result.returncode == 0, result.stdout + result.stderr
    environment = (tmp_path / "out" / "environment.txt").read_text()
    assert "torch_compile: left out (--skip-compile)" in environment
    assert "torch_compile" not in environment.split("## commands run")[1]
    result = run_script(tmp_path / "timed", python=python)
    assert "torch_compile: timed" in (tmp_path / "timed" / "environment.txt").read_text()


def test_the_gpu_timed_step_reads_a_run_without_setup_figures_and_refuses_one_it_cannot_read(tmp_path, capsys):
    from perf.report import device_check

    older = tmp_path / "older.json"  # saved before trial_setup_s was recorded
    older.write_text(json.dumps({"benchmarks": [{"extra_info": {"device": "gpu", "solver": "jax_step"}}]}))
    assert device_check.main([str(older)]) == 0
    assert capsys.readouterr().out == "timed: 0 benchmarks on cpu, 1 on gpu\n"
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert device_check.main([str(broken)]) == 1
    assert capsys.readouterr().err.startswith(f"cannot read {broken} as a pytest-benchmark JSON run: JSONDecodeError")
