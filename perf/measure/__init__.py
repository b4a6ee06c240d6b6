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

    @classmethod
    def named(cls, name: str) -> "Key":
        """The Key whose name this is: 'tf1_feed_dict-cpu-n1000'; ValueError where it is not one."""
        solver, device, size = (name.rsplit("-", 2) + ["", ""])[:3]
        if not (solver and device and size.startswith("n") and size[1:].isdigit()):
            raise ValueError(f"{name!r} is not a benchmark's name, SOLVER-DEVICE-nN (e.g. tf1_feed_dict-cpu-n1000)")
        return cls(solver, device, int(size[1:]))
