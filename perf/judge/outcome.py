"""How a gate or a comparison of saved runs ends (passed, failed, or not measured, each with its exit status) and
the one spelling of the threshold both take."""

import argparse

# Exit statuses, the same in `python -m perf.gate` and `pytest perf/ --benchmark-compare` (docs/usage.md). A usage
# error keeps its command's own: argparse's 2 for the gate, pytest's 4. NOT_MEASURED lies apart from pytest's own
# statuses (0-6), so that a CI step can tell "nothing was measured" from a slowdown, a crash or a typo.
PASSED, FAILED, NOT_MEASURED = 0, 1, 10

# The option that allows a device nothing could be timed on (a CPU-only runner in a CPU and GPU matrix), said.
ALLOW_UNAVAILABLE = "--allow-unavailable-devices"

# The slowdown a verdict must catch, the gate's and the comparison's alike.
DEFAULT_THRESHOLD = 0.10
# The same, where instructions are counted (--count): a count repeats to about a percent between processes where time
# varies 4-7% (docs/measurement.md, "Counted: instructions a step"), so it can ask for a smaller change.
COUNTED_THRESHOLD = 0.01


class NotMeasured(Exception):
    """What was asked could not be measured; the message says what and why, in one line."""


def threshold_argument(text: str) -> float:
    """'10%' -> 0.10, for --threshold and --fail-on-slower alike. A bare number is refused: 0.1 reads as 10% to one
    reader and 0.1% to another."""
    try:
        value = float(text.strip().removesuffix("%")) / 100 if text.strip().endswith("%") else None
    except ValueError:
        value = None
    if value is None or not 0 < value < 10:
        raise argparse.ArgumentTypeError(f"expected a percentage above 0 with its sign, e.g. 10%, got {text!r}")
    return value
