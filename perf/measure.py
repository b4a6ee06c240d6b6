"""The one measurement path of every benchmark: trials of untimed setup and warm-up, timed rounds, answer checked."""

import gc
import math
import statistics
import time
from contextlib import ExitStack, contextmanager, nullcontext
from functools import cache, partial

import pytest

import solvers
from perf import environment, estimators, progress
from perf.trials import Trials, slowdown_of, timed
from solvers import tensorflow_support
from solvers.problem import seed_problem
from solvers.answers import mismatch

# Every benchmark of the per-step tables is paired with this one, round by round, on the same problem.
REFERENCE_SOLVER, REFERENCE_DEVICE = "numpy_loop", "cpu"
# Caps the reference's n × iterations: at n = 1e6 a round of 1,000 steps takes 5 s, beside every round. Its
# per-call cost is half a step, so the 100 steps left there move its per-step time by 0.5%.
REFERENCE_MAX_SAMPLE_STEPS = 10**8
# The untimed call that estimates a round under a round budget (round_plan): 0.2-2 s for the per-step solvers at n = 1e3.
PROBE_STEPS = 1_000

# TensorFlow reports no per-op placement for these; strict placement (no soft placement) still guards them.
PLACEMENT_UNRECORDED = {"tf2_function_xla": "XLA runs the whole loop as one compiled cluster and reports no op placement"}


def benchmarked(benchmark, solver, device, problem, iterations: int, profile, paired: bool = False, **figure):
    """The fit of the timed run(iterations) on problem, checked against the reference and recorded with figure's extra_info.

    paired: time a REFERENCE_SOLVER round beside every round, for ratios that hold on a noisy machine.
    A profile with a round budget (seed) runs fewer steps where a round would take longer, and records it;
    never a figure's benchmark, whose step counts are the figure.
    Skips the test when TensorFlow runs out of device memory; fails it when TensorFlow ran the ops elsewhere.
    """
    label = f"{solver.name} {device} n={problem.n:,}"
    asked = iterations
    if profile.max_round_s is not None and not figure:
        iterations, round_s = round_plan(solver, device, problem, iterations, profile)
        if not benchmark.disabled:
            progress.expected(label, profile.trials, round_s, iterations)
    fit, trials, placement = measured_unless_out_of_memory(benchmark, solver, device, problem, iterations, profile,
                                                           paired and solver.name != REFERENCE_SOLVER, label)
    assert_matches_reference(fit, solver, problem.n)
    record(benchmark, solver, device, problem.n, fit, trials, placement, **figure)
    if iterations != asked:
        benchmark.extra_info["steps_reduced_from"] = asked
    return fit


def round_plan(solver, device, problem, iterations: int, profile) -> tuple[int, float]:
    """(steps a round runs, its estimated seconds): iterations, or fewer where a round would last longer than
    profile.max_round_s; the seed's own programs (profile.full_count_solvers) always run them all.

    Estimated from one untimed call of PROBE_STEPS on a session of its own, after a warm-up: per-step solvers
    cost the same per step at any count, and for in-graph loops the estimate errs long (it holds the per-call
    cost).
    """
    probe = min(iterations, PROBE_STEPS)
    with solver.prepare(problem, device) as run:
        run(probe if solver.compiles_per_count else 1)  # XLA compiles anew for the probe's count: not a step's cost
        step_s = timed(run, probe) / probe
    if solver.name in profile.full_count_solvers or step_s * iterations <= profile.max_round_s:
        return iterations, step_s * iterations
    fewer = one_significant_digit(profile.max_round_s / step_s)
    return fewer, step_s * fewer


