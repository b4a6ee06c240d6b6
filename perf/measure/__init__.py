"""How a benchmark is timed: independent trials, rounds paired with the timing reference, answers checked, the
environment recorded."""

from typing import NamedTuple

# The timing reference: every benchmark of the per-step tables is paired with it, round by round, on the same
# problem, so that its ratio to it holds on a noisy machine. It is the seed question's own yardstick ("~4 s in
# NumPy"), needs nothing beyond NumPy, and does a solver's arithmetic per step, so it moves with the host's speed.
TIMING_REFERENCE = ("numpy_loop", "cpu")


class Key(NamedTuple):
    """A benchmark of the per-step tables, as the suite, the report and the gate name it."""

    solver: str
    device: str
    n: int

    @property
    def name(self) -> str:
        return f"{self.solver}-{self.device}-n{self.n}"
