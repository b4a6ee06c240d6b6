"""How a gate or a comparison ends, and the one spelling of its threshold (perf/judge/outcome.py)."""

import argparse

import pytest

from perf.judge.outcome import FAILED, NOT_MEASURED, PASSED, threshold_argument


@pytest.mark.parametrize("text, value", [("10%", 0.10), (" 2.5% ", 0.025), ("150%", 1.5)])
def test_a_threshold_is_a_percentage_with_its_sign(text, value):
    assert threshold_argument(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["0.1", "10", "0%", "-5%", "fast", "%", "1000%"])
def test_a_bare_number_or_a_percentage_out_of_range_is_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match=f"expected a percentage above 0 with its sign, e.g. 10%, got {text!r}"):
        threshold_argument(text)


def test_not_measured_has_a_status_of_its_own_past_pytests():
    assert len({PASSED, FAILED, NOT_MEASURED}) == 3 and NOT_MEASURED not in tuple(pytest.ExitCode)
