"""The regression gate: verdicts on synthetic paired trials, and the pytest plugin end to end; no timing is asserted."""

import json
from pathlib import Path

import numpy as np
import pytest

from perf import estimators, gate
from perf.profiles import PROFILES

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "numpy_loop-cpu"
# Typical paired ratios to numpy_loop-cpu; the reference's own ratio is 1.
RATIOS = {REFERENCE: 1.0, "tf1_feed_dict-cpu": 20.0, "tf1_while_loop-cpu": 0.9, "tf1_while_loop-gpu": 2.0}
SIZES = (1_000, 100_000)
TRIALS = 5
NO_PAIRED_RATIO = "no paired ratio to numpy_loop (figure benchmarks are not gated; a run from an older suite has none)"


def fssgd_info(cpu_model="Test CPU", numpy="2.0.0", profile="quick"):
    return {"profile": profile, "cpu_model": cpu_model, "numpy": numpy, "threads": 1, "nvidia_gpus": [],
            "tensorflow": {"distribution": "tensorflow-cpu", "version": "2.21.0"}}


def run_from_trials(trials_by_id: dict, **info) -> dict:
    """A pytest-benchmark JSON document as perf/measure.py fills it: per `solver-device-nN` id, (its per-trial
    medians, those of the numpy_loop-cpu rounds timed beside them), the latter None for the unpaired reference."""
    benchmarks = []
    for ident, (medians, reference_medians) in trials_by_id.items():
        solver, device, size = ident.split("-")
        extra_info = {"solver": solver, "device": device, "n": int(size[1:]), "iterations": 1_000,
                      "device_name": "Test GPU" if device == "gpu" else info.get("cpu_model", "Test CPU"),
                      "per_iteration_us": estimators.lowest_trial_median(medians) / 1_000 * 1e6,
                      "trial_medians_s": [float(median) for median in medians]}
        if reference_medians is not None:
            ratio, low, high = estimators.median_interval(estimators.paired_ratios(medians, reference_medians))
            extra_info.update(reference=REFERENCE, reference_trial_medians_s=[float(median) for median in reference_medians],
                              ratio_to_reference={"ratio": ratio, "low": low, "high": high})
        benchmarks.append({"name": f"test_fssgd[{ident}]", "fullname": f"perf/test_fssgd.py::test_fssgd[{ident}]",
                           "stats": {"median": float(np.median(medians))}, "extra_info": extra_info})
    return {"machine_info": {"fssgd": fssgd_info(**info)}, "commit_info": {"id": "abc"},
            "datetime": "2025-01-01T00:00:00", "benchmarks": benchmarks}


def synthetic_run(seed, factors=None, noise=0.05, drift=0.25, trials=TRIALS, ratios=RATIOS, **info) -> dict:
    """One run: a common-mode drift for the whole run (a slower or busier machine) multiplying every benchmark and
    the reference timed beside it alike, and lognormal noise per trial on each; factors slow a solver-device down."""
    rng = np.random.default_rng(seed)
    common = rng.uniform(1 - drift, 1 + drift)

    def trial_medians(name, ratio, n):
        return 0.01 * n / 1_000 * ratio * common * (factors or {}).get(name, 1.0) * rng.lognormal(0, noise, trials)

    return run_from_trials({
        f"{name}-n{n}": (trial_medians(name, ratio, n), None if name == REFERENCE else trial_medians(REFERENCE, 1.0, n))
        for name, ratio in ratios.items() for n in SIZES
    }, **info)


def bench_named(run, name):
    return next(bench for bench in run["benchmarks"] if bench["name"] == name)


@pytest.fixture(scope="module")
def baseline():
    return gate.make_baseline([synthetic_run(seed=0)])


def verdicts_of(baseline, run):
    return gate.compare(baseline, gate.measure(run))


def names(rows):
    return sorted(row["name"] for row in rows)


