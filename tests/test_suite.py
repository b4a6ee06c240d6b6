"""The benchmark suite end to end: ids, skips that say why, options, xdist, storage, and TensorFlow absent."""

import json
import os

import pytest

import solvers
from perf import storage
from perf.measure import environment
from perf.measure.profiles import PROFILES
from perf.report.tables import number


def test_ids_read_solver_device_size(run_perf):
    result = run_perf("--collect-only", "-q", "--profile", "full")
    result.stdout.fnmatch_lines(["*test_fssgd[[]numpy_loop-cpu-n100]", "*test_fssgd[[]tf1_while_loop-gpu-n1000000]"])


@pytest.mark.tensorflow
def test_gpu_and_cpu_only_combinations_skip_with_a_reason(run_perf):
    result = run_perf("--benchmark-disable", "-rs", "--solvers", "numpy_loop,tf1_while_loop", "--profile", "quick")
    result.assert_outcomes(passed=4, skipped=4)
    result.stdout.fnmatch_lines(["*SKIPPED [[]2[]]*numpy_loop is cpu-only", "*SKIPPED [[]2[]]*no GPU visible to TensorFlow"])


def test_without_tensorflow_its_benchmarks_skip_and_numpy_still_runs(run_perf, pytester, monkeypatch):
    # A plugin loaded before anything else makes `import tensorflow` fail, as in the numpy-only environment.
    pytester.makepyfile(block_tensorflow="import sys\nsys.modules['tensorflow'] = None\n")
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    result = run_perf("-p", "block_tensorflow", "--benchmark-disable", "-rs", "--devices", "cpu")
    sizes = len(PROFILES["quick"].sizes)
    # The solvers that need no TensorFlow still run (numba's too, where the numba extra is installed).
    runnable = sum("tensorflow" not in solver.needs and not solver.unavailable_reason("cpu")
                   for solver in solvers.REGISTRY.values()) * sizes
    needing_tensorflow = sum("tensorflow" in solver.needs for solver in solvers.REGISTRY.values()) * sizes
    result.assert_outcomes(passed=runnable, skipped=len(solvers.REGISTRY) * sizes - runnable)
    result.stdout.fnmatch_lines(
        [f"*SKIPPED [[]{needing_tensorflow}[]]*tensorflow is not installed*install the tf-cpu or tf-gpu extra"]
    )


def test_a_missing_peer_skips_its_solvers_with_the_install_hint(run_perf, pytester, monkeypatch):
    pytester.makepyfile(block_numba="import sys\nsys.modules['numba'] = None\n")
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    result = run_perf("-p", "block_numba", "--benchmark-disable", "-rs", "--solvers", "numba_fused,numpy_lean",
                      "--devices", "cpu")
    result.assert_outcomes(passed=2, skipped=2)
    result.stdout.fnmatch_lines(["*SKIPPED [[]2[]]*numba is not installed*install the numba extra*"])


