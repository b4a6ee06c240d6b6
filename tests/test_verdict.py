"""The gate's rule (perf/gate/verdict.py): verdicts on made-up passes."""

import math

import pytest

from perf.gate.verdict import Row, ending, judged, ruled_out
from perf.judge.outcome import FAILED, NOT_MEASURED, PASSED


def test_a_verdict_needs_an_interval_clear_of_one_and_a_ratio_past_half_the_threshold():
    def verdict_of(*ratios):
        return judged([math.log(ratio) for ratio in ratios], 0.10, 0.05 / 36)

    slower = verdict_of(1.30, 1.25, 1.22, 1.27, 1.26, 1.24, 1.28, 1.25)
    assert slower.verdict == "regression" and slower.passes == 8 and slower.low > 1
    assert slower.coverage == pytest.approx(1 - 2 * 0.05 / 36)
    assert verdict_of(0.70, 0.80, 0.75, 0.78, 0.77, 0.76, 0.79, 0.74).verdict == "improvement"
    # Significantly slower, but by less than half the threshold: a 10% slowdown is ruled out.
    assert verdict_of(1.02, 1.03, 1.02, 1.025, 1.03, 1.02, 1.025, 1.03).verdict == "pass"
    noisy = verdict_of(1.30, 0.80, 1.25, 0.95, 1.10, 0.90, 1.20, 1.00)
    assert noisy.verdict == "inconclusive" and noisy.detectable > 1.10 and "could have detected" in noisy.why


def test_a_threshold_slowdown_is_ruled_out_only_when_the_passes_agree():
    assert ruled_out([math.log(ratio) for ratio in (1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01)], 0.10)
    assert not ruled_out([math.log(ratio) for ratio in (1.0, 1.2, 0.9, 1.1, 0.95, 1.15, 1.0, 1.05)], 0.10)
    assert not ruled_out([0.0], 0.10)


def test_a_saved_row_holds_only_the_fields_that_hold_something_its_confirmation_alike():
    from perf.gate.verdict import Row

    screened = Row("regression", "numpy_lean-cpu-n1000", ratio=1.3, passes=5)
    saved = Row("regression", "numpy_lean-cpu-n1000", why="confirmed", ratio=1.2, passes=6, screening=screened).saved()
    assert saved["screening"] == {"verdict": "regression", "benchmark": "numpy_lean-cpu-n1000", "passes": 5,
                                  "ratio": 1.3, "steps": 0, "calls": 1}
    assert "low" not in saved and "confirmation" not in saved and saved["why"] == "confirmed"


# How a gate run ends --------------------------------------------------------------------------------------------

DEVICE_OF = {"tf1_while_loop-cpu-n1000": "cpu", "tf1_while_loop-gpu-n1000": "gpu"}
CPU_PASS = Row("pass", "tf1_while_loop-cpu-n1000", passes=5, ratio=1.0, low=0.98, high=1.02)
GPU_SKIPPED = Row("skipped", "tf1_while_loop-gpu-n1000", why="skipped: no GPU visible to TensorFlow")


def test_a_gate_that_measured_every_device_it_was_asked_for_passes_counting_each_verdict_apart():
    new = Row("new", "tf1_while_loop-gpu-n1000", why="new")
    assert ending([CPU_PASS, new], DEVICE_OF, ["cpu"], False) == (PASSED, "gate passed: 1 pass, 1 new")


def test_a_device_with_nothing_measured_is_not_measured_and_says_why_unless_allowed():
    status, line = ending([CPU_PASS, GPU_SKIPPED], DEVICE_OF, ["cpu", "gpu"], False)
    assert status == NOT_MEASURED
    assert line == ("gate NOT MEASURED: nothing measured on gpu (skipped: no GPU visible to TensorFlow); 1 pass, "
                    "1 skipped (--allow-unavailable-devices passes a device with nothing to gate)")
    status, line = ending([CPU_PASS, GPU_SKIPPED], DEVICE_OF, ["cpu", "gpu"], True)
    assert status == PASSED and line == ("gate passed: 1 pass, 1 skipped; nothing measured on gpu (skipped: no GPU "
                                         "visible to TensorFlow), allowed by --allow-unavailable-devices")


def test_a_gate_that_measured_nothing_is_never_a_pass_even_where_unavailable_devices_are_allowed():
    for rows in ([GPU_SKIPPED], [Row("new", "tf1_while_loop-cpu-n1000", why="new")]):
        status, line = ending(rows, DEVICE_OF, sorted({DEVICE_OF[row.benchmark] for row in rows}), True)
        assert status == NOT_MEASURED and line.startswith("gate NOT MEASURED: no benchmark was timed on both versions")


def test_a_failure_fails_and_still_names_the_device_it_could_not_measure():
    regression = Row("regression", "tf1_while_loop-cpu-n1000", passes=5, ratio=1.5, low=1.4, high=1.6)
    status, line = ending([regression, GPU_SKIPPED], DEVICE_OF, ["cpu", "gpu"], False)
    assert status == FAILED and line == ("gate FAILED: 1 regression, 1 skipped; nothing measured on gpu (skipped: no "
                                         "GPU visible to TensorFlow)")
    assert ending([Row("inconclusive", "tf1_while_loop-cpu-n1000", passes=5)], DEVICE_OF, ["cpu"], False)[0] == PASSED
