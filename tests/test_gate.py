"""python -m perf.gate end to end: a gross slowdown fails confirmed, identical versions get ratios, a
revision that does not exist cannot be gated."""

import os

from perf.gate.__main__ import CANNOT_GATE, FAILED
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
    assert result.returncode in (0, FAILED), result.stderr
    assert (result.returncode == FAILED) == any(row["verdict"] == "regression" for row in report["rows"])
    assert [row["benchmark"] for row in report["rows"]] == ["numpy_loop-cpu-n1000"]  # --sizes: n = 1,000 alone
    assert all(row["passes"] == 3 and row["low"] <= row["ratio"] <= row["high"] for row in report["rows"])
    assert isinstance(report["seed"], int) and len(report["passes"]["numpy_loop-cpu-n1000"]["candidate"]) == 3


def test_end_to_end_a_revision_that_does_not_exist_cannot_be_gated(run_gate):
    result, report = run_gate("no-such-revision")
    assert result.returncode == CANNOT_GATE and report is None
    assert "gate: cannot gate: 'no-such-revision' is neither a git revision" in result.stderr


def test_sizes_outside_the_profile_are_a_usage_error_not_a_traceback(run_gate):
    result, report = run_gate("HEAD", ".", "--sizes", "1000,7")
    assert result.returncode == 2 and report is None and "Traceback" not in result.stderr
    assert "--sizes: '1000,7' is not among the quick profile's sizes (1000,100000)" in result.stderr
