"""Every benchmark's measurement under pytest-benchmark: trials paired with the timing reference, the answer checked,
what was measured recorded in extra_info (docs/extra-info.md)."""

import gc
import math
from functools import partial

import pytest

from perf.measure import TIMING_REFERENCE, environment, progress
from perf.measure.solver_runs import Misplaced, answer_mismatch, prepared, round_plan
from perf.measure.trials import Measured, TrialError, slowdown_of, timed_trials
from perf.measure.worker import WorkerStopped
from solvers import tensorflow_support
from solvers.problem import Fit, seed_problem

# Caps the timing reference's n × steps: at n = 1e6 a round of 1,000 steps takes 5 s, beside every round. Its
# per-call cost is half a step, so the 100 steps left there move its per-step time by 0.5%.
REFERENCE_MAX_SAMPLE_STEPS = 10**8


def benchmarked(benchmark, workers, solver, device, n: int, steps: int, profile, paired: bool = False, **study):
    """The fit of the timed run(steps) on the seed problem at n, trial i in workers[i] (perf/measure/pool.py), its
    answer checked, recorded with study's extra_info.

    paired: time a round of the timing reference beside every round, in the same process. A profile with a round
    budget (seed) runs fewer steps where a round would take longer, and records it; never a study's benchmark,
    whose step counts are the study. Skips the test when TensorFlow runs out of device memory; fails it, without a
    traceback of ours, when TensorFlow ran the ops elsewhere, the answer is wrong or the solver crashed.
    """
    label = f"{solver.name} {device} n={n:,}"
    asked = steps
    if profile.max_round_s is not None and not study:
        steps, round_s = budgeted_steps(solver, device, n, steps, profile)
        if not benchmark.disabled:
            progress.expected(label, profile.trials, round_s, steps)
    paired = paired and (solver.name, device) != TIMING_REFERENCE
    if benchmark.disabled:  # nothing is timed: one setup and one call, here, check the answer
        fit, measured, placement = checked_here(benchmark, solver, device, n, steps, label)
    else:
        measured = timed_in_workers(benchmark, workers, solver, device, n, steps, profile, paired, label)
        fit, placement = Fit(**measured.fit), measured.placement
    record(benchmark, solver, device, n, fit, measured, placement, paired, **study)
    if steps != asked:
        benchmark.extra_info["steps_reduced_from"] = asked
    if profile.shrink != 1:
        benchmark.extra_info["shrink"] = profile.shrink
    return fit


def budgeted_steps(solver, device, n: int, steps: int, profile) -> tuple[int, float]:
    """(steps a round runs, its estimated seconds): steps, or fewer where a round would last longer than
    profile.max_round_s; the seed's own programs (profile.full_count_solvers) always run them all, and their
    rounds, the longest, are estimated all the same, so that a terminal hears how long each will take."""
    budget = math.inf if solver.name in profile.full_count_solvers else profile.max_round_s
    with prepared(solver, seed_problem(n, iterations=steps), device) as (run, _):  # a session of its own, untimed
        plan = round_plan(run, steps, budget, profile.probe_steps)
    return plan.steps, plan.round_s


def checked_here(benchmark, solver, device, n, steps, label):
    """(fit, None, placement): one setup and one call in this process, its placement and answer checked."""
    placement, out_of_memory = {}, None
    try:
        with prepared(solver, seed_problem(n, iterations=steps), device, placement) as (run, _):
            fit = benchmark.pedantic(run, args=(steps,))
    except Misplaced as error:
        pytest.fail(str(error), pytrace=False)
    except Exception as error:
        if not tensorflow_support.is_out_of_memory(error):
            raise
        out_of_memory = str(error)
    if out_of_memory is not None:  # outside the except block, so the error's frames are gone first
        skip_out_of_memory(solver, device, n, out_of_memory)
    if mismatch := answer_mismatch(fit, solver, n):
        pytest.fail(f"{label}: wrong answer: {mismatch}", pytrace=False)
    return fit, None, placement.get("devices")


