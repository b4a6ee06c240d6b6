"""The run's trials in passes, as the gate takes them: pass i gives every benchmark its trial i on worker i, in an
order shuffled anew each pass, so that a benchmark's trials spread over the whole run. After the profile's passes,
more passes of fresh workers for the benchmarks still too imprecise to call the comparison's threshold, within a
budget.

Why passes. Taken one benchmark after another, a benchmark's trials all fell within seconds of each other, inside
one spell of the machine; longer spells moved a TensorFlow benchmark's ratio to numpy_loop between identical runs
far more than its trials disagreed within a run (figures: docs/measurement.md, "Passes"). Spread over
the run, the trials sample as many spells as processes, and the interval between them holds both.

Why more passes where the noise is. Two identical processes settle at levels several percent apart while rounds inside
each agree closely, so a benchmark's precision is bought in processes, and how many it needs depends on the instance
and the benchmark: a fixed count is too few on a noisy one and too many on a quiet one. A benchmark stops once its
trials are precise enough for the comparison's own rule (perf.judge.rules.precise_enough), as the gate's stop once
decided; the noisiest get the time the others leave.
"""

import itertools
import math
import random
import time
from dataclasses import dataclass, field

from perf.judge.outcome import DEFAULT_THRESHOLD
from perf.judge.rules import precise_enough
from perf.measure import TIMING_REFERENCE, progress
from perf.measure.solver_runs import prepared, round_plan
from perf.measure.trials import Measured, TrialError
from perf.measure.worker import WorkerStopped
from solvers.problem import seed_problem

# Caps the timing reference's n × steps: at n = 1e6 its rounds of 1,000 steps would take seconds, beside every round.
# Its per-call cost is about half a step, so even the 100 steps left there keep it a per-step figure.
REFERENCE_MAX_SAMPLE_STEPS = 10**8
# The most trials a benchmark takes, as the gate's most passes (perf/gate/stages.py).
MAX_TRIALS = 40
# Why a benchmark's trials stopped (extra_info["trials_stopped"]): precise enough for the comparison's threshold, or
# not yet when the budget ended, or at MAX_TRIALS. An unpaired benchmark (the timing reference, a study's) takes the
# profile's trials: the comparison judges no ratio of it.
PRECISE, BUDGET_SPENT, MOST_TRIALS = "precise", "budget", "max_trials"


@dataclass(frozen=True)
class Plan:
    """What a benchmark times: run(steps) on the seed problem at n, beside the timing reference when paired. study:
    what a study's benchmark records beyond the per-step tables (its figure id, its own keys); its step counts are
    the study, never cut by a round budget."""
    n: int
    steps: int
    paired: bool = False
    study: dict = field(default_factory=dict)


def label(solver, device: str, n: int) -> str:
    """How a benchmark is named in progress lines and failures."""
    return f"{solver.name} {device} n={n:,}"


@dataclass
class Scheduled:
    """A benchmark of the run: its plan, its trials so far, and why it stopped, where it failed."""
    solver: object
    device: str
    plan: Plan
    measured: Measured | None = None
    failure: Exception | None = None
    stopped: str | None = None  # why its trials stopped, where they were taken until precise: PRECISE, ...

    @property
    def label(self) -> str:
        return label(self.solver, self.device, self.plan.n)

    @property
    def steps(self) -> int:
        """The steps a round runs: the plan's, or fewer under a round budget once prepared."""
        return self.measured.benchmark["steps"] if self.measured else self.plan.steps


