"""Every benchmark's measurement under pytest-benchmark: trials paired with the timing reference, the answer checked,
what was measured recorded in extra_info (docs/extra-info.md)."""

import gc
import math
from contextlib import contextmanager
from functools import partial

import pytest

import solvers
from perf.measure import TIMING_REFERENCE, environment, progress
from perf.measure.solver_runs import Misplaced, answer_mismatch, prepared, round_plan
from perf.measure.trials import Trials, slowdown_of
from solvers import tensorflow_support

# Caps the timing reference's n × steps: at n = 1e6 a round of 1,000 steps takes 5 s, beside every round. Its
# per-call cost is half a step, so the 100 steps left there move its per-step time by 0.5%.
REFERENCE_MAX_SAMPLE_STEPS = 10**8


def benchmarked(benchmark, solver, device, problem, steps: int, profile, paired: bool = False, **study):
    """The fit of the timed run(steps) on problem, its answer checked, recorded with study's extra_info.

    paired: time a round of the timing reference beside every round. A profile with a round budget (seed) runs
    fewer steps where a round would take longer, and records it; never a study's benchmark, whose step counts
    are the study. Skips the test when TensorFlow runs out of device memory; fails it when TensorFlow ran the
    ops elsewhere.
    """
    label = f"{solver.name} {device} n={problem.n:,}"
    asked = steps
    if profile.max_round_s is not None and not study:
        steps, round_s = budgeted_steps(solver, device, problem, steps, profile)
        if not benchmark.disabled:
            progress.expected(label, profile.trials, round_s, steps)
    paired = paired and (solver.name, device) != TIMING_REFERENCE
    try:
        fit, trials, placement = measured_unless_out_of_memory(benchmark, solver, device, problem, steps, profile,
                                                               paired, label)
    except Misplaced as error:
        pytest.fail(str(error), pytrace=False)
    error = answer_mismatch(fit, solver, problem.n)
    assert error is None, error
    record(benchmark, solver, device, problem.n, fit, trials, placement, paired, **study)
    if steps != asked:
        benchmark.extra_info["steps_reduced_from"] = asked
    if profile.shrink != 1:
        benchmark.extra_info["shrink"] = profile.shrink
    return fit


def budgeted_steps(solver, device, problem, steps: int, profile) -> tuple[int, float]:
    """(steps a round runs, its estimated seconds): steps, or fewer where a round would last longer than
    profile.max_round_s; the seed's own programs (profile.full_count_solvers) always run them all, and their
    rounds, the longest, are estimated all the same, so that a terminal hears how long each will take."""
    budget = math.inf if solver.name in profile.full_count_solvers else profile.max_round_s
    with prepared(solver, problem, device) as (run, _):  # a session of its own, never a timed one
        plan = round_plan(run, steps, budget, profile.probe_steps)
    return plan.steps, plan.round_s


def measured_unless_out_of_memory(benchmark, solver, device, problem, steps, profile, paired, label):
    out_of_memory = None
    try:
        return measured(benchmark, solver, device, problem, steps, profile, paired, label)
    except Exception as error:
        if not tensorflow_support.is_out_of_memory(error):
            raise
        out_of_memory = str(error).strip().splitlines()[0]
    # Outside the except block, so the error's frames (and the device buffers they hold) are gone first.
    gc.collect()
    pytest.skip(f"out of memory: {solver.name} on {device} at n = {problem.n} ({out_of_memory})")


def measured(benchmark, solver, device, problem, steps, profile, paired, label):
    """(fit, Trials or None, placement): the trials, placement checked in the first; untimed under --benchmark-disable.

    The first trial warms up at the full count when the profile says so or the solver compiles per count (XLA);
    otherwise the setup's call of one step is the warm-up.
    """
    placement = {}

    def open_run(first_trial):
        return prepared(solver, problem, device, placement if first_trial else None)

    if benchmark.disabled:  # nothing is timed: one setup and one call check the answer
        with open_run(True) as (run, _):
            return benchmark.pedantic(run, args=(steps,)), None, placement.get("devices")
    with Trials(open_run, steps, profile.trials, profile.rounds_per_trial,
                partial(reference_beside, problem, reference_steps(problem.n, steps)) if paired else None,
                slowdown=slowdown_of(solver.name), full_warm_up=profile.full_warm_up or solver.compiles_per_count,
                on_round=partial(progress.round_done, label)) as trials:
        fit = benchmark.pedantic(trials.call, setup=trials.setup, teardown=trials.teardown, rounds=trials.total_rounds)
    return fit, trials, placement.get("devices")


def reference_steps(n: int, steps: int) -> int:
    return min(steps, max(1, REFERENCE_MAX_SAMPLE_STEPS // n))


@contextmanager
def reference_beside(problem, steps: int):
    """The timing reference's run on the same problem, at its own step count whatever the benchmark's."""
    solver, device = TIMING_REFERENCE
    with solvers.get(solver).prepare(problem, device) as run:
        yield lambda _: run(steps)


def record(benchmark, solver, device, n, fit, trials, placement, paired, **study):
    """What was measured, as docs/extra-info.md lists it; what is derived from it is the analysis layer's."""
    info = benchmark.extra_info
    info.update(solver=solver.name, device=device, device_name=environment.device_name(device), n=n,
                iterations=fit.iterations, dtype=solver.dtype, w=fit.w, b=fit.b, loss=fit.loss, placement=placement,
                **environment.versions(), **study)
    if (slowdown := slowdown_of(solver.name)) != 1:
        info["slowdown"] = slowdown
    if trials is None:  # --benchmark-disable: nothing was timed
        return
    first = trials.trials[0]
    info.update(trials=len(trials.trials), rounds_per_trial=trials.rounds_per_trial,
                trial_medians_s=[trial.median_s() for trial in trials.trials], setup_s=first.setup_s,
                first_run_s=first.first_run_s, warm_up_each_trial=trials.warm_up_each_trial)
    if paired:
        info.update(reference="-".join(TIMING_REFERENCE), reference_iterations=reference_steps(n, fit.iterations),
                    reference_trial_medians_s=[trial.reference_median_s() for trial in trials.trials])