def test_same_distribution_never_fails_across_seeds(baseline):
    for seed in range(1, 201):
        verdicts = verdicts_of(baseline, synthetic_run(seed))
        assert not gate.failed(verdicts), (seed, verdicts)
        assert not verdicts["improvement"], (seed, verdicts["improvement"])
        assert len(verdicts["pass"]) + len(verdicts["inconclusive"]) == 6, seed


def test_the_ratio_interval_and_trials_come_from_extra_info():
    run = run_from_trials({"numpy_loop-cpu-n1000": ([1.0] * 5, None),
                           "tf1_while_loop-cpu-n1000": ([1.8, 2.0, 2.2, 2.4, 9.0], [1.0, 1.0, 1.1, 1.2, 1.0])})
    paired = bench_named(run, "test_fssgd[tf1_while_loop-cpu-n1000]")["extra_info"]["ratio_to_reference"]
    measured = gate.measure(run)
    assert measured["test_fssgd[tf1_while_loop-cpu-n1000]"] == {
        **paired, "trials": 5, "median_s": 2.2, "reference": "test_fssgd[numpy_loop-cpu-n1000]"}
    reference = measured["test_fssgd[numpy_loop-cpu-n1000]"]
    assert reference["is_reference"] and (reference["ratio"], reference["low"], reference["high"]) == (1.0, 1.0, 1.0)


def test_a_slowdown_fails_and_is_named(baseline):
    for seed in range(1, 21):
        verdicts = verdicts_of(baseline, synthetic_run(seed, factors={"tf1_while_loop-cpu": 1.5}))
        assert names(verdicts["regression"]) == sorted(["test_fssgd[tf1_while_loop-cpu-n1000]",
                                                        "test_fssgd[tf1_while_loop-cpu-n100000]"]), seed
    report = gate.format_report(verdicts, "baseline.json")
    assert "gate FAILED: 2 regression" in report
    failing = [line for line in report.splitlines() if "REGRESSION" in line]
    assert len(failing) == 2 and all("tf1_while_loop-cpu" in line and "+20%" in line for line in failing)


def test_a_slower_reference_reads_as_improvements_not_regressions(baseline):
    verdicts = verdicts_of(baseline, synthetic_run(1, factors={"numpy_loop-cpu": 1.5}))
    assert not gate.failed(verdicts)
    assert len(verdicts["improvement"]) == 6


def test_a_speedup_is_an_improvement_that_passes(baseline):
    verdicts = verdicts_of(baseline, synthetic_run(3, factors={"tf1_feed_dict-cpu": 1 / 1.5}))
    assert names(verdicts["improvement"]) == sorted(["test_fssgd[tf1_feed_dict-cpu-n1000]",
                                                     "test_fssgd[tf1_feed_dict-cpu-n100000]"])
    assert not gate.failed(verdicts)
    assert "refresh the baseline" in gate.format_report(verdicts, "baseline.json")


def test_slower_but_too_noisy_is_inconclusive():
    steady = {"numpy_loop-cpu-n1000": ([1.0] * 5, None), "tf1_while_loop-cpu-n1000": ([2.0] * 5, [1.0] * 5)}
    baseline = gate.make_baseline([run_from_trials(steady)])
    noisy = {"numpy_loop-cpu-n1000": ([1.0] * 5, None),
             "tf1_while_loop-cpu-n1000": ([1.6, 1.9, 3.0, 3.1, 3.2], [1.0] * 5)}
    verdicts = verdicts_of(baseline, run_from_trials(noisy))
    assert names(verdicts["inconclusive"]) == ["test_fssgd[tf1_while_loop-cpu-n1000]"]
    assert not gate.failed(verdicts)
    assert "not significantly" in gate.format_report(verdicts, "baseline.json")


def test_a_threshold_in_the_baseline_overrides_the_default(baseline):
    edited = json.loads(json.dumps(baseline))
    edited["benchmarks"]["test_fssgd[tf1_while_loop-cpu-n1000]"]["threshold"] = 0.8
    verdicts = verdicts_of(edited, synthetic_run(1, factors={"tf1_while_loop-cpu": 1.5}))
    assert names(verdicts["regression"]) == ["test_fssgd[tf1_while_loop-cpu-n100000]"]


