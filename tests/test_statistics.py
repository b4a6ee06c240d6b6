"""Intervals (perf/judge/statistics.py): order statistics with the coverage they really have, Student's t, the shift
between two samples with its exact rank-sum coverage, and end-to-end differences."""

import math
import random
import statistics

import pytest
from scipy.stats import mannwhitneyu, t

from perf.judge.statistics import Interval, mean_and_error, median_interval, rank_sum_cdf, shift_interval, t_interval


def test_the_median_interval_comes_from_order_statistics():
    # For 10 values the 90% interval of the median runs from the 2nd to the 9th smallest (binomial, p = 1/2).
    assert median_interval(range(10, 0, -1))[:3] == (5.5, 2.0, 9.0)


@pytest.mark.parametrize("count, low, high, coverage", [
    (3, 1, 3, 0.75),  # the seed profile: three trials, their range, 1 − 2/8
    (5, 1, 5, 0.9375),  # quick and full: five, their range, 1 − 2/32
    (8, 2, 7, 0.9296875),  # the gate: eight, the 2nd to the 7th, 1 − 2·9/256
])
def test_each_interval_states_the_coverage_it_has(count, low, high, coverage):
    interval = median_interval(range(1, count + 1))
    assert (interval.low, interval.high) == (low, high)
    assert interval.coverage == pytest.approx(coverage)


def test_identical_values_give_a_degenerate_interval():
    assert median_interval([0.7] * 6)[:3] == (0.7, 0.7, 0.7)


def test_a_difference_runs_end_to_end_and_covers_with_the_product_at_least():
    whole, part = Interval(30.0, 28.0, 33.0, 0.9), Interval(20.0, 19.0, 22.0, 0.8)
    assert whole - part == Interval(10.0, 6.0, 14.0, pytest.approx(0.72))
    assert (whole - part).scaled(2.0)[:3] == (20.0, 12.0, 28.0)


def test_the_t_interval_is_students_over_the_values_through_the_transform():
    values = [0.1, 0.3, 0.2, 0.6, 0.25]
    mean, error = mean_and_error(values)
    assert mean == pytest.approx(statistics.fmean(values))
    assert error == pytest.approx(statistics.stdev(values) / math.sqrt(len(values)))
    low, high = t.interval(0.95, len(values) - 1, loc=mean, scale=error)
    assert t_interval(values, 0.95) == (pytest.approx(mean), pytest.approx(low), pytest.approx(high), 0.95)
    ratio = t_interval(values, 0.95, math.exp)
    assert (ratio.value, ratio.low, ratio.high) == (pytest.approx(math.exp(mean)), pytest.approx(math.exp(low)),
                                                    pytest.approx(math.exp(high)))


def test_a_t_interval_needs_two_values_and_identical_ones_give_a_degenerate_one():
    assert t_interval([0.4], 0.90) is None
    assert t_interval([0.4] * 3, 0.90)[:3] == (pytest.approx(0.4),) * 3


@pytest.mark.parametrize("first, second", [(5, 5), (3, 7), (8, 8)])
def test_the_rank_sum_distribution_is_mann_and_whitneys_exact_one(first, second):
    cdf = rank_sum_cdf(first, second)
    assert cdf[-1] == pytest.approx(1.0) and len(cdf) == first * second + 1
    rng = random.Random(first * 100 + second)
    for _ in range(20):
        a, b = [rng.random() for _ in range(first)], [rng.random() for _ in range(second)]
        statistic = sum(x > y for x in a for y in b)
        # scipy's exact one-sided p-value is P(U ≥ statistic).
        assert mannwhitneyu(a, b, method="exact", alternative="greater").pvalue == pytest.approx(
            1 - (cdf[statistic - 1] if statistic else 0.0))


def test_the_shift_interval_holds_the_estimate_and_states_its_exact_coverage():
    shift = shift_interval([0.0, 0.01, 0.02, 0.03, 0.04], [0.2, 0.21, 0.22, 0.23, 0.24], 0.95)
    assert shift.value == pytest.approx(0.2) and shift.low == pytest.approx(0.17) and shift.high == pytest.approx(0.23)
    assert shift.coverage == pytest.approx(1 - 2 * 4 / 252)  # the 3rd smallest and largest of 25 differences
    assert shift_interval([0.0, 0.01, 0.02, 0.03, 0.04], [0.2, 0.21, 0.22, 0.23, 0.24], 0.99).coverage == (
        pytest.approx(1 - 2 / 252))  # five trials a run reach 99% only with the whole range of differences
    few = shift_interval([0.0, 0.1], [0.5, 0.6], 0.95)  # too few trials for 95%: the whole range, and its coverage
    assert (few.low, few.high, few.coverage) == (pytest.approx(0.4), pytest.approx(0.6), pytest.approx(1 - 2 / 6))
