"""Figures from trials: estimators that slow states cannot drag, and intervals from the variation between trials."""

import math
import statistics

CONFIDENCE = 0.90  # two-sided: each end is a one-sided 5% bound
# Five values are the fewest whose median has a 90% distribution-free interval; fewer get their range.
MIN_VALUES_FOR_INTERVAL = 5


def median_interval(values, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(median, low, high): the median of values and its distribution-free interval from order statistics.

    It assumes only that the values are independent (one per trial), not that they are normal; with
    fewer than MIN_VALUES_FOR_INTERVAL values the interval is their range.
    """
    values = sorted(float(value) for value in values)
    median = statistics.median(values)
    if len(values) < MIN_VALUES_FOR_INTERVAL:
        return median, values[0], values[-1]
    from scipy import stats  # imported here: only the statistics need it, not every import of perf

    interval = stats.quantile_test(values, q=median, p=0.5).confidence_interval(confidence)
    low, high = float(interval.low), float(interval.high)
    return median, (values[0] if math.isnan(low) else low), (values[-1] if math.isnan(high) else high)


def paired_ratios(trial_medians_s, reference_medians_s) -> list[float]:
    """Per trial: the median of its rounds over the median of the reference rounds timed beside them."""
    return [median / reference for median, reference in zip(trial_medians_s, reference_medians_s, strict=True)]


def lowest_trial_median(trial_medians_s) -> float:
    """The fastest trial's median round: a slow state can only add time, so the lowest trial is the cleanest."""
    return min(trial_medians_s)