def timed_in_workers(benchmark, workers, solver, device, n, steps, profile, paired, label) -> Measured:
    """The trials, each in its worker, then their rounds handed to pytest-benchmark as its own round times."""
    request = {"solver": solver.name, "device": device, "n": n, "steps": steps, "calls": 1}
    try:
        measured = timed_trials(workers, request, profile.trials, profile.rounds_per_trial,
                                reference_steps(n, steps) if paired else None,
                                full_warm_up=profile.full_warm_up or solver.compiles_per_count,
                                on_round=partial(progress.round_done, label))
    except TrialError as error:
        if error.kind == OUT_OF_MEMORY:
            skip_out_of_memory(solver, device, n, str(error).removeprefix(f"{error.kind}: "))
        details = "" if error.kind in EXPECTED_FAILURES else f"\n{error.trace or ''}"
        pytest.fail(f"{label}: {error}{details}", pytrace=False)
    except WorkerStopped as error:
        pytest.fail(f"{label}: {error}", pytrace=False)
    replayed(benchmark, measured.rounds_s)
    return measured


# Failures the message says all of; any other carries the worker's traceback.
EXPECTED_FAILURES = ("wrong answer", Misplaced.__name__)
OUT_OF_MEMORY = "ResourceExhaustedError"  # TensorFlow's out-of-memory error, as a worker names it


def skip_out_of_memory(solver, device, n: int, message: str):
    gc.collect()  # the error's frames, and the device buffers they hold, are gone before the next benchmark
    pytest.skip(f"out of memory: {solver.name} on {device} at n = {n} ({message.strip().splitlines()[0]})")


class ReplayedClock:
    """pytest-benchmark's timer for rounds the workers timed: each call of advance() moves it on by the next one."""
    __name__ = "time.perf_counter, in the worker processes"

    def __init__(self, rounds_s: list[float]):
        self.now, self.rounds_s = 0.0, iter(rounds_s)

    def __call__(self) -> float:
        return self.now

    def advance(self):
        self.now += next(self.rounds_s)


def replayed(benchmark, rounds_s: list[float]) -> None:
    """pytest-benchmark's stats, tables and JSON made of exactly these round times: no pipe inside a timed round."""
    clock = ReplayedClock(rounds_s)
    benchmark._timer = clock  # its timer is chosen once per session (--benchmark-timer); this one is per benchmark
    benchmark.pedantic(clock.advance, rounds=len(rounds_s))


def reference_steps(n: int, steps: int) -> int:
    return min(steps, max(1, REFERENCE_MAX_SAMPLE_STEPS // n))


def record(benchmark, solver, device, n, fit, measured, placement, paired, **study):
    """What was measured, as docs/extra-info.md lists it; what is derived from it is the analysis layer's."""
    info = benchmark.extra_info
    info.update(solver=solver.name, device=device, device_name=environment.device_name(device), n=n,
                iterations=fit.iterations, dtype=solver.dtype, w=fit.w, b=fit.b, loss=fit.loss, placement=placement,
                **environment.versions(), **study)
    if (slowdown := slowdown_of(solver.name)) != 1:
        info["slowdown"] = slowdown
    if measured is None:  # --benchmark-disable: nothing was timed
        return
    trials = measured.trials
    first = trials[0]
    info.update(trials=len(trials), rounds_per_trial=measured.rounds_per_trial,
                trial_medians_s=[trial.median_s() for trial in trials], setup_s=first.setup_s,
                first_run_s=first.first_run_s, warm_up_each_trial=measured.warm_up_each_trial,
                trial_processes=[trial.process for trial in trials])
    if paired:
        info.update(reference="-".join(TIMING_REFERENCE), reference_iterations=reference_steps(n, fit.iterations),
                    reference_trial_medians_s=[trial.reference_median_s() for trial in trials])
