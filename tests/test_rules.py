"""Both rules (perf/judge/rules.py) on made-up figures: the gate's on passes, the comparison's on two runs' trials."""

import math

import pytest

from perf.judge.outcome import DEFAULT_THRESHOLD
from perf.judge.rules import Verdict, change_verdict, judged, ruled_out
from perf.judge.statistics import shift_interval

# The gate's rule -------------------------------------------------------------------------------------------------


def test_a_verdict_needs_an_interval_clear_of_one_and_a_ratio_past_half_the_threshold():
    def judged_on(*ratios):
        return judged([math.log(ratio) for ratio in ratios], 0.10, 0.05 / 36)

    slower = judged_on(1.30, 1.25, 1.22, 1.27, 1.26, 1.24, 1.28, 1.25)
    assert slower.verdict == "regression" and slower.passes == 8 and slower.low > 1
    assert slower.coverage == pytest.approx(1 - 2 * 0.05 / 36)
    assert judged_on(0.70, 0.80, 0.75, 0.78, 0.77, 0.76, 0.79, 0.74).verdict == "improvement"
    # Significantly slower, but by less than half the threshold: a 10% slowdown is ruled out.
    assert judged_on(1.02, 1.03, 1.02, 1.025, 1.03, 1.02, 1.025, 1.03).verdict == "clear"
    noisy = judged_on(1.30, 0.80, 1.25, 0.95, 1.10, 0.90, 1.20, 1.00)
    assert noisy.verdict == "inconclusive" and noisy.detectable > 1.10 and "could have detected" in noisy.why


def test_a_threshold_slowdown_is_ruled_out_only_when_the_passes_agree():
    assert ruled_out([math.log(ratio) for ratio in (1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01)], 0.10)
    assert not ruled_out([math.log(ratio) for ratio in (1.0, 1.2, 0.9, 1.1, 0.95, 1.15, 1.0, 1.05)], 0.10)
    assert not ruled_out([0.0], 0.10)


def test_a_saved_verdict_holds_only_the_fields_that_hold_something_its_confirmation_alike():
    screened = Verdict("regression", "numpy_lean-cpu-n1000", ratio=1.3, passes=5)
    saved = Verdict("regression", "numpy_lean-cpu-n1000", why="confirmed", ratio=1.2, passes=6,
                    screening=screened).saved()
    assert saved["screening"] == {"verdict": "regression", "benchmark": "numpy_lean-cpu-n1000", "passes": 5,
                                  "ratio": 1.3, "steps": 0, "calls": 1}
    assert "low" not in saved and "confirmation" not in saved and saved["why"] == "confirmed"


# The comparison's rule -------------------------------------------------------------------------------------------


def spread(center, width=0.02, trials=7):
    return [center * math.exp(width * (index - trials // 2)) for index in range(trials)]


def verdict_of(then, now, threshold=DEFAULT_THRESHOLD):
    _, verdict, _ = change_verdict(then, now, threshold)
    return verdict


def test_one_stray_trial_in_seven_moves_the_change_little_and_gives_no_false_verdict():
    assert verdict_of(spread(1.0), spread(1.0)) == "unchanged"
    change, verdict, _ = change_verdict(spread(1.0)[:6] + [1.8], spread(1.0), DEFAULT_THRESHOLD)
    assert abs(math.log(change.value)) < 0.03
    # Its seven differences with the other run's trials are the smallest of 49: the 99% interval's end (the 5th)
    # lies among them, so the verdict is CAN'T TELL, never FASTER; the 95% interval's (the 9th) lies past them.
    assert verdict == "can't tell" and change.high < 1 + DEFAULT_THRESHOLD
    logs = [[math.log(ratio) for ratio in trials] for trials in (spread(1.0)[:6] + [1.8], spread(1.0))]
    assert shift_interval(*logs, 0.95).low > math.log(0.9)


@pytest.mark.parametrize("factor, verdict", [(1.5, "slower"), (1 / 1.5, "faster"), (1.02, "unchanged")])
def test_a_clear_change_of_more_than_the_threshold_is_named_and_a_small_one_is_unchanged(factor, verdict):
    change, found, detectable = change_verdict(spread(1.0, 0.01), spread(factor, 0.01), DEFAULT_THRESHOLD)
    assert found == verdict and change.value == pytest.approx(factor) and detectable is None


def test_slower_needs_the_whole_interval_beyond_the_threshold():
    then, now = spread(1.0, 0.005), spread(1.07, 0.005)
    change, verdict, _ = change_verdict(then, now, DEFAULT_THRESHOLD)
    assert change.low > 1 and verdict == "unchanged"
    assert 1.04 < change.low < 1.05 < change.value
    assert verdict_of(then, now, 0.05) == "can't tell"
    assert verdict_of(then, now, 0.04) == "slower"


def test_noisy_runs_cannot_tell_and_say_what_slowdown_they_could_have_called():
    then, now = spread(1.0, 0.3), spread(1.3, 0.3)
    _, verdict, detectable = change_verdict(then, now, DEFAULT_THRESHOLD)
    assert verdict == "can't tell" and detectable > 1 + DEFAULT_THRESHOLD
    # Slowed by exactly that much more, the same trials are called SLOWER; a little less, they are not.
    extra = detectable / 1.3
    assert verdict_of(then, [ratio * extra * 1.01 for ratio in now]) == "slower"
    assert verdict_of(then, [ratio * extra * 0.99 for ratio in now]) == "can't tell"


def test_trials_are_precise_enough_once_an_identical_run_would_be_unchanged_at_half_the_threshold():
    from perf.judge.rules import precise_enough

    steady = [1.0, 1.01, 0.99, 1.0, 1.005, 0.995, 1.0]
    assert precise_enough(steady, DEFAULT_THRESHOLD)
    # Within the whole threshold of an identical run, not within half of it: not yet.
    scattered = [1.0, 1.08, 0.93, 1.0, 1.06, 0.95, 1.02]
    assert change_verdict(scattered, scattered, DEFAULT_THRESHOLD)[1] == "unchanged"
    assert not precise_enough(scattered, DEFAULT_THRESHOLD)
    assert precise_enough(scattered, 2 * DEFAULT_THRESHOLD)
    assert not precise_enough([1.0], DEFAULT_THRESHOLD)  # one trial has no spread to judge