def one_significant_digit(count: float) -> int:
    """count rounded down to one significant digit (3,750 → 3,000): step counts that read as chosen, not computed."""
    if count < 1:
        return 1
    scale = 10 ** math.floor(math.log10(count))
    return int(count // scale * scale)


def measured_unless_out_of_memory(benchmark, solver, device, problem, iterations, profile, paired, label):
    out_of_memory = None
    try:
        return measured(benchmark, solver, device, problem, iterations, profile, paired, label)
    except Exception as error:
        if not tensorflow_support.is_out_of_memory(error):
            raise
        out_of_memory = str(error).strip().splitlines()[0]
    # Outside the except block, so the error's frames (and the device buffers they hold) are gone first.
    gc.collect()
    pytest.skip(f"out of memory: {solver.name} on {device} at n = {problem.n} ({out_of_memory})")


def measured(benchmark, solver, device, problem, iterations, profile, paired, label):
    """(fit, Trials or None, placement): the trials, placement checked in the first; untimed under --benchmark-disable.

    The first trial warms up at the full count when the profile says so or the solver compiles per count (XLA);
    otherwise the setup's call of one step is the warm-up.
    """
    placement = {}

    def open_run(first_trial):
        return prepared(solver, problem, device, placement if first_trial else None)

    if benchmark.disabled:  # nothing is timed: one setup and one call check the answer
        with open_run(True) as (run, _):
            return benchmark.pedantic(run, args=(iterations,)), None, placement.get("devices")
    with Trials(open_run, iterations, profile.trials, profile.rounds_per_trial,
                partial(reference_beside, problem, reference_iterations(problem.n, iterations)) if paired else None,
                slowdown=slowdown_of(solver.name), full_warm_up=profile.full_warm_up or solver.compiles_per_count,
                on_round=partial(progress.round_done, label)) as trials:
        fit = benchmark.pedantic(trials.call, setup=trials.setup, teardown=trials.teardown, rounds=trials.total_rounds)
    return fit, trials, placement.get("devices")


def reference_iterations(n: int, iterations: int) -> int:
    return min(iterations, max(1, REFERENCE_MAX_SAMPLE_STEPS // n))


@contextmanager
def reference_beside(problem, iterations: int):
    """The reference's run on the same problem, at its own iteration count whatever the benchmark's."""
    with solvers.get(REFERENCE_SOLVER).prepare(problem, REFERENCE_DEVICE) as run:
        yield lambda _: run(iterations)


@contextmanager
def prepared(solver, problem, device, placement: dict | None):
    """(run, setup_s): prepare plus a first call, kept out of the timed rounds; placement, when given a dict, is
    recorded into it and checked."""
    started = time.perf_counter()
    watching = placement is not None and "tensorflow" in solver.needs
    recording = tensorflow_support.recording_placement() if watching else nullcontext(None)
    with ExitStack() as session:  # open until the caller is done; closes the session however it ends
        with recording as placed:  # around setup only: recording slows every op it watches
            run = session.enter_context(solver.prepare(problem, device))
            run(1)  # the first call builds executors and allocates: setup, not steady state
            setup_s = time.perf_counter() - started  # the placement record, taken on the way out, is not setup
        if placed is not None:
            placement["devices"] = PLACEMENT_UNRECORDED.get(solver.name, dict(placed))
            check_placement(solver, device, dict(placed))
        yield run, setup_s


def check_placement(solver, device, placement):
    """Fail before any timing when TensorFlow ran float ops on another device than the one asked for."""
    if solver.name in PLACEMENT_UNRECORDED:
        return
    if reason := tensorflow_support.misplaced(placement, device):
        pytest.fail(f"{solver.name} on {device}: {reason}", pytrace=False)


@cache
def expected(reference, n, iterations):
    """The float64 answer, computed once per size for every solver that shares the reference."""
    return reference(seed_problem(n, iterations))


def assert_matches_reference(fit, solver, n):
    """A fast wrong answer is a failure: fit must be the float64 reference's on the seed data at n."""
    error = mismatch(fit, expected(solver.expected, n, fit.iterations), solver.dtype)
    assert error is None, error


def trial_figures(trials: Trials, n: int, iterations: int) -> dict:
    """What the trials say, for extra_info: the per-step estimate, every trial's median, and the paired ratio.

    per_iteration_us is the fastest trial's median here; for paired benchmarks anchor_to_reference replaces it
    once the whole run is in.
    """
    medians = [trial.median_s() for trial in trials.trials]
    figures = {
        "per_iteration_us": estimators.lowest_trial_median(medians) / iterations * 1e6,
        "trials": len(medians), "rounds_per_trial": trials.rounds_per_trial, "trial_medians_s": medians,
        "setup_s": trials.trials[0].setup_s, "first_run_s": trials.trials[0].first_run_s,
        "warm_up_each_trial": trials.warm_up_each_trial,
    }
    if trials.open_reference:
        reference_medians = [trial.reference_median_s() for trial in trials.trials]
        steps = reference_iterations(n, iterations)
        # Per step on both sides: the reference may run fewer steps a round than the benchmark.
        ratios = estimators.paired_ratios([median / iterations for median in medians],
                                          [median / steps for median in reference_medians])
        ratio, low, high = estimators.median_interval(ratios)
        figures.update(reference=f"{REFERENCE_SOLVER}-{REFERENCE_DEVICE}", reference_trial_medians_s=reference_medians,
                       reference_iterations=steps, ratio_to_reference={"ratio": ratio, "low": low, "high": high})
    return figures


def record(benchmark, solver, device, n, fit, trials, placement, **figure):
    """The extra_info every benchmark carries (DESIGN.md), plus what its figure needs."""
    timing = trial_figures(trials, n, fit.iterations) if trials else {"per_iteration_us": None}  # None: --benchmark-disable
    benchmark.extra_info.update(
        solver=solver.name, device=device, device_name=environment.device_name(device), n=n,
        iterations=fit.iterations, dtype=solver.dtype, **timing,
        w=fit.w, b=fit.b, loss=fit.loss, placement=placement, **environment.versions(), **figure,
    )


def anchor_to_reference(benchmarks: list[dict]) -> None:
    """Per-step times from paired ratios: per_iteration_us = ratio_to_reference × the run's reference per step.

    Why. Benchmarks run minutes apart, and the machine's speed drifts between them, so one benchmark's
    fastest trial over another's carries that drift (1.2-1.35x over three identical quick runs here). Every
    paired ratio was measured beside the reference, and the reference was timed all through the run: the
    median of all its trials' per-step times at the same n is the run's steadiest figure. Applied to
    the JSON pytest-benchmark writes (saved runs and --benchmark-json alike); the reference's own benchmark
    gets that median too.
    """
    pools = {}  # n -> per-step seconds of every reference trial
    for bench in benchmarks:
        info = bench.get("extra_info") or {}
        pool = pools.setdefault(info.get("n"), [])
        if info.get("solver") == REFERENCE_SOLVER and info.get("device") == REFERENCE_DEVICE and not info.get("figure"):
            pool.extend(median / info["iterations"] for median in info.get("trial_medians_s") or [])
        pool.extend(median / info["reference_iterations"] for median in info.get("reference_trial_medians_s") or [])
    for bench in benchmarks:
        info = bench.get("extra_info") or {}
        pool = pools.get(info.get("n"))
        is_reference = info.get("solver") == REFERENCE_SOLVER and not info.get("figure")
        if not pool or not (is_reference or info.get("ratio_to_reference")):
            continue
        reference_us = statistics.median(pool) * 1e6
        ratio = 1.0 if is_reference else info["ratio_to_reference"]["ratio"]
        info.update(per_iteration_us=ratio * reference_us, reference_per_iteration_us=reference_us,
                    reference_trials_pooled=len(pool))
