"""Benchmark profiles: which sizes, how many steps, trials and rounds; chosen with --profile."""

import argparse
import math
import os
from dataclasses import dataclass, replace

from solvers.problem import SEED_ITERATIONS, SEED_N


@dataclass(frozen=True)
class Profile:
    sizes: tuple[int, ...]
    steps: int
    # The fewest independent trials a benchmark takes, each in another worker process; why five: docs/measurement.md,
    # "How many trials".
    trials: int
    # At most this many rounds per trial; fewer where a round is long (trials.TRIAL_TARGET_S).
    rounds_per_trial: int
    # Caps n × steps, so the large sizes of a quick look stay quick; None: all the steps at every size.
    max_sample_steps: int | None = None
    # True: every benchmark's first trial warms up at the full count (and measures whether later ones must);
    # False: only solvers that compile per count do (Solver.compiles_per_count), the others warm up on one step.
    full_warm_up: bool = True
    # Rounds estimated longer than this run fewer steps (perf/measure.round_plan), except full_count_solvers.
    max_round_s: float | None = None
    full_count_solvers: tuple[str, ...] = ()
    # A round's length under a round budget is estimated from untimed calls of this many steps.
    probe_steps: int = 1_000
    # 1, or how many times shorter FSSGD_SHRINK made this profile (test tooling).
    shrink: int = 1
    # Seconds of passes past the profile's trials, for the benchmarks not yet precise enough (perf/measure/schedule.py);
    # --budget sets it; 0: the profile's trials and no more.
    budget_s: float = 0.0

    def steps_at(self, n: int) -> int:
        if self.max_sample_steps is None:
            return self.steps
        return max(1, min(self.steps, self.max_sample_steps // n))

    def shrunk(self, factor: int) -> "Profile":
        """This profile factor times shorter: its step counts, round budget and probe alike, so that each solver
        takes the branch it takes in the real profile (full count, fewer steps, or every step)."""
        if factor == 1:
            return self

        def fewer(count):
            return count and max(1, count // factor)  # None, no cap, stays None

        return replace(self, steps=fewer(self.steps), max_sample_steps=fewer(self.max_sample_steps),
                       probe_steps=fewer(self.probe_steps), max_round_s=self.max_round_s and self.max_round_s / factor,
                       budget_s=self.budget_s / factor, shrink=self.shrink * factor)


PROFILES = {
    # CI and first look: the seed size at 1,000 steps and n = 1e5 at 100. Five trials each, then the budget's passes
    # for those not yet precise enough: a run within about four minutes (docs/results/README.md#wall-times).
    "quick": Profile(sizes=(1_000, 100_000), steps=1_000, trials=5, rounds_per_trial=5, max_sample_steps=10**7,
                     budget_s=120.0),
    # The n-sweep the report fits t = α + β·n to. Capped like quick, at 1e8: 100 steps at n = 1e6, where a step costs
    # milliseconds and a round of 1,000 took tens of seconds; below that every size runs all 1,000 (wall time and why
    # the cap keeps the fit: docs/results/README.md#wall-times). No budget: its five trials give the report's
    # intervals, and its passes take minutes each; comparisons are the quick profile's.
    "full": Profile(sizes=(100, 1_000, 10_000, 100_000, 1_000_000), steps=1_000, trials=5, rounds_per_trial=5,
                    max_sample_steps=10**8),
    # The original question itself: its two programs and the in-graph loops run all 1e5 steps (a tf1_feed_dict
    # round of them is long, so three trials of one round); per-step solvers whose round would pass 5 s (tf2_eager's,
    # one eager step at a time) run fewer, and the summary says so. Wall times: docs/results/README.md#wall-times.
    "seed": Profile(sizes=(SEED_N,), steps=SEED_ITERATIONS, trials=3, rounds_per_trial=1, full_warm_up=False,
                    max_round_s=5.0, full_count_solvers=("numpy_loop", "tf1_feed_dict")),
}
DEFAULT_PROFILE = "quick"

# Test tooling, never set by default: FSSGD_SHRINK=1000 runs a profile a thousand times shorter, so that a test takes
# every profile's timed path end to end in seconds. A run made so records it in machine_info and in every benchmark's
# extra_info (docs/extra-info.md), and its summary says so: it can never pass for a real one.
SHRINK_VARIABLE = "FSSGD_SHRINK"


def shrink_factor(text: str | None = None) -> int:
    """The whole number FSSGD_SHRINK divides a profile by; 1 where it is unset."""
    text = os.environ.get(SHRINK_VARIABLE, "") if text is None else text
    if not text.strip():
        return 1
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"{SHRINK_VARIABLE}: {text!r} is not a whole number of 1 or more, e.g. 1000")
    return int(text)


def profile_named(name: str) -> Profile:
    """The profile --profile names, shrunk where FSSGD_SHRINK says."""
    return PROFILES[name].shrunk(shrink_factor())


def seconds_argument(text: str) -> float:
    """A budget in seconds, for --budget (the suite's and the gate's): a finite number of 0 or more."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, 0 or more, e.g. 120, got {text!r}")
    return value
