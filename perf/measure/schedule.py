"""The run's trials in passes, as the gate takes them: pass i gives every benchmark its trial i on worker i, in an
order shuffled anew each pass; after the profile's passes, more passes of fresh workers for the benchmarks still too
imprecise to call the comparison's threshold, within a budget. Why passes, and why more where the noise is:
docs/measurement.md ("Passes", "How many trials").
"""

import itertools
import math
import random
import statistics
import time
from dataclasses import dataclass, field

from perf.judge.outcome import DEFAULT_THRESHOLD
from perf.judge.rules import precise_enough, trials_needed
from perf.measure import TIMING_REFERENCE, Key, counting, progress
from perf.measure.solver_runs import prepared, round_plan
from perf.measure.trials import Measured, TrialError
from perf.measure.worker import WorkerStopped
from solvers.problem import seed_problem

# Caps the timing reference's n × steps: at n = 1e6 its rounds of 1,000 steps would take seconds, beside every round.
# Its per-call cost is about half a step, so even the 100 steps left there keep it a per-step figure.
REFERENCE_MAX_SAMPLE_STEPS = 10**8
# The most trials a benchmark takes, and so the gate's most passes (perf/gate/stages.py).
MAX_TRIALS = 40
# Why a benchmark's trials stopped (extra_info["trials_stopped"]): precise enough; not yet when the budget ended, or at
# MAX_TRIALS; or out of reach (Schedule.within_reach). An unpaired benchmark takes the profile's trials: no ratio of it
# is judged.
PRECISE, BUDGET_SPENT, MOST_TRIALS, OUT_OF_REACH = "precise", "budget", "max_trials", "out_of_reach"


