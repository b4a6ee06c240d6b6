"""python -m perf.gate end to end: a gross slowdown fails confirmed, identical versions get ratios, a gate that
could not measure what it was asked ends NOT MEASURED, and a usage error stops before anything is timed."""

import json
import os

import pytest
from gate_fakes import cpu_only, fake_workers_for_every_version

from perf.gate.__main__ import USAGE_ERROR, main
from perf.judge.outcome import FAILED, NOT_MEASURED, PASSED
from perf.judge.rules import FALSE_ALARM_RATE
from perf.measure.environment import onednn_setting


def test_end_to_end_a_gross_injected_slowdown_fails_the_gate_confirmed_and_named(run_gate):
    # A real 4x slowdown of every timed call of the candidate: far beyond any noise, so this checks the wiring
    # (the slowdown reaches the candidate's workers only, the verdict fails the command), not the machine.
    result, report = run_gate("HEAD", ".", "--solvers", "numpy_lean", "--candidate-slowdown", "*=4", "--passes", "3",
                              "--seed", "5")
    assert result.returncode == FAILED, result.stdout + result.stderr
    assert {row["verdict"] for row in report["rows"]} == {"regression"} and report["seed"] == 5
    assert all(row["why"].startswith("confirmed") for row in report["rows"])
    assert "numpy_lean-cpu-n1000" in result.stdout and "gate FAILED: 2 regression" in result.stdout
    assert "with FSSGD_SLOWDOWN=*=4" in report["candidate"] and "HEAD (" in report["baseline"]
    assert "seed 5 (--seed 5 replays it)" in result.stderr
    setting = onednn_setting(os.environ)  # the gate's, which both versions inherit
    assert report["onednn"] == {"baseline": setting, "candidate": setting} and f"oneDNN: baseline {setting}" in result.stdout


def test_end_to_end_identical_versions_compare_every_benchmark_with_a_ratio(run_gate):
    result, report = run_gate(".", ".", "--solvers", "numpy_loop", "--sizes", "1000", "--passes", "3", "--no-confirm")
    # Whether identical versions pass is the noise study's to judge; the exit status must follow the verdicts.
    failing = any(row["verdict"] == "regression" for row in report["rows"])
    assert result.returncode == report["status"] == (FAILED if failing else PASSED), result.stderr
    assert [row["benchmark"] for row in report["rows"]] == ["numpy_loop-cpu-n1000"]  # --sizes: n = 1,000 alone
    # One benchmark: Bonferroni's level over it is the false-alarm rate itself.
    assert all(row["passes"] == 3 and row["coverage"] == pytest.approx(1 - 2 * FALSE_ALARM_RATE)
               for row in report["rows"])
    assert isinstance(report["seed"], int) and len(report["passes"]["numpy_loop-cpu-n1000"]["candidate"]) == 3


def test_end_to_end_a_revision_that_does_not_exist_is_a_usage_error(run_gate):
    result, report = run_gate("no-such-revision")
    assert result.returncode == USAGE_ERROR and report is None and "Traceback" not in result.stderr
    assert "python -m perf.gate: error: 'no-such-revision' is neither a git revision" in result.stderr


@pytest.mark.parametrize("option, message", [
    (("--devices", "cpuu"), "--devices: 'cpuu' is not a list of cpu, gpu"),
    (("--devices", ","), "--devices: ',' is not a list of cpu, gpu"),
    (("--threshold", "0.1"), "--threshold: expected a percentage above 0 with its sign, e.g. 10%, got '0.1'"),
    (("--threshold", "10"), "--threshold: expected a percentage above 0 with its sign, e.g. 10%, got '10'"),
])
def test_an_unknown_device_or_a_threshold_without_its_sign_is_a_usage_error_before_anything_runs(run_gate, option,
                                                                                                message):
    result, report = run_gate("HEAD", ".", "--solvers", "numpy_loop", *option)
    assert result.returncode == USAGE_ERROR and report is None and "Traceback" not in result.stderr
    assert message in result.stderr and "gate: seed" not in result.stderr  # stopped before the first pass


def test_end_to_end_an_unknown_solver_is_a_usage_error_that_names_the_solvers_there_are(run_gate):
    result, report = run_gate("HEAD", ".", "--solvers", "numpy_lop")
    assert result.returncode == USAGE_ERROR and report is None and "Traceback" not in result.stderr
    assert "python -m perf.gate: error: --solvers: no version has numpy_lop (this tree's solvers: numpy_loop, " in (
        result.stderr)