@pytest.mark.parametrize(
    "option, message",
    [
        (["--profile", "nope"], "*--profile: invalid choice: 'nope'*"),
        (["--solvers", "numpy_loop,nope"], "*--solvers: unknown nope; choose from numpy_loop, tf1_feed_dict*"),
        (["--devices", "tpu"], "*--devices: unknown tpu; choose from cpu, gpu*"),
        (["--cpu-affinity", "4096"], "*argument --cpu-affinity: CPU 4096 is not one this process may use; it may use *"),
        (["--cpu-affinity", "one"], "*argument --cpu-affinity: 'one' is not a CPU list such as 1, 0,1 or 0-1"),
    ],
)
def test_unknown_names_are_usage_errors_that_list_the_valid_ones(run_perf, option, message):
    result = run_perf("--collect-only", *option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


THREADS_ALLOWED = "expected 0 (TensorFlow's defaults) or a thread count from 1 to 1024"


@pytest.mark.parametrize(
    "option, message",
    [
        # TensorFlow aborts the interpreter on a negative count, and hangs starting 100,000 threads.
        (["--threads", "-3"], f"*argument --threads: {THREADS_ALLOWED}, got '-3'"),
        (["--threads", "100000"], f"*argument --threads: {THREADS_ALLOWED}, got '100000'"),
        (["--threads", "two"], f"*argument --threads: {THREADS_ALLOWED}, got 'two'"),
        (["--solvers", ","], "*--solvers: ',' names none; choose from numpy_loop, *"),
        (["--devices", ","], "*--devices: ',' names none; choose from cpu, gpu"),
        (["--solvers", "numpy_loop,numpy_lean", "--devices", "gpu"],
         "*--solvers with --devices gpu: no benchmark left (numpy_loop runs on cpu; numpy_lean runs on cpu)"),
    ],
)
def test_options_that_tensorflow_cannot_take_or_that_select_nothing_are_usage_errors(run_perf, option, message):
    result = run_perf("--benchmark-disable", *option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "passed" not in result.stdout.str()


def test_benchmarks_under_xdist_are_refused_not_silently_untimed(run_perf):
    result = run_perf("-n", "2", "--solvers", "numpy_loop")
    assert result.ret != pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*benchmarks cannot be timed under pytest-xdist*run `pytest perf/` without -n*"])


def test_under_xdist_answers_can_still_be_checked_with_benchmark_disable(run_perf):
    result = run_perf("-n", "2", "--solvers", "numpy_loop", "--devices", "cpu", "--benchmark-disable")
    result.assert_outcomes(passed=2)


def test_saved_runs_go_to_a_folder_per_environment_and_record_it(run_perf, pytester):
    result = run_perf("--solvers", "numpy_loop,numpy_lean", "--devices", "cpu", "--benchmark-autosave",
                      "--benchmark-min-time=0")
    result.assert_outcomes(passed=4)
    (saved,) = (pytester.path / ".benchmarks" / storage.storage_key()).glob("*/0001_*.json")
    run = json.loads(saved.read_text())
    assert run["machine_info"]["fssgd"]["profile"] == "quick"
    # The seed program's setting by default: TensorFlow's own thread pools, recorded as such.
    assert run["machine_info"]["fssgd"]["threads"] == 0
    assert run["machine_info"]["fssgd"]["threads_setting"] == "TF default"
    assert run["machine_info"]["fssgd"]["cpus_available"] >= 1
    assert run["machine_info"]["fssgd"]["numpy"]
    assert run["machine_info"]["fssgd"]["onednn_setting"] == environment.onednn_setting(os.environ)
    bench = {b["name"]: b for b in run["benchmarks"]}["test_fssgd[numpy_loop-cpu-n1000]"]
    assert bench["group"] == "n=1000"
    info = bench["extra_info"]
    assert (info["solver"], info["device"], info["n"], info["iterations"], info["dtype"]) == ("numpy_loop", "cpu", 1000, 1000, "float64")
    # Every round is in stats; the reference's per-step figure pools its trials with those timed beside numpy_lean.
    assert info["trials"] == PROFILES["quick"].trials == len(info["trial_medians_s"])
    assert bench["stats"]["rounds"] == info["trials"] * info["rounds_per_trial"]
    # numpy_loop's own trials and those timed beside numpy_lean.
    assert info["per_iteration_us"] == info["reference_per_iteration_us"]
    assert info["reference_trials_pooled"] == 2 * PROFILES["quick"].trials  # the run_perf fixture's --budget 0
    assert info["setup_s"] >= 0 and info["device_name"] and info["numpy"]
    # Each trial's setup and warm-up, the first trial's the figures above.
    assert len(info["trial_setup_s"]) == info["trials"] and all(seconds > 0 for seconds in info["trial_setup_s"])
    assert info["trial_setup_s"][0] == pytest.approx(info["setup_s"] + (info["first_run_s"] or 0))
    # Each trial in a worker process of its own, the same for every benchmark: trial i in worker i.
    assert len(set(info["trial_processes"])) == info["trials"]
    assert "ratio_to_reference" not in info  # numpy_loop is the reference itself
    paired = {b["name"]: b for b in run["benchmarks"]}["test_fssgd[numpy_lean-cpu-n1000]"]["extra_info"]
    ratio = paired["ratio_to_reference"]
    assert paired["reference"] == "numpy_loop-cpu" and len(paired["reference_trial_medians_s"]) == paired["trials"]
    assert paired["trial_processes"] == info["trial_processes"]
    assert ratio["low"] <= ratio["ratio"] <= ratio["high"]
    assert paired["per_iteration_us"] == pytest.approx(ratio["ratio"] * info["per_iteration_us"])
    # The same figures, printed after pytest-benchmark's tables.
    output = result.stdout.str()
    assert output.index("fssgd-bench: the answer for this run") > output.index("benchmark 'n=1000'")
    result.stdout.fnmatch_lines([
        "Per step, profile quick, *NumPy *, threads: TF default*. × numpy_loop: the median of the trials' paired ratios*",
        f"numpy_lean * {number(paired['per_iteration_us'])} *{number(ratio['ratio'])} (* to *)*",
    ])


def test_a_pinned_run_records_its_thread_count(run_perf, pytester):
    result = run_perf("--solvers", "numpy_loop", "--devices", "cpu", "--benchmark-json=run.json", "--threads", "1")
    result.assert_outcomes(passed=2)
    fssgd = json.loads((pytester.path / "run.json").read_text())["machine_info"]["fssgd"]
    assert (fssgd["threads"], fssgd["threads_setting"]) == (1, "pinned to 1")
    result.stdout.fnmatch_lines(["Per step, *threads: pinned to 1[.,]*"])


def test_runs_that_time_nothing_print_no_summary(run_perf):
    result = run_perf("--solvers", "numpy_loop,numpy_lean", "--devices", "cpu", "--benchmark-disable")
    result.assert_outcomes(passed=4)
    assert "the answer for this run" not in result.stdout.str()
