"""Environment faults end to end: a broken TensorFlow, out of memory, divergence, bad saved runs, unwritable output."""

import json
import os
from pathlib import Path

import pytest
from pytest_benchmark.utils import get_machine_id

from helpers import ROOT
from perf import storage
from perf.judge.outcome import NOT_MEASURED
from perf.measure.profiles import PROFILES

# The studies beyond the per-step tables; named on the command line, they run in the quick profile.
STUDIES = ("test_iterations.py", "test_time_to_accuracy.py")


@pytest.fixture
def run_fssgd(run_perf):
    """perf/test_fssgd.py, the per-step benchmarks, or other perf/ modules, with these options."""
    return lambda *args, modules=("test_fssgd.py",): run_perf(*args, modules=modules)


def with_plugin(pytester, monkeypatch, **modules):
    """Modules importable by the suite's subprocess and its worker processes, before the project: each one named is
    imported at every interpreter's start (sitecustomize), so that what it patches is patched where trials run."""
    if modules:
        pytester.makepyfile(**modules, sitecustomize="".join(f"import {name}\n" for name in modules))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(pytester.path), str(ROOT)]))


# TensorFlow present but broken ---------------------------------------------------------------


def test_a_tensorflow_that_fails_at_import_skips_its_benchmarks_with_the_error(run_fssgd, pytester, monkeypatch):
    # A package that shadows the real one and fails as a broken CUDA or protobuf install would.
    (pytester.path / "tensorflow").mkdir()
    (pytester.path / "tensorflow" / "__init__.py").write_text("raise RuntimeError('simulated broken install')\n")
    with_plugin(pytester, monkeypatch)
    result = run_fssgd("--benchmark-disable", "-rs", "--devices", "cpu", "--solvers", "numpy_loop,tf1_while_loop")
    result.assert_outcomes(passed=2, skipped=2)
    result.stdout.fnmatch_lines(
        ["*SKIPPED [[]2[]]*tensorflow is installed but failed to import: RuntimeError: simulated broken install"]
    )


# Out of memory -------------------------------------------------------------------------------

OUT_OF_MEMORY_PLUGIN = '''
import contextlib

import solvers.tf1_while_loop as loop
from solvers.tensorflow_support import import_tensorflow

real_prepare = loop.prepare


@contextlib.contextmanager
def prepare(problem, device):
    with real_prepare(problem, device) as run:

        def exhausted(iterations=None):
            if problem.n == 1000:
                raise import_tensorflow().errors.ResourceExhaustedError(None, None, "OOM when allocating tensor (simulated)")
            return run(iterations)

        yield exhausted


loop.prepare = prepare
'''


@pytest.mark.tensorflow
@pytest.mark.parametrize("timing", [["--benchmark-disable"], ["--benchmark-json=run.json"]], ids=["untimed", "timed"])
def test_a_cpu_trial_out_of_memory_fails_that_benchmark_with_its_traceback_and_the_next_still_runs(run_fssgd, pytester,
                                                                                                  monkeypatch, timing):
    # Out of memory is a GPU trial's to name, with GPU advice (tests/test_gpu.py); on the CPU the error is the user's
    # to read, whole, and it is no reason to stop the other benchmarks.
    with_plugin(pytester, monkeypatch, exhaust_memory=OUT_OF_MEMORY_PLUGIN)
    monkeypatch.setenv("FSSGD_SHRINK", "1000")  # the timed path, not its figures: a profile a thousand times shorter
    result = run_fssgd(*timing, "--devices", "cpu", "--solvers", "tf1_while_loop")
    result.assert_outcomes(passed=1, failed=1)  # n1000 ran out, then n100000 ran
    result.stdout.fnmatch_lines(["*ResourceExhaustedError: OOM when allocating tensor (simulated)*"])
    assert "raise import_tensorflow().errors.ResourceExhaustedError" in result.stdout.str()  # its traceback
    assert "out of memory:" not in result.stdout.str() and "TF_FORCE_GPU_ALLOW_GROWTH" not in result.stdout.str()


