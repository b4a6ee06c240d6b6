"""Measurement in short independent trials, each in another worker process: a fresh setup, a warm-up, rounds paired in
time with the timing reference in that same process. Why trials, why paired, why a process each: docs/measurement.md
("Trials, and rounds paired with the timing reference", "A process per trial").

Only the standard library: the worker (perf/measure/worker.py) imports this inside another version's tree, whose
`solvers` it imports.
"""

import os
import statistics
import time
from dataclasses import dataclass, field

# Test tooling, never set by default: "tf1_while_loop=1.25" or "*=1.1" slows those solvers' timed calls.
SLOWDOWN_VARIABLE = "FSSGD_SLOWDOWN"
# A trial's rounds fit in about this long, so that one trial samples one machine state.
TRIAL_TARGET_S = 1.0
# Later trials repeat the full-count warm-up only where the first trial's was slower than its rounds by more
# than this (XLA compiles once per step count, which takes many times a run); elsewhere one call of one step warms
# the setup up. At 1.10 a single noisy comparison made tf2_eager warm up at the full count in all 20 trials of one
# quick run and in none past the first of another (docs/results/anatomy/README.md).
WARM_UP_MARGIN = 1.5


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
    process: int  # the worker's process id
    rounds_s: list[float] = field(default_factory=list)
    reference_rounds_s: list[float] = field(default_factory=list)
    gpu_peak_bytes: int | None = None  # on a GPU, the most memory the worker's framework held in this trial
    gpu_peak_scope: str | None = None  # "trial": its own peak; "worker": the worker's so far, which it did not raise

    def median_s(self) -> float:
        return statistics.median(self.rounds_s)

    def reference_median_s(self) -> float:
        return statistics.median(self.reference_rounds_s)


class TrialError(RuntimeError):
    """A trial failed in its worker: kind names how (perf/measure/worker.py's error kinds), trace where."""

    def __init__(self, reply: dict):
        super().__init__(reply.get("error") or reply.get("missing") or str(reply))
        self.kind, self.trace = reply.get("kind"), reply.get("trace")


class Measured:
    """A benchmark's trials ({"solver", "device", "n", "steps", "calls"} as the worker opens it), one at a time, each on
    the worker given. The first warms up at the full count (unless full_warm_up is False: the setup's own short call
    then warms up), which fixes the rounds per trial (rounds_fitting); later ones repeat it where WARM_UP_MARGIN says.
    With reference_steps, every round is timed beside a round of the timing reference of that many steps, before it
    and after it in turn. on_round(done, total, seconds), when given, hears of each round."""

    def __init__(self, benchmark: dict, trials: int, max_rounds: int, reference_steps: int | None = None,
                 full_warm_up: bool = True, on_round=None):
        self.benchmark, self.trial_count, self.max_rounds = benchmark, trials, max_rounds
        self.reference_steps, self.full_warm_up, self.on_round = reference_steps, full_warm_up, on_round
        self.trials: list[Trial] = []
        self.rounds_per_trial, self.warm_up, self.rounds_done = 0, full_warm_up, 0
        self.fit: dict | None = None  # the last round's answer, checked by its worker: w, b, loss, iterations
        self.placement = None  # where TensorFlow placed the ops in the first trial

    @property
    def warm_up_each_trial(self) -> bool:
        return self.full_warm_up and self.warm_up

    def trial_ratios(self) -> list[float]:
        """Per trial, × the timing reference beside it; [] where unpaired."""
        if not self.reference_steps:
            return []
        return paired_ratios([trial.median_s() for trial in self.trials],
                             [trial.reference_median_s() for trial in self.trials],
                             self.benchmark["steps"], self.reference_steps)

    @property
    def rounds_s(self) -> list[float]:
        return [round_s for trial in self.trials for round_s in trial.rounds_s]

    def trial(self, worker) -> Trial:
        """One more trial, on worker; TrialError where it failed there (the trial is closed all the same)."""
        first = not self.trials
        if not first and self.warm_up:
            self.warm_up = self.trials[0].first_run_s > WARM_UP_MARGIN * min(self.trials[0].rounds_s)
        reply = asked(worker, {"op": "open", **self.benchmark, "warm_up": self.warm_up,
                               "reference_steps": self.reference_steps})
        try:
            trial = Trial(reply["setup_s"], reply["first_run_s"], worker.process.pid)
            if first:
                self.placement = reply.get("placement")
                self.rounds_per_trial = rounds_fitting(worker, trial.first_run_s, self.max_rounds)
            for _ in range(self.rounds_per_trial):
                side = ("before", "after")[self.rounds_done % 2] if self.reference_steps else None
                reply = asked(worker, {"op": "round", "reference": side})
                trial.rounds_s.append(reply["round_s"])
                if side:
                    trial.reference_rounds_s.append(reply["reference_round_s"])
                self.rounds_done += 1
                if self.on_round:  # of the rounds planned, or of those taken so far past the plan
                    rounds = self.rounds_per_trial * max(self.trial_count, len(self.trials) + 1)
                    self.on_round(self.rounds_done, rounds, reply["round_s"])
        finally:
            closed = worker.ask({"op": "close"})
        if "error" in closed:
            raise TrialError(closed)
        trial.gpu_peak_bytes, trial.gpu_peak_scope = closed.get("gpu_peak_bytes"), closed.get("gpu_peak_scope")
        self.trials.append(trial)
        self.fit = closed["fit"]
        return trial


def paired_ratios(medians_s, reference_medians_s, steps: int, reference_steps: int) -> list[float]:
    """Each trial's ratio to the timing reference rounds beside it, per step on both sides: what the comparison
    judges."""
    return [(median / steps) / (reference / reference_steps)
            for median, reference in zip(medians_s, reference_medians_s, strict=True)]


def asked(worker, request: dict) -> dict:
    reply = worker.ask(request)
    if "error" in reply or "missing" in reply:
        raise TrialError(reply)
    return reply


def rounds_fitting(worker, first_run_s: float | None, max_rounds: int) -> int:
    """How many rounds fit in TRIAL_TARGET_S, 1 to max_rounds, from the warm-up's time or, where that may hold a
    compile or there was none, from one more untimed round."""
    if max_rounds == 1:
        return 1
    round_s = first_run_s
    if round_s is None or round_s * max_rounds > TRIAL_TARGET_S:
        round_s = asked(worker, {"op": "round"})["round_s"]
    return max(1, min(max_rounds, int(TRIAL_TARGET_S / round_s)))
