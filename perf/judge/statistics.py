"""The statistics under both rules and the report: intervals of a median, a mean, and a shift between two samples."""

import itertools
import math
import statistics
from functools import cache
from typing import NamedTuple

MEDIAN_CONFIDENCE = 0.90  # the least coverage a median's interval is chosen for, two-sided: the report's tables'


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


def median_interval(values, confidence: float = MEDIAN_CONFIDENCE) -> Interval:
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


@cache  # the noise study's resampling asks for the same few quantiles millions of times
def t_quantile(probability: float, count: int) -> float:
    """Student's t quantile for the mean of count values (count − 1 degrees of freedom)."""
    from scipy.stats import t  # imported here: the worker and the reading of saved runs do not need it

    return float(t.ppf(probability, count - 1))


def mean_and_error(values: list[float]) -> tuple[float, float]:
    """The values' mean and its standard error, in floats: statistics.stdev's exact fractions took most of the noise
    study's resampling time."""
    mean = statistics.fmean(values)
    return mean, math.sqrt(math.fsum((value - mean) ** 2 for value in values) / (len(values) - 1) / len(values))


def t_interval(values: list[float], confidence: float, transform=lambda value: value) -> Interval | None:
    """The mean of values with its Student t interval at confidence, two-sided, through transform (exp for logs);
    None for fewer than two values. For values that are each a mean or a difference of several measurements (a
    pass's, a process's), where an interval of order statistics would be as wide as the most extreme of them."""
    if len(values) < 2:
        return None
    mean, error = mean_and_error(values)
    reach = t_quantile((1 + confidence) / 2, len(values)) * error
    return Interval(transform(mean), transform(mean - reach), transform(mean + reach), confidence)


@cache
def rank_sum_cdf(m: int, n: int) -> tuple[float, ...]:
    """P(U ≤ u) for u = 0 … m·n: the Mann-Whitney statistic's exact distribution when neither sample is shifted
    (scipy computes it only inside its test, not as a public distribution)."""
    counts = [[[1] if i == 0 or j == 0 else None for j in range(n + 1)] for i in range(m + 1)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            # The largest of the i + j values is from the first sample (it exceeds all j of the second) or not.
            with_first, without = counts[i - 1][j], counts[i][j - 1]
            ways = [0] * (i * j + 1)
            for u, count in enumerate(with_first):
                ways[u + j] += count
            for u, count in enumerate(without):
                ways[u] += count
            counts[i][j] = ways
    total = math.comb(m + n, m)
    return tuple(running / total for running in itertools.accumulate(counts[m][n]))


def shift_interval(then: list[float], now: list[float], confidence: float) -> Interval:
    """The shift now − then: the Hodges-Lehmann estimate, between the k-th smallest and k-th largest of the pairwise
    differences, k the largest that covers with at least confidence (or 1, the whole range, where none does)."""
    differences = sorted(b - a for a in then for b in now)
    cdf = rank_sum_cdf(len(then), len(now))
    k = 1
    while k < len(differences) // 2 and 1 - 2 * cdf[k] >= confidence:
        k += 1  # one more difference off each end still covers with at least confidence
    return Interval(statistics.median(differences), differences[k - 1], differences[-k], 1 - 2 * cdf[k - 1])