@pytest.mark.tensorflow
def test_a_cpu_trial_out_of_memory_fails_the_studies_benchmarks_too(run_fssgd, pytester, monkeypatch):
    with_plugin(pytester, monkeypatch, exhaust_memory=OUT_OF_MEMORY_PLUGIN)
    result = run_fssgd("--benchmark-disable", "--devices", "cpu", "--solvers", "tf1_while_loop", modules=STUDIES)
    result.assert_outcomes(failed=5)  # four iteration counts and one time to accuracy, all at n = 1000
    result.stdout.fnmatch_lines(["*ResourceExhaustedError: OOM when allocating tensor (simulated)*"])
    assert "TF_FORCE_GPU_ALLOW_GROWTH" not in result.stdout.str()


# Divergence in a benchmark -------------------------------------------------------------------

UNSTABLE_PLUGIN = '''
import solvers.problem as problem

seed_problem = problem.seed_problem
problem.seed_problem = lambda n=problem.SEED_N, iterations=problem.SEED_ITERATIONS, lr=problem.SEED_LR: seed_problem(
    n, iterations, lr=3.1e-4 if n == 100_000 else lr)
'''


def test_a_diverging_benchmark_fails_saying_so_and_is_never_recorded(run_fssgd, pytester, monkeypatch):
    with_plugin(pytester, monkeypatch, unstable_lr=UNSTABLE_PLUGIN)
    result = run_fssgd("--devices", "cpu", "--solvers", "numpy_loop",
                      "--benchmark-json", "run.json", "--benchmark-min-time=0")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*DivergenceError: numpy_loop diverged: lr 0.00031 is above the stable limit 0.0002999 for this x*"])
    recorded = json.loads((pytester.path / "run.json").read_text())["benchmarks"]
    assert [bench["name"] for bench in recorded] == ["test_fssgd[numpy_loop-cpu-n1000]"]


# Saved runs ----------------------------------------------------------------------------------


def saved_runs_folder(pytester) -> Path:
    folder = pytester.path / ".benchmarks" / storage.storage_key() / get_machine_id()
    folder.mkdir(parents=True)
    return folder


GOOD_RUN = {"machine_info": {}, "commit_info": {}, "benchmarks": [], "datetime": "2026-11-30T00:00:00", "version": "5.3.0"}


def test_compare_with_a_truncated_or_foreign_newest_run_is_not_measured_naming_it_and_touches_nothing(run_fssgd,
                                                                                                       pytester):
    folder = saved_runs_folder(pytester)
    files = {
        "0001_good.json": json.dumps(GOOD_RUN),
        "0002_killed.json": json.dumps(GOOD_RUN)[:40],  # a run killed mid-write
        "0003_foreign.json": json.dumps({"benchmarks": [{"name": "x"}]}),  # pytest-benchmark crashed on this one
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    # The newest is the one asked for; pytest-benchmark would quietly compare an older one instead.
    result = run_fssgd("--benchmark-compare", "--devices", "cpu", "--solvers", "numpy_loop")
    assert result.ret == NOT_MEASURED
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines([
        "*fssgd-bench: NOT MEASURED: --benchmark-compare: the saved run to compare with cannot be read, so nothing was "
        "run; it is left as it is*0003_foreign.json: not a pytest-benchmark saved run (needs machine_info and "
        "benchmarks with fullname and stats)",
    ])
    result.stdout.no_fnmatch_line("*passed*")
    assert {path.name: path.read_text() for path in folder.iterdir()} == files


def test_compare_with_one_named_good_run_goes_on_despite_a_broken_one(run_fssgd, pytester):
    folder = saved_runs_folder(pytester)
    (folder / "0001_good.json").write_text(json.dumps(GOOD_RUN))
    (folder / "0002_killed.json").write_text(json.dumps(GOOD_RUN)[:40])
    result = run_fssgd("--benchmark-compare=0001", "--benchmark-disable", "--devices", "cpu", "--solvers", "numpy_loop")
    result.assert_outcomes(passed=2)
    result.stderr.fnmatch_lines(["Comparing against benchmarks from: *0001_good.json"])
    # Nothing timed, nothing compared: a comparison that measured nothing is never a pass.
    assert result.ret == NOT_MEASURED
    result.stdout.fnmatch_lines(["fssgd-bench: NOT MEASURED: --benchmark-compare: no benchmark was timed "
                                 "(--benchmark-disable)"])


def test_compare_without_any_saved_run_is_not_measured_before_anything_runs(run_fssgd):
    result = run_fssgd("--benchmark-compare", "--fail-on-slower=10%", "--devices", "cpu", "--solvers", "numpy_loop")
    assert result.ret == NOT_MEASURED
    result.stderr.fnmatch_lines(["*fssgd-bench: NOT MEASURED: --benchmark-compare: no saved run in *.benchmarks/*"
                                 " to compare with (a first run, or another environment's folder: save one with "
                                 "--benchmark-autosave)"])
    result.stdout.no_fnmatch_line("*passed*")


def test_compare_with_a_run_that_is_not_there_is_a_usage_error(run_fssgd, pytester):
    (saved_runs_folder(pytester) / "0001_good.json").write_text(json.dumps(GOOD_RUN))
    result = run_fssgd("--benchmark-compare=9999", "--benchmark-disable", "--devices", "cpu", "--solvers", "numpy_loop")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--benchmark-compare=9999: no saved run matches it in *(saved: 0001_good.json), "
                                 "so nothing was run"])
    result.stdout.no_fnmatch_line("*passed*")


