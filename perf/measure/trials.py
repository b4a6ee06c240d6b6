"""Measurement in short independent trials: a fresh setup each, a warm-up, rounds paired in time with the timing reference.

Why trials. On a shared machine a slow state lasts from a fraction of a second to seconds and
can slow one benchmark 1.5-1.7x while its neighbour runs normally; rounds timed back to back
all land in one state. Several trials, each with its own setup, sample several states, and a
round of the timing reference (numpy_loop) timed beside every round (before it on even rounds,
after it on odd ones) lives through the same state, so their ratio cancels it.

Only the standard library: the worker (perf/measure/worker.py) runs this inside another
version's tree, whose `solvers` it imports.
"""

import os
import statistics
import time
from contextlib import ExitStack
from dataclasses import dataclass, field

# Test tooling, never set by default: "tf1_while_loop=1.25" or "*=1.1" slows those solvers' timed calls.
SLOWDOWN_VARIABLE = "FSSGD_SLOWDOWN"
# A trial's rounds fit in about this long, so that one trial samples one machine state.
TRIAL_TARGET_S = 1.0
# Later trials repeat the full-count warm-up only where the first trial's was slower than its rounds by more
# than this (XLA compiles once per step count); elsewhere one call of one step warms the setup up.
WARM_UP_MARGIN = 1.10


def slowdown_factors(text: str | None = None) -> dict[str, float]:
    """{solver name or '*': factor} from FSSGD_SLOWDOWN; a factor below 1 cannot be made by waiting."""
    text = os.environ.get(SLOWDOWN_VARIABLE, "") if text is None else text
    factors = {}
    for part in filter(None, (part.strip() for part in text.split(","))):
        name, _, value = part.partition("=")
        try:
            factors[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"{SLOWDOWN_VARIABLE}: {part!r} is not NAME=FACTOR, e.g. tf1_while_loop=1.25") from None
        if not factors[name.strip()] >= 1:
            raise ValueError(f"{SLOWDOWN_VARIABLE}: {part!r}: the factor must be at least 1")
    return factors


def slowdown_of(solver_name: str) -> float:
    factors = slowdown_factors()
    return factors.get(solver_name, factors.get("*", 1.0))


def slowed(run, factor: float):
    """run, its every call stretched to factor × its own duration: a real slowdown of the timed call."""
    if factor == 1:
        return run

    def slowed_run(iterations):
        started = time.perf_counter()
        fit = run(iterations)
        until = started + (time.perf_counter() - started) * factor
        while time.perf_counter() < until:  # busy, as slower code would be, rather than asleep
            pass
        return fit

    return slowed_run


def timed(call, *args) -> float:
    started = time.perf_counter()
    call(*args)
    return time.perf_counter() - started


@dataclass
class Trial:
    setup_s: float
    first_run_s: float | None  # the untimed warm-up call at the full count, when there was one
    rounds_s: list[float] = field(default_factory=list)
    reference_rounds_s: list[float] = field(default_factory=list)

    def median_s(self) -> float:
        return statistics.median(self.rounds_s)

    def reference_median_s(self) -> float:
        return statistics.median(self.reference_rounds_s)


class Trials:
    """The rounds of several trials, for benchmark.pedantic(trials.call, setup=..., teardown=..., rounds=...).

    open_run(first_trial) is a context manager yielding (run, setup_s); open_reference(), when given, one
    yielding the timing reference's run; slowdown stretches the timed calls (FSSGD_SLOWDOWN, test tooling).
    Entering starts trial 1 with its warm-up at the full count (unless full_warm_up is False: then the
    setup's own short call is the warm-up), which fixes the rounds per trial (as many as fit in
    TRIAL_TARGET_S, 1 to max_rounds); every later trial sets up afresh. Each round's time is taken here too,
    from the end of setup to the start of teardown, around the call alone as pytest-benchmark times it;
    on_round(done, total, seconds), when given, hears of each.
    """

    def __init__(self, open_run, steps: int, trials: int, max_rounds: int, open_reference=None,
                 slowdown: float = 1.0, full_warm_up: bool = True, on_round=None):
        self.open_run, self.open_reference, self.slowdown = open_run, open_reference, slowdown
        self.steps, self.trial_count, self.max_rounds = steps, trials, max_rounds
        self.on_round = on_round
        self.trials: list[Trial] = []
        self.rounds_per_trial = 0
        self.warm_up_each_trial = full_warm_up
        self.rounds_done = 0
        self.stack = ExitStack()
        self.run = self.reference = None
        self.round_started = 0.0

    def __enter__(self):
        self.start_trial()
        if self.max_rounds == 1:
            self.rounds_per_trial = 1
            return self
        round_s = self.trials[0].first_run_s
        if round_s is None or round_s * self.max_rounds > TRIAL_TARGET_S:
            round_s = timed(self.run, self.steps)  # the warm-up may hold a compile: size rounds on a second call
        self.rounds_per_trial = max(1, min(self.max_rounds, int(TRIAL_TARGET_S / round_s)))
        return self

    def __exit__(self, *exc_info):
        self.stack.close()

    @property
    def total_rounds(self) -> int:
        return self.rounds_per_trial * self.trial_count

    def start_trial(self):
        self.stack.close()
        self.stack = ExitStack()
        first = not self.trials
        if not first and self.warm_up_each_trial:
            first_trial = self.trials[0]
            self.warm_up_each_trial = first_trial.first_run_s > WARM_UP_MARGIN * min(first_trial.rounds_s)
        run, setup_s = self.stack.enter_context(self.open_run(first))
        self.run = slowed(run, self.slowdown)
        self.reference = self.stack.enter_context(self.open_reference()) if self.open_reference else None
        first_run_s = timed(self.run, self.steps) if self.warm_up_each_trial else None
        if self.reference and self.warm_up_each_trial:
            self.reference(self.steps)  # its own warm-up, untimed
        self.trials.append(Trial(setup_s, first_run_s))

    def call(self, steps):
        return self.run(steps)

    def setup(self):
        if self.rounds_done and self.rounds_done % self.rounds_per_trial == 0:
            self.start_trial()
        if self.reference and self.rounds_done % 2 == 0:
            self.trials[-1].reference_rounds_s.append(timed(self.reference, self.steps))
        self.round_started = time.perf_counter()
        return (self.steps,), {}

    def teardown(self, *args):
        self.trials[-1].rounds_s.append(time.perf_counter() - self.round_started)
        if self.on_round:
            self.on_round(self.rounds_done + 1, self.total_rounds, self.trials[-1].rounds_s[-1])
        if self.reference and self.rounds_done % 2 == 1:
            self.trials[-1].reference_rounds_s.append(timed(self.reference, self.steps))
        self.rounds_done += 1