def reference_steps(n: int, steps: int) -> int:
    return min(steps, max(1, REFERENCE_MAX_SAMPLE_STEPS // n))


def budgeted_steps(solver, device, n: int, steps: int, profile) -> tuple[int, float]:
    """(steps a round runs, its estimated seconds): steps, or fewer where a round would last longer than
    profile.max_round_s; the seed's own programs (profile.full_count_solvers) always run them all, and their
    rounds, the longest, are estimated all the same, so that a terminal hears how long each will take."""
    budget = math.inf if solver.name in profile.full_count_solvers else profile.max_round_s
    with prepared(solver, seed_problem(n, iterations=steps), device) as (run, _):  # a session of its own, untimed
        plan = round_plan(run, steps, budget, profile.probe_steps)
    return plan.steps, plan.round_s


def steps_within_budget(solver, device, plan: Plan, profile) -> int:
    """The steps a round of plan runs: a profile with a round budget (seed) runs fewer where a round would take
    longer, except a study's; a terminal hears what each round will take."""
    if profile.max_round_s is None or plan.study:
        return plan.steps
    steps, round_s = budgeted_steps(solver, device, plan.n, plan.steps, profile)
    progress.expected(label(solver, device, plan.n), profile.trials, profile.rounds_per_trial, round_s, steps)
    return steps


class Schedule:
    """The run's benchmarks (nodeid -> Scheduled) and their trials, all taken at the first call of run(): the
    profile's passes, then passes for the paired benchmarks not yet precise enough to call a change of threshold,
    none started after budget_s seconds of passes (default: the profile's), each on a fresh worker (pool[index] past
    the profile's trials)."""

    def __init__(self, pool, profile, seed: int, threshold: float = DEFAULT_THRESHOLD, budget_s: float | None = None):
        self.pool, self.profile, self.seed, self.threshold = pool, profile, seed, threshold
        self.budget_s = profile.budget_s if budget_s is None else budget_s
        self.benchmarks: dict[str, Scheduled] = {}
        self.done = False

    def add(self, nodeid: str, solver, device: str, plan: Plan) -> None:
        self.benchmarks[nodeid] = Scheduled(solver, device, plan)

    def run(self) -> None:
        """Every benchmark's rounds sized (under a round budget, fewer steps), then every pass: each benchmark that
        has not failed gets its next trial, on the pass's worker; then the passes until each is precise enough."""
        if self.done:
            return
        self.done, rng = True, random.Random(self.seed)
        for scheduled in self.benchmarks.values():
            self.prepare(scheduled)
        began = time.perf_counter()
        for index in range(self.profile.trials):
            passed = time.perf_counter()
            self.timed_pass(index, going := self.going(), rng)
            progress.pass_done(index + 1, self.profile.trials, len(going), time.perf_counter() - passed)
        self.until_precise(began, rng)

    def until_precise(self, began: float, rng: random.Random) -> None:
        """Passes past the profile's, each a trial of every benchmark not yet precise enough, until none is left, or
        it has MAX_TRIALS, or the passes since began have spent the budget; those left say why they stopped."""
        for index in itertools.count(self.profile.trials):
            if not (imprecise := self.imprecise()):
                return
            over_budget = time.perf_counter() - began > self.budget_s
            if over_budget or index >= MAX_TRIALS:
                for scheduled in imprecise:
                    scheduled.stopped = BUDGET_SPENT if over_budget else MOST_TRIALS
                progress.imprecise_left([scheduled.label for scheduled in imprecise], self.threshold,
                                        f"when the {self.budget_s:.0f} s budget ended" if over_budget
                                        else f"after {MAX_TRIALS} trials")
                return
            self.timed_pass(index, imprecise, rng)
            progress.more_trials(index + 1, [scheduled.label for scheduled in imprecise], self.threshold,
                                 time.perf_counter() - began, self.budget_s)

    def going(self) -> list[Scheduled]:
        return [scheduled for scheduled in self.benchmarks.values() if scheduled.failure is None]

    def imprecise(self) -> list[Scheduled]:
        """The paired benchmarks still going whose trials cannot yet call the threshold; the others are marked
        PRECISE, and take no more."""
        found = []
        for scheduled in self.going():
            if scheduled.stopped or not scheduled.measured.reference_steps:
                continue
            if precise_enough(scheduled.measured.trial_ratios(), self.threshold):
                scheduled.stopped = PRECISE
            else:
                found.append(scheduled)
        return found

    def timed_pass(self, index: int, benchmarks: list[Scheduled], rng: random.Random) -> None:
        """Trial index of each of benchmarks, on worker index, in a shuffled order; a failure stops its benchmark."""
        for scheduled in rng.sample(benchmarks, len(benchmarks)):
            try:
                scheduled.measured.trial(self.pool[index])  # a worker that stopped is replaced first
            except (TrialError, WorkerStopped) as error:
                scheduled.failure = error

    def prepare(self, scheduled: Scheduled) -> None:
        solver, device, plan = scheduled.solver, scheduled.device, scheduled.plan
        steps = steps_within_budget(solver, device, plan, self.profile)
        paired = plan.paired and (solver.name, device) != TIMING_REFERENCE
        scheduled.measured = Measured(
            {"solver": solver.name, "device": device, "n": plan.n, "steps": steps, "calls": 1},
            self.profile.trials, self.profile.rounds_per_trial,
            reference_steps(plan.n, steps) if paired else None,
            full_warm_up=self.profile.full_warm_up or solver.compiles_per_count,
            on_round=lambda *args: progress.round_done(scheduled.label, *args))