def test_gpu_benchmarks_use_the_cpu_reference_and_key_the_gpu_model(baseline):
    run = synthetic_run(1, factors={"tf1_while_loop-gpu": 1.5})
    assert gate.run_key(run)["gpu_model"] == "Test GPU"
    assert gate.measure(run)["test_fssgd[tf1_while_loop-gpu-n1000]"]["reference"] == "test_fssgd[numpy_loop-cpu-n1000]"
    assert "test_fssgd[tf1_while_loop-gpu-n1000]" in names(verdicts_of(baseline, run)["regression"])
    cpu_only = synthetic_run(1, ratios={name: ratio for name, ratio in RATIOS.items() if "gpu" not in name})
    assert gate.run_key(cpu_only)["gpu_model"] is None


def test_new_and_missing_benchmarks_and_ratios_that_need_no_reference_benchmark(baseline):
    without_feed_dict = {name: ratio for name, ratio in RATIOS.items() if "feed_dict" not in name}
    run = synthetic_run(1, ratios={**without_feed_dict, "tf2_function-cpu": 0.5})
    del run["benchmarks"][0]  # numpy_loop-cpu-n1000, the reference's own benchmark at n=1000
    verdicts = verdicts_of(baseline, run)
    assert names(verdicts["new"]) == sorted(["test_fssgd[tf2_function-cpu-n1000]", "test_fssgd[tf2_function-cpu-n100000]"])
    assert names(verdicts["missing"]) == sorted(["test_fssgd[numpy_loop-cpu-n1000]", "test_fssgd[tf1_feed_dict-cpu-n1000]",
                                                 "test_fssgd[tf1_feed_dict-cpu-n100000]"])
    assert gate.failed(verdicts)
    # Its ratio was paired with reference rounds timed beside it, not with the reference's own benchmark.
    assert "test_fssgd[tf1_while_loop-cpu-n1000]" in names(verdicts["pass"])


def test_a_baseline_for_another_machine_is_not_compared(tmp_path, baseline):
    path = tmp_path / "other.json"
    path.write_text(gate.dump_baseline(baseline))
    with pytest.raises(gate.GateError, match="another environment") as raised:
        gate.gate(synthetic_run(1, cpu_model="Other CPU", numpy="2.1.0"), path)
    assert "cpu_model: baseline 'Test CPU', run 'Other CPU'" in str(raised.value)
    assert "numpy: baseline '2.0.0', run '2.1.0'" in str(raised.value)
    with pytest.raises(gate.GateError, match="no baseline for this run's environment") as raised:
        gate.gate(synthetic_run(1, cpu_model="Other CPU"), tmp_path)
    assert "closest baseline" in str(raised.value) and "--gate-write-baseline" in str(raised.value)


def test_written_baseline_is_sorted_indented_json_and_keeps_hand_edited_thresholds(tmp_path):
    gate.write_baseline([synthetic_run(0)], tmp_path)
    (path,) = tmp_path.glob("*.json")
    text = path.read_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert "Test_CPU" in path.name and "quick" in path.name and "2.21.0" in path.name
    edited = json.loads(text)
    edited["default_threshold"] = 0.3
    edited["benchmarks"]["test_fssgd[tf1_feed_dict-cpu-n1000]"]["threshold"] = 0.5
    path.write_text(json.dumps(edited))
    gate.write_baseline([synthetic_run(1), synthetic_run(2), synthetic_run(3)], tmp_path)
    refreshed = json.loads(path.read_text())
    assert refreshed["default_threshold"] == 0.3
    assert refreshed["benchmarks"]["test_fssgd[tf1_feed_dict-cpu-n1000]"]["threshold"] == 0.5
    assert refreshed["benchmarks"]["test_fssgd[tf1_feed_dict-cpu-n100000]"]["runs"] == 3


