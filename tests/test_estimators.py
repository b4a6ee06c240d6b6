"""Estimators and intervals from trials: order statistics, paired ratios, the lowest trial."""

import pytest

from perf import estimators


def test_the_median_interval_comes_from_order_statistics():
    # For 10 values the 90% interval of the median runs from the 2nd to the 9th smallest (binomial, p = 1/2).
    assert estimators.median_interval(range(10, 0, -1)) == (5.5, 2.0, 9.0)


def test_five_values_give_their_range_and_fewer_their_range_too():
    assert estimators.median_interval([3, 1, 2, 5, 4]) == (3.0, 1.0, 5.0)
    assert estimators.median_interval([2.0, 1.0]) == (1.5, 1.0, 2.0)


def test_identical_values_give_a_degenerate_interval():
    assert estimators.median_interval([0.7] * 6) == (0.7, 0.7, 0.7)


def test_paired_ratios_divide_trial_by_trial_and_refuse_unequal_lengths():
    assert estimators.paired_ratios([2.0, 3.0], [1.0, 2.0]) == [2.0, 1.5]
    with pytest.raises(ValueError):
        estimators.paired_ratios([2.0, 3.0], [1.0])


def test_the_lowest_trial_median_ignores_slow_trials():
    assert estimators.lowest_trial_median([0.015, 0.010, 0.017]) == 0.010