# Unwritable output ---------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--benchmark-autosave", "--benchmark-save=mine"])
def test_saving_where_no_folder_can_be_made_fails_before_any_benchmark(run_fssgd, pytester, option):
    # A path under a regular file can never be created, even by root, for whom permissions do not apply.
    (pytester.path / "file.txt").write_text("")
    result = run_fssgd(option, "--benchmark-storage", str(pytester.path / "file.txt" / "runs"),
                      "--devices", "cpu", "--solvers", "numpy_loop")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: --benchmark-save/--benchmark-autosave: cannot write to *file.txt/runs/{get_machine_id()} (Not a directory)"]
    )
    result.stdout.no_fnmatch_line("*passed*")


@pytest.mark.parametrize("target, reason", [("file.txt/run.json", "Not a directory"), ("missing/run.json", "No such file or directory"),
                                            (".", "it is a folder")])
def test_a_json_output_that_cannot_be_written_fails_before_any_benchmark(run_fssgd, pytester, target, reason):
    (pytester.path / "file.txt").write_text("")
    result = run_fssgd("--benchmark-json", target, "--devices", "cpu", "--solvers", "numpy_loop")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --benchmark-json: cannot write {target} ({reason})"])


# Honest measurement: where the ops ran -------------------------------------------------------

ELSEWHERE_PLUGIN = '''
import collections
import contextlib

from perf.measure import placement


@contextlib.contextmanager
def placed_on_a_gpu():
    placement = collections.Counter()
    yield placement
    placement["/job:localhost/replica:0/task:0/device:GPU:0"] = 5


placement.recording_placement = placed_on_a_gpu
'''


@pytest.mark.tensorflow
def test_a_benchmark_whose_ops_ran_on_another_device_fails_before_timing(run_fssgd, pytester, monkeypatch):
    with_plugin(pytester, monkeypatch, elsewhere=ELSEWHERE_PLUGIN)
    result = run_fssgd("--devices", "cpu", "--solvers", "numpy_loop,tf1_while_loop",
                      "--benchmark-json", "run.json", "--benchmark-min-time=0")
    result.assert_outcomes(passed=2, failed=2)  # numpy_loop has no TensorFlow placement to check
    result.stdout.fnmatch_lines(["*tf1_while_loop on cpu: asked for cpu, but TensorFlow placed float ops elsewhere: "
                                 "5 on /job:localhost/replica:0/task:0/device:GPU:0"])
    recorded = json.loads((pytester.path / "run.json").read_text())["benchmarks"]
    assert {bench["extra_info"]["solver"] for bench in recorded} == {"numpy_loop"}


@pytest.mark.tensorflow
def test_a_studys_benchmark_whose_ops_ran_on_another_device_fails_too(run_fssgd, pytester, monkeypatch):
    with_plugin(pytester, monkeypatch, elsewhere=ELSEWHERE_PLUGIN)
    result = run_fssgd("--benchmark-disable", "--devices", "cpu", "--solvers", "tf1_while_loop",
                      modules=STUDIES)
    result.assert_outcomes(failed=5)
    result.stdout.fnmatch_lines(["*tf1_while_loop on cpu: asked for cpu, but TensorFlow placed float ops elsewhere: *"] * 5)