def test_runs_of_different_environments_are_not_pooled():
    with pytest.raises(gate.GateError, match="profile: baseline 'quick', run 'full'"):
        gate.make_baseline([synthetic_run(0), synthetic_run(1, profile="full")])


def test_a_benchmark_without_a_paired_ratio_is_reported_with_the_problem(baseline):
    run = synthetic_run(1)
    del bench_named(run, "test_fssgd[tf1_feed_dict-cpu-n1000]")["extra_info"]["ratio_to_reference"]
    assert gate.measure(run)["test_fssgd[tf1_feed_dict-cpu-n1000]"]["problem"] == NO_PAIRED_RATIO
    verdicts = verdicts_of(baseline, run)
    assert names(verdicts["inconclusive"]) == ["test_fssgd[tf1_feed_dict-cpu-n1000]"]
    assert not gate.failed(verdicts)
    assert f"({NO_PAIRED_RATIO})" in gate.format_report(verdicts, "baseline.json")


def test_a_run_from_an_older_suite_cannot_be_gated(tmp_path, capsys, baseline):
    run = synthetic_run(1)
    for bench in run["benchmarks"]:
        bench["extra_info"].pop("ratio_to_reference", None)
    with pytest.raises(gate.GateError, match="older suite"):
        gate.measure(run)
    run_path, baseline_path = tmp_path / "run.json", tmp_path / "baseline.json"
    run_path.write_text(json.dumps(run))
    baseline_path.write_text(gate.dump_baseline(baseline))
    assert gate.main([str(run_path), "--baseline", str(baseline_path)]) == gate.CANNOT_GATE_CLI
    assert gate.main([str(run_path), "--baseline", str(tmp_path / "new"), "--write"]) == gate.CANNOT_GATE_CLI
    assert "older suite" in capsys.readouterr().err and not (tmp_path / "new").exists()


def test_figure_benchmarks_are_left_out(baseline):
    run = synthetic_run(1)
    figure = run_from_trials({"tf1_while_loop-cpu-n1000": ([0.5] * 5, None)})["benchmarks"][0]
    figure["name"] = "test_iterations[tf1_while_loop-cpu-n1000-k10]"
    figure["extra_info"]["figure"] = "iteration_sweep"
    run["benchmarks"].append(figure)
    assert figure["name"] not in gate.measure(run)
    verdicts = verdicts_of(baseline, run)
    assert not verdicts["new"] and not gate.failed(verdicts)


def test_cli_reports_a_corrupted_baseline_without_a_traceback(tmp_path, capsys):
    run_path, baseline_path = tmp_path / "run.json", tmp_path / "baseline.json"
    run_path.write_text(json.dumps(synthetic_run(1)))
    baseline_path.write_text('{"key": {"profile": "quick"')
    assert gate.main([str(run_path), "--baseline", str(baseline_path)]) == gate.CANNOT_GATE_CLI
    error = capsys.readouterr().err
    assert str(baseline_path) in error and "not valid JSON" in error and "Traceback" not in error


@pytest.mark.parametrize("content, message", [
    ("[]", "is not a JSON object"),
    ('{"key": {}}', "no 'benchmarks' object"),
    ('{"key": {}, "benchmarks": {"test_fssgd[x-cpu-n1]": {"ratio": "fast"}}}', "needs numbers for ratio"),
])
def test_a_baseline_of_the_wrong_shape_is_named(tmp_path, content, message):
    path = tmp_path / "baseline.json"
    path.write_text(content)
    with pytest.raises(gate.GateError, match=message) as raised:
        gate.gate(synthetic_run(1), path)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("content, message", [
    ('{"machine_info": {}, "benchmarks": [', "not valid JSON, truncated?"),
    ('{"benchmarks": []}', "not a pytest-benchmark saved run"),
])
def test_cli_names_an_unusable_run_through_the_one_reader(tmp_path, capsys, content, message):
    run_path = tmp_path / "run.json"
    run_path.write_text(content)
    assert gate.main([str(run_path), "--baseline", str(tmp_path)]) == gate.CANNOT_GATE_CLI
    error = capsys.readouterr().err
    assert f"gate: cannot gate: run {run_path}: {message}" in error and "Traceback" not in error


