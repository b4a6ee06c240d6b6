"""The two rules a verdict is judged by, side by side: the gate's on passes, the comparison's on two runs' trials."""

import math
import statistics
from dataclasses import asdict, dataclass

from perf.judge.statistics import Interval, mean_and_error, shift_interval, t_quantile
from perf.judge.words import (CANT_TELL, CLEAR, FASTER, IMPROVEMENT, INCONCLUSIVE, REGRESSION, SLOWER,
                              UNCHANGED)

# The gate's rule ------------------------------------------------------------------------------------------------
FALSE_ALARM_RATE = 0.05  # per gate run across all its benchmarks, before confirmation
# A threshold slowdown ruled out at this level: the benchmark is CLEAR, and needs no more passes. The gate looks again
# after every pass and stops at the first verdict, so the chance that a slowdown of exactly the threshold is ruled out
# adds up over the looks a noisy benchmark takes; this level keeps it small where a pass scatters by 0.1 (chosen by
# resampling the noise study's recorded passes: docs/results/gate-design.md section 10).
RULED_OUT = 0.002
POWER = 0.95  # what "the smallest slowdown it could have detected" is detected with


def ruled_out(values: list[float], threshold: float) -> bool:
    """Whether these per-pass log ratios rule out a slowdown of threshold, one-sided at RULED_OUT."""
    if len(values) < 2:
        return False
    mean, error = mean_and_error(values)
    return mean + t_quantile(1 - RULED_OUT, len(values)) * error < math.log1p(threshold)


@dataclass(frozen=True)
class Verdict:
    """A benchmark's verdict, as the gate reports and saves it. The ratio and its interval (at coverage) where it was
    judged on passes; detectable where INCONCLUSIVE; screening (a confirmed flag) or confirmation (an unconfirmed one)
    where it was measured again alone."""

    verdict: str
    benchmark: str = ""
    why: str = ""
    passes: int | None = None  # none where a problem left nothing to judge
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    coverage: float | None = None
    detectable: float | None = None
    steps: int = 0
    calls: int = 1
    screening: "Verdict | None" = None
    confirmation: "Verdict | None" = None

    def saved(self) -> dict:
        """As the gate's --json and the noise study write it: the fields that hold something, nested verdicts' too."""
        return asdict(self, dict_factory=lambda fields: {name: value for name, value in fields
                                                         if value not in (None, "")})


def judged(values: list[float], threshold: float, alpha: float) -> Verdict:
    """The gate's verdict on a benchmark's per-pass log ratios (the pass, not the round, is the unit:
    perf/gate/interleave.py), its interval Student's t over the passes, two-sided at 1 − 2·alpha (alpha: Bonferroni's
    over the benchmarks): REGRESSION, IMPROVEMENT, CLEAR, or INCONCLUSIVE with the smallest slowdown the run could
    have detected, by the rule docs/gate.md states ("How it decides")."""
    passes = len(values)
    if passes < 2:
        return Verdict(INCONCLUSIVE, passes=passes, why="fewer than two passes")
    mean, error = mean_and_error(values)
    reach = t_quantile(1 - alpha, passes) * error
    low, high, half = mean - reach, mean + reach, math.log1p(threshold / 2)
    interval = {"ratio": math.exp(mean), "low": math.exp(low), "high": math.exp(high), "coverage": 1 - 2 * alpha,
                "passes": passes}
    if low > 0 and mean > half:
        return Verdict(REGRESSION, **interval)
    if high < 0 and mean < -half:
        return Verdict(IMPROVEMENT, **interval)
    if ruled_out(values, threshold):
        return Verdict(CLEAR, **interval)
    detectable = math.exp(max(half, reach) + t_quantile(POWER, passes) * error)
    why = f"a slowdown of {threshold:.0%} is not ruled out; this run could have detected {detectable:.2f}x"
    return Verdict(INCONCLUSIVE, **interval, detectable=detectable, why=why)


# The comparison's rule ------------------------------------------------------------------------------------------
CHANGE_CONFIDENCE = 0.99  # the least coverage the comparison's change interval is chosen for, two-sided