@pytest.mark.tensorflow
def test_every_saved_benchmark_records_where_its_float_ops_ran(run_fssgd, pytester, monkeypatch):
    monkeypatch.setenv("FSSGD_SHRINK", "1000")  # placement is read at setup, whatever the steps
    result = run_fssgd("--devices", "cpu", "--solvers", "numpy_loop,tf1_while_loop,tf2_function_xla",
                       "-k", "not n100000", "--benchmark-json", "run.json", "--benchmark-min-time=0")
    result.assert_outcomes(passed=3)
    recorded = json.loads((pytester.path / "run.json").read_text())["benchmarks"]
    placements = {bench["name"]: bench["extra_info"]["placement"] for bench in recorded}
    assert all(isinstance(bench["extra_info"]["first_run_s"], float) for bench in recorded)
    assert placements["test_fssgd[numpy_loop-cpu-n1000]"] is None
    (device, count), = placements["test_fssgd[tf1_while_loop-cpu-n1000]"].items()
    assert device == "/job:localhost/replica:0/task:0/device:CPU:0" and count > 10
    assert placements["test_fssgd[tf2_function_xla-cpu-n1000]"].startswith("XLA runs the whole loop as one compiled cluster")


# Honest measurement: no compile in the timed rounds -------------------------------------------

CALL_LOG_PLUGIN = '''
import contextlib
import os

import solvers.numpy_loop as loop

real_prepare = loop.prepare


@contextlib.contextmanager
def prepare(problem, device):
    with real_prepare(problem, device) as run:

        def logged(iterations):
            with open(os.environ["CALL_LOG"], "a") as log:
                log.write(f"{iterations}\\n")
            return run(iterations)

        yield logged


loop.prepare = prepare
'''


def test_each_trial_sets_up_afresh_and_warms_up_before_its_timed_rounds(run_fssgd, pytester, monkeypatch):
    with_plugin(pytester, monkeypatch, call_log=CALL_LOG_PLUGIN)
    monkeypatch.setenv("CALL_LOG", str(pytester.path / "calls.txt"))  # written by every worker, whatever its folder
    result = run_fssgd("--devices", "cpu", "--solvers", "numpy_loop", "-k", "n1000 and not n100000",
                      "--benchmark-json", "run.json", "--benchmark-min-time=0")
    result.assert_outcomes(passed=1, deselected=1)
    calls = [int(line) for line in (pytester.path / "calls.txt").read_text().split()]
    (bench,) = json.loads((pytester.path / "run.json").read_text())["benchmarks"]
    info = bench["extra_info"]
    rounds, trials = info["rounds_per_trial"], info["trials"]
    # Every trial opens with the setup's one-step call; trial 1 then warms up at the timed K (XLA compiles per K)
    # and may size its rounds on one more call; later trials warm up only where trial 1's warm-up was slow.
    assert calls[0] == 1 and calls.count(1) == trials == PROFILES["quick"].trials
    per_trial = " ".join(map(str, calls)).split("1 ")[1:]
    first, *later = [[int(k) for k in chunk.split()] for chunk in per_trial]
    assert set(first + [k for chunk in later for k in chunk]) == {1_000}
    assert len(first) in (rounds + 1, rounds + 2)
    assert all(len(chunk) == rounds + info["warm_up_each_trial"] for chunk in later)
    assert bench["stats"]["rounds"] == rounds * trials and isinstance(info["first_run_s"], float)


def test_with_nothing_timed_one_setup_and_one_call_check_the_answer(run_fssgd, pytester, monkeypatch):
    with_plugin(pytester, monkeypatch, call_log=CALL_LOG_PLUGIN)
    monkeypatch.setenv("CALL_LOG", str(pytester.path / "calls.txt"))  # written by every worker, whatever its folder
    result = run_fssgd("--devices", "cpu", "--solvers", "numpy_loop", "-k", "n1000 and not n100000",
                      "--benchmark-disable")
    result.assert_outcomes(passed=1, deselected=1)
    assert [int(line) for line in (pytester.path / "calls.txt").read_text().split()] == [1, 1_000]