def test_cli_writes_then_gates(tmp_path, capsys):
    run_path, slow_path = tmp_path / "run.json", tmp_path / "slow.json"
    run_path.write_text(json.dumps(synthetic_run(0)))
    slow_path.write_text(json.dumps(synthetic_run(1, factors={"tf1_feed_dict-cpu": 1.5})))
    assert gate.main([str(run_path), "--baseline", str(tmp_path), "--write"]) == 0
    assert gate.main([str(run_path), "--baseline", str(tmp_path)]) == 0
    assert gate.main([str(slow_path), "--baseline", str(tmp_path)]) == gate.FAILED
    assert "REGRESSION   " in capsys.readouterr().out


# ---------------------------------------------------------------------------- end to end, with pytester

# Fixed per-trial medians, paired and summarized as perf/measure.py does, behind a short sleep that gives
# pytest-benchmark its rounds: the verdicts follow from the gate's logic, never from this machine's load.
BENCHMARKS = """
    import os, time
    import pytest
    from perf import estimators

    SOLVERS = os.environ.get("GATE_TEST_SOLVERS", "numpy_loop,tf1_while_loop").split(",")
    REFERENCE_S = [0.010, 0.011, 0.009, 0.010, 0.012]
    SPREAD = [1.0, 1.03, 0.98, 1.01, 0.99]

    @pytest.mark.parametrize("solver", SOLVERS, ids=[f"{name}-cpu-n1000" for name in SOLVERS])
    def test_fssgd(benchmark, solver):
        benchmark.pedantic(time.sleep, args=(0.001,), rounds=3)
        slowdown = 1.5 if solver == os.environ.get("GATE_TEST_SLOW") else 1
        medians = [2 * slowdown * reference * spread for reference, spread in zip(REFERENCE_S, SPREAD)]
        benchmark.extra_info.update(solver=solver, device="cpu", n=1000, iterations=1000, trial_medians_s=medians)
        if solver != "numpy_loop":
            ratio, low, high = estimators.median_interval(estimators.paired_ratios(medians, REFERENCE_S))
            benchmark.extra_info.update(reference="numpy_loop-cpu", reference_trial_medians_s=REFERENCE_S,
                                        ratio_to_reference={"ratio": ratio, "low": low, "high": high})
"""
CONFTEST = """
    import os

    def pytest_benchmark_update_machine_info(config, machine_info):
        machine_info["fssgd"] = {"profile": "quick", "cpu_model": os.environ.get("GATE_TEST_CPU", "Test CPU"),
                                 "numpy": "2.0.0", "threads": 1, "nvidia_gpus": [], "tensorflow": None}
"""


@pytest.fixture
def bench_dir(pytester, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # pytest-benchmark would not time inside a worker
    for name in ("GATE_TEST_SOLVERS", "GATE_TEST_SLOW", "GATE_TEST_CPU"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_bench=BENCHMARKS)
    return pytester


def run_gated(pytester, *options):
    return pytester.runpytest_inprocess("-p", "perf.gate", "-p", "no:xdist", "-p", "no:cacheprovider", *options)


def written_baseline(pytester):
    result = run_gated(pytester, "--gate-write-baseline", f"--gate={pytester.path / 'baselines'}")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*gate: wrote baseline*baselines*quick_numpy-only_numpy-2.0.0_threads1_Test_CPU_no-gpu.json*"])
    return pytester.path / "baselines"


def test_e2e_missing_baseline_fails_and_says_how_to_create_it(bench_dir):
    result = run_gated(bench_dir, f"--gate={bench_dir.path / 'baselines'}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*gate: cannot gate: no baseline for this run's environment*",
                                 "*create it on this machine with `pytest perf --gate-write-baseline`*"])
    assert "Traceback" not in result.stdout.str()


