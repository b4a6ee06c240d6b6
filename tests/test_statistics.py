"""Intervals from trials: order statistics with the coverage they really have, and end-to-end differences."""

import pytest

from perf.report.statistics import Interval, coverage_wording, median_interval


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


def test_coverage_reads_as_a_range_where_it_is_one():
    assert coverage_wording(0.9375, 5) == "93.8%, the range of 5 trials"
    assert coverage_wording(0.9296875, 8) == "93%"
    assert coverage_wording(1.0) == "exact"


def test_identical_values_give_a_degenerate_interval():
    assert median_interval([0.7] * 6)[:3] == (0.7, 0.7, 0.7)


def test_a_difference_runs_end_to_end_and_covers_with_the_product_at_least():
    whole, part = Interval(30.0, 28.0, 33.0, 0.9), Interval(20.0, 19.0, 22.0, 0.8)
    assert whole - part == Interval(10.0, 6.0, 14.0, pytest.approx(0.72))
    assert (whole - part).scaled(2.0)[:3] == (20.0, 12.0, 28.0)