@dataclass(frozen=True)
class Plan:
    """What a benchmark times: run(steps) on the seed problem at n, beside the timing reference when paired. study:
    what a study's benchmark records beyond the per-step tables; its step counts are never cut by a round budget."""
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
    trials_s: list[float] = field(default_factory=list)  # each trial's wall time, setup to close
    counted: counting.Counted | None = None  # its instructions a step, where the run counts (--count)

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
    profile.max_round_s, but for profile.full_count_solvers, whose rounds are estimated all the same."""
    budget = math.inf if solver.name in profile.full_count_solvers else profile.max_round_s
    with prepared(solver, seed_problem(n, iterations=steps), device) as (run, _):  # a session of its own, untimed
        plan = round_plan(run, steps, budget, profile.probe_steps)
    return plan.steps, plan.round_s


def steps_within_budget(solver, device, plan: Plan, profile) -> int:
    """budgeted_steps where the profile sets a round budget, but for a study; a terminal hears what a round takes."""
    if profile.max_round_s is None or plan.study:
        return plan.steps
    steps, round_s = budgeted_steps(solver, device, plan.n, plan.steps, profile)
    progress.expected(label(solver, device, plan.n), profile.trials, profile.rounds_per_trial, round_s, steps)
    return steps


@dataclass
class Spent:
    """What the budget bought: extra_info["budget"], which docs/extra-info.md spells out field by field."""
    budget_s: float
    passes: int = 0
    seconds: float = 0.0
    trials: int = 0
    start_s: float = 0.0


class Schedule:
    """The run's benchmarks (nodeid -> Scheduled) and their trials, all taken at the first call of run()."""

    def __init__(self, pool, profile, seed: int, threshold: float = DEFAULT_THRESHOLD, budget_s: float | None = None,
                 count_processes: int = 0):
        self.pool, self.profile, self.seed, self.threshold = pool, profile, seed, threshold
        self.count_processes = count_processes  # --count: this many counted processes after the timing; 0: none
        self.spent = Spent(profile.budget_s if budget_s is None else budget_s)
        self.benchmarks: dict[str, Scheduled] = {}
        self.done = False

    def add(self, nodeid: str, solver, device: str, plan: Plan) -> None:
        self.benchmarks[nodeid] = Scheduled(solver, device, plan)

    def run(self) -> None:
        """Every benchmark's rounds sized, then the profile's passes, then those until each is precise enough; then,
        where the run counts, the counts."""
        if self.done:
            return
        self.done, rng = True, random.Random(self.seed)
        for scheduled in self.benchmarks.values():
            self.prepare(scheduled)
        for index in range(self.profile.trials):
            passed = time.perf_counter()
            self.timed_pass(index, going := self.going(), rng)
            progress.pass_done(index + 1, self.profile.trials, len(going), time.perf_counter() - passed)
        self.until_precise(rng)
        if self.count_processes:
            self.counted()

    def counted(self) -> None:
        """Every paired benchmark's instructions a step (perf/measure/counting.py), after the last timed round: the
        counts run on every CPU at once."""
        keys = {Key(scheduled.solver.name, scheduled.device, scheduled.plan.n): scheduled
                for scheduled in self.going() if scheduled.plan.paired}
        began = time.perf_counter()
        found = counting.counted(self.pool.version, self.pool.threads, list(keys), self.count_processes)
        for key, scheduled in keys.items():
            scheduled.counted = found[key]
        progress.counted(len(keys), self.count_processes, time.perf_counter() - began)

    def until_precise(self, rng: random.Random) -> None:
        """Passes past the profile's, each a trial of every benchmark not yet precise enough that can still become
        so (within_reach), until none is left, or MAX_TRIALS, or the budget is spent; those left say why they
        stopped."""
        spent = self.spent
        for index in itertools.count(self.profile.trials):
            if not (imprecise := self.stop_the_precise()):
                return
            at_most = index >= MAX_TRIALS
            if at_most or spent.seconds >= spent.budget_s:
                for scheduled in imprecise:
                    scheduled.stopped = MOST_TRIALS if at_most else BUDGET_SPENT
                progress.imprecise_left([scheduled.label for scheduled in imprecise], self.threshold,
                                        f"after {MAX_TRIALS} trials" if at_most
                                        else f"when the {spent.budget_s:.0f} s budget ended")
                return
            if not (imprecise := self.within_reach(imprecise, spent.budget_s - spent.seconds)):
                return
            began = time.perf_counter()
            self.timed_pass(index, imprecise, rng)
            spent.passes, spent.trials = spent.passes + 1, spent.trials + len(imprecise)
            spent.seconds += time.perf_counter() - began
            progress.extra_pass_done(index + 1, [scheduled.label for scheduled in imprecise], self.threshold,
                                 spent.seconds, spent.budget_s)

    def within_reach(self, imprecise: list[Scheduled], left_s: float) -> list[Scheduled]:
        """Those of imprecise that can still become precise enough: each needs (trials_needed, which errs low) no more
        trials than MAX_TRIALS, nor more passes than left_s buys at what a pass of them costs, as measured. The one
        that needs the most passes goes first, and the passes are counted again without it; those that go stop
        OUT_OF_REACH."""
        reachable = []
        for scheduled in imprecise:
            ratios = scheduled.measured.trial_ratios()
            needed = trials_needed(ratios, self.threshold) if len(ratios) >= 3 else 0.0
            if needed > MAX_TRIALS:
                scheduled.stopped = OUT_OF_REACH
            else:
                reachable.append((needed - len(ratios), scheduled))
        reachable.sort(key=lambda pair: pair[0])
        while reachable:
            pass_s = self.spent.start_s + sum(statistics.median(scheduled.trials_s) for _, scheduled in reachable)
            if reachable[-1][0] <= left_s / pass_s:
                break
            reachable.pop()[1].stopped = OUT_OF_REACH
        return [scheduled for _, scheduled in reachable]

    def going(self) -> list[Scheduled]:
        return [scheduled for scheduled in self.benchmarks.values() if scheduled.failure is None]

    def stop_the_precise(self) -> list[Scheduled]:
        """Stops PRECISE each paired benchmark still going whose trials can call the threshold; returns the others."""
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
        """Trial index of each of benchmarks, on worker index, in a shuffled order; a failure stops its benchmark.
        Past the profile's trials, the pass's fresh worker starts these benchmarks' processes alone."""
        if index >= self.profile.trials:
            began = time.perf_counter()
            self.pool.extra(index, [scheduled.solver.name for scheduled in benchmarks])
            self.spent.start_s = time.perf_counter() - began
        for scheduled in rng.sample(benchmarks, len(benchmarks)):
            began = time.perf_counter()
            try:
                scheduled.measured.trial(self.pool[index])  # a worker that stopped is replaced first
            except (TrialError, WorkerStopped) as error:
                scheduled.failure = error
            scheduled.trials_s.append(time.perf_counter() - began)

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