def change_verdict(then: list[float], now: list[float], threshold: float) -> tuple[Interval, str, float | None]:
    """The comparison's verdict on one benchmark's trial ratios in two runs (each at least two): the change now / then
    with its interval (the Hodges-Lehmann shift, Mann and Whitney's interval), SLOWER, FASTER, UNCHANGED or CAN'T
    TELL, and where CAN'T TELL the smallest slowdown these runs could have called SLOWER (else None). The rule, and why
    so strict: docs/measurement.md, "Comparing two runs"; its calibration: docs/results/compare-calibration/."""
    log_shift = shift_interval([math.log(ratio) for ratio in then], [math.log(ratio) for ratio in now],
                               CHANGE_CONFIDENCE)
    change = Interval(*(math.exp(value) for value in log_shift[:3]), log_shift.coverage)
    limit = math.log1p(threshold)
    verdict = (SLOWER if log_shift.low > limit
               else FASTER if log_shift.high < -limit
               else UNCHANGED if -limit < log_shift.low and log_shift.high < limit
               else CANT_TELL)
    return change, verdict, smallest_slowdown_called(change, threshold) if verdict == CANT_TELL else None


def smallest_slowdown_called(change: Interval, threshold: float) -> float:
    """The smallest slowdown that two runs whose change_verdict interval is change could have called SLOWER, whatever
    they called: how far the rule sees, from these runs' spread."""
    # A true slowdown s moves the whole interval by s: it is called SLOWER once s exceeds 1 + threshold by the
    # interval's reach below its estimate.
    return (1 + threshold) * change.value / change.low


def precise_enough(ratios: list[float], threshold: float) -> bool:
    """Whether one run's trial ratios are precise enough for the comparison to call a change of threshold: compared
    by change_verdict with themselves (an identical run), they are UNCHANGED at half the threshold (why half:
    docs/measurement.md, "How many trials"). A run takes more trials until this holds (perf/measure/schedule.py)."""
    return len(ratios) >= 2 and change_verdict(ratios, ratios, threshold / 2)[1] == UNCHANGED


# A benchmark is out of a run's reach where even a spread at the low end of what its trials allow, at this level
# one-sided, would need more trials than the run can still take to be precise enough (perf/measure/schedule.py).
REACH_CONFIDENCE = 0.90


def trials_for_spread(spread: float, threshold: float) -> float:
    """About how many trials a run needs to be precise_enough at threshold, its trials' log ratios spreading by a
    standard deviation `spread`: the comparison's interval of two runs of m trials each, the Hodges-Lehmann shift's,
    reaches about z·√(π/3)·spread·√(2/m) from its estimate (the normal approximation; 3/π is the shift's efficiency),
    z the CHANGE_CONFIDENCE quantile; precise_enough asks that reach to stay within log(1 + threshold / 2)."""
    from scipy.stats import norm  # imported here, as in perf/judge/statistics.py

    z = norm.ppf((1 + CHANGE_CONFIDENCE) / 2)
    return 2 * math.pi / 3 * (z * spread / math.log1p(threshold / 2)) ** 2


def trials_needed(ratios: list[float], threshold: float) -> float:
    """About how many trials a benchmark needs to be precise_enough at threshold, from its trials so far (at least
    three): a projection, never a verdict. The spread is taken low, so as to give up on no benchmark that could make
    it: the smaller of the standard deviation and the scaled median absolute deviation (one stray trial moves the
    first, not the second), at the lower end of its one-sided REACH_CONFIDENCE interval (chi-square)."""
    from scipy.stats import chi2

    logs = [math.log(ratio) for ratio in ratios]
    centre = statistics.median(logs)
    spread = min(statistics.stdev(logs), 1.4826 * statistics.median(abs(value - centre) for value in logs))
    return trials_for_spread(spread * math.sqrt((len(logs) - 1) / chi2.ppf(REACH_CONFIDENCE, len(logs) - 1)),
                             threshold)