def test_e2e_same_code_passes_and_an_injected_slowdown_fails_naming_it(bench_dir, monkeypatch):
    baselines = written_baseline(bench_dir)
    result = run_gated(bench_dir, f"--gate={baselines}")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*gate passed: 1 pass*"])
    monkeypatch.setenv("GATE_TEST_SLOW", "tf1_while_loop")
    result = run_gated(bench_dir, f"--gate={baselines}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*test_fssgd?tf1_while_loop-cpu-n1000?*REGRESSION*+20%*", "*gate FAILED: 1 regression*"])


def test_e2e_baseline_of_another_device_is_not_compared(bench_dir, monkeypatch):
    baselines = written_baseline(bench_dir)
    (baseline_file,) = baselines.glob("*.json")
    monkeypatch.setenv("GATE_TEST_CPU", "Other CPU")
    result = run_gated(bench_dir, f"--gate={baseline_file}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*made for another environment; not comparing*",
                                 "*cpu_model: baseline 'Test CPU', run 'Other CPU'*"])


def test_e2e_corrupted_baseline_is_named_without_a_traceback(bench_dir):
    baselines = written_baseline(bench_dir)
    (baseline_file,) = baselines.glob("*.json")
    baseline_file.write_text(baseline_file.read_text()[:40])
    result = run_gated(bench_dir, f"--gate={baselines}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines([f"*gate: cannot gate: baseline {baseline_file} is not valid JSON*"])
    assert "Traceback" not in result.stdout.str()


def test_e2e_added_benchmark_passes_and_removed_one_fails(bench_dir, monkeypatch):
    baselines = written_baseline(bench_dir)
    monkeypatch.setenv("GATE_TEST_SOLVERS", "numpy_loop,tf1_while_loop,tf2_function")
    result = run_gated(bench_dir, f"--gate={baselines}")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*NEW*test_fssgd?tf2_function-cpu-n1000?: not in the baseline*"])
    monkeypatch.setenv("GATE_TEST_SOLVERS", "numpy_loop")
    result = run_gated(bench_dir, f"--gate={baselines}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*MISSING*test_fssgd?tf1_while_loop-cpu-n1000?: in the baseline but not in this run*",
                                 "*gate FAILED: 1 missing*"])


def test_e2e_json_and_saved_runs_are_gated_by_the_cli(bench_dir):
    baselines = written_baseline(bench_dir)
    result = run_gated(bench_dir, f"--gate={baselines}", "--benchmark-json=run.json", "--benchmark-autosave",
                       f"--benchmark-storage=file://{bench_dir.path / 'saved'}")
    assert result.ret == 0, result.stdout.str()
    (saved,) = (bench_dir.path / "saved").rglob("*.json")
    for run_path in (bench_dir.path / "run.json", saved):
        assert gate.main([str(run_path), "--baseline", str(baselines)]) == 0


def test_e2e_the_real_suite_writes_paired_ratios_that_the_cli_gates(run_suite, tmp_path):
    baselines, run_path = tmp_path / "baselines", tmp_path / "run.json"
    result = run_suite(str(ROOT / "perf" / "test_fssgd.py"), "--solvers", "numpy_loop,numpy_lean", "--devices", "cpu",
                       "--gate-write-baseline", f"--gate={baselines}", f"--benchmark-json={run_path}")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*gate: wrote baseline*(4 benchmarks from 1 run(s))*"])
    (path,) = baselines.glob("*.json")
    entries = json.loads(path.read_text())["benchmarks"]
    for n in SIZES:
        lean = entries[f"test_fssgd[numpy_lean-cpu-n{n}]"]
        assert lean["low"] <= lean["ratio"] <= lean["high"] and lean["trials"] == PROFILES["quick"].trials
        assert lean["reference"] == f"test_fssgd[numpy_loop-cpu-n{n}]"
        assert entries[f"test_fssgd[numpy_loop-cpu-n{n}]"]["is_reference"]
    # The run it was made from has the baseline's own ratios: a pass by logic alone, whatever the timings.
    assert gate.main([str(run_path), "--baseline", str(baselines)]) == 0
