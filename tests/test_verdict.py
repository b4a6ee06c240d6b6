"""The gate's rule (perf/gate/verdict.py): verdicts on made-up passes."""

import math

import pytest

from perf.gate.verdict import judged, ruled_out


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
