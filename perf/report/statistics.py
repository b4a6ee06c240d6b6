"""Figures from trials: the median of per-trial values with a distribution-free interval that states its coverage, and
the mean of per-process values with its Student t interval."""

import statistics
from typing import NamedTuple

CONFIDENCE = 0.90  # the least coverage an interval is chosen for, two-sided


class Interval(NamedTuple):
    """A value with the interval around it, and the probability that the interval covers the true value."""

    value: float
    low: float
    high: float
    coverage: float = 1.0  # 1: exact, e.g. the timing reference's own ratio

    def __sub__(self, other: "Interval") -> "Interval":
        # End to end: the widest the difference can be if each value lies within its own interval. Both do at
        # once with the product of their coverages (they come from different benchmarks' trials): a lower bound.
        return Interval(self.value - other.value, self.low - other.high, self.high - other.low,
                        self.coverage * other.coverage)

    def __add__(self, other: "Interval") -> "Interval":
        return Interval(self.value + other.value, self.low + other.low, self.high + other.high,
                        self.coverage * other.coverage)

    def scaled(self, factor: float) -> "Interval":
        return Interval(self.value * factor, self.low * factor, self.high * factor, self.coverage)


def overlapping(*intervals: Interval) -> bool:
    """Whether the intervals share a value: runs that agree within their intervals."""
    return max(interval.low for interval in intervals) <= min(interval.high for interval in intervals)


def median_interval(values, confidence: float = CONFIDENCE) -> Interval:
    """The median of values, between two of them: the closest pair of order statistics that covers the true
    median with at least confidence, or, where even all the values cannot (fewer than five), their range.

    It assumes only that the values are independent (one per trial), not that they are normal. The coverage is
    exact: the number of values below the true median is binomial(n, 1/2), so the k-th smallest and the k-th
    largest value cover it with 1 − 2·P(B ≤ k − 1).
    """
    from scipy.stats import binom  # imported here: only the statistics need it, not every import of perf

    values = sorted(float(value) for value in values)
    count, dropped = len(values), 0
    while 1 - 2 * binom.cdf(dropped + 1, count, 0.5) >= confidence:
        dropped += 1  # one more value off each end still covers with at least confidence
    return Interval(statistics.median(values), values[dropped], values[-1 - dropped],
                    float(1 - 2 * binom.cdf(dropped, count, 0.5)))


def t_interval(values, confidence: float = CONFIDENCE, transform=lambda value: value) -> Interval | None:
    """The mean of values with its Student t interval at confidence, two-sided, through transform (exp for logs);
    None for fewer than two values. For values that are each a mean or a difference of several measurements (a
    pass's, a process's), where an interval of order statistics would be as wide as the most extreme of them."""
    if len(values) < 2:
        return None
    from scipy.stats import t  # imported here: only the statistics need it, not every import of perf

    mean, error = statistics.fmean(values), statistics.stdev(values) / len(values) ** 0.5
    low, high = t.interval(confidence, len(values) - 1, loc=mean, scale=error) if error else (mean, mean)
    return Interval(transform(mean), transform(float(low)), transform(float(high)), confidence)


def coverage_wording(coverage: float, trials: int | None = None) -> str:
    """'93.8%, the range of 5 trials' or '97.9%': how an interval's coverage reads in a table's caption."""
    if coverage >= 1:
        return "exact"
    percent = f"{coverage:.1%}".replace(".0%", "%")
    range_of = trials is not None and abs(coverage - (1 - 2 * 0.5 ** trials)) < 1e-12
    return f"{percent}, the range of {trials} trials" if range_of else percent