def test_end_to_end_a_device_nothing_runs_on_is_not_measured_and_says_why(run_gate):
    # numpy_loop runs on the CPU only: on any machine, GPU or not, nothing can be timed on gpu.
    result, report = run_gate("HEAD", ".", "--solvers", "numpy_loop", "--devices", "gpu", "--sizes", "1000")
    assert result.returncode == report["status"] == NOT_MEASURED, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == ("gate NOT MEASURED: no benchmark was timed on both versions: nothing "
                                              "measured on gpu (skipped: numpy_loop does not run on gpu)")
    assert [row["verdict"] for row in report["rows"]] == ["skipped"]


def test_end_to_end_a_device_with_nothing_to_gate_passes_only_where_allowed_and_is_still_said(run_gate):
    options = ("HEAD", ".", "--solvers", "numpy_loop", "--devices", "cpu,gpu", "--sizes", "1000", "--passes", "2",
               "--no-confirm")
    result, report = run_gate(*options)
    assert result.returncode == NOT_MEASURED and "gate NOT MEASURED: nothing measured on gpu" in result.stdout
    result, report = run_gate(*options, "--allow-unavailable-devices")
    cpu = next(row for row in report["rows"] if row["benchmark"] == "numpy_loop-cpu-n1000")
    # Two passes unconfirmed can flag identical code now and then: the device's line is checked for either ending.
    allowed = cpu["verdict"] != "regression"
    assert result.returncode == (PASSED if allowed else FAILED), result.stdout + result.stderr
    assert report["ending"].endswith("; nothing measured on gpu (skipped: numpy_loop does not run on gpu)"
                                     + (", allowed by --allow-unavailable-devices" if allowed else "")), report["ending"]
    assert cpu["passes"] == 2


def test_sizes_the_suite_does_not_benchmark_are_a_usage_error_not_a_traceback(run_gate):
    result, report = run_gate("HEAD", ".", "--sizes", "1000,7")
    assert result.returncode == 2 and report is None and "Traceback" not in result.stderr
    assert "--sizes: '1000,7' is not among the suite's sizes (100,1000,10000,100000,1000000)" in result.stderr


# --benchmarks, in-process on fake workers: the selection, and its usage errors before anything is timed -------------


def test_benchmarks_names_exactly_those_benchmarks_not_the_cross_product_of_their_solvers_and_sizes(monkeypatch,
                                                                                                  tmp_path):
    started = fake_workers_for_every_version(monkeypatch, cpu_only("numpy_loop", "numpy_lean"),
                                             lambda solver, label, index: 1e-4)
    report = tmp_path / "gate.json"
    status = main([".", ".", "--benchmarks", "numpy_lean-cpu-n1000,numpy_loop-cpu-n100000", "--passes", "2",
                   "--no-confirm", "--seed", "1", "--json", str(report)])
    rows = json.loads(report.read_text())["rows"]
    assert sorted(row["benchmark"] for row in rows) == ["numpy_lean-cpu-n1000", "numpy_loop-cpu-n100000"]
    assert status == PASSED and all(row["passes"] == 2 for row in rows)
    assert started[0][1] == ["numpy_lean", "numpy_loop"]  # the first pass imports only their solvers


@pytest.mark.parametrize("option, message", [
    (("--benchmarks", "numpy_lean-cpu"), "--benchmarks: 'numpy_lean-cpu' is not a benchmark's name, SOLVER-DEVICE-nN"),
    (("--benchmarks", "numpy_lean-cpu-n7"), "--benchmarks: numpy_lean-cpu-n7 is not on a device of cpu, gpu at one of "
                                            "the suite's sizes"),
    (("--benchmarks", "numpy_lean-tpu-n1000"), "--benchmarks: numpy_lean-tpu-n1000 is not on a device of cpu, gpu"),
    (("--benchmarks", ","), "--benchmarks: ',' names none"),
    (("--benchmarks", "numpy_lean-cpu-n1000", "--sizes", "1000"), "--benchmarks names each benchmark's solver, "
                                                                 "device and size: give it without --solvers"),
])
def test_benchmarks_not_named_as_the_suite_names_them_are_a_usage_error_before_anything_runs(monkeypatch, capsys,
                                                                                           option, message):
    started = fake_workers_for_every_version(monkeypatch, cpu_only("numpy_lean"), lambda solver, label, index: 1e-4)
    with pytest.raises(SystemExit) as stopped:
        main([".", ".", *option])
    assert stopped.value.code == USAGE_ERROR and message in capsys.readouterr().err and started == []


def test_benchmarks_of_a_solver_no_version_has_is_a_usage_error_naming_the_solvers_there_are(monkeypatch, capsys):
    fake_workers_for_every_version(monkeypatch, cpu_only("numpy_lean"), lambda solver, label, index: 1e-4)
    assert main([".", ".", "--benchmarks", "numpy_lop-cpu-n1000", "--passes", "2"]) == USAGE_ERROR
    assert "--solvers: no version has numpy_lop" in capsys.readouterr().err
