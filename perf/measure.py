"""The one measurement path of every benchmark: untimed setup, placement checked, a warm-up, timed rounds, answer checked."""

import gc
import time
from contextlib import ExitStack, contextmanager, nullcontext
from functools import cache

import pytest

from perf import environment
from solvers import tensorflow_support
from solvers.problem import seed_problem
from solvers.reference import mismatch

# Rounds of this many steps or more take seconds for the per-call solvers (tf1_feed_dict: ~3 s at 1e4).
LONG_ROUND_ITERATIONS = 10_000
LONG_ROUNDS = 3

# TensorFlow reports no per-op placement for these; strict placement (no soft placement) still guards them.
PLACEMENT_UNRECORDED = {"tf2_function_xla": "XLA runs the whole loop as one compiled cluster and reports no op placement"}


def benchmarked(benchmark, solver, device, problem, iterations: int, profile, **figure):
    """The fit of the timed run(iterations) on problem, checked against the reference and recorded with figure's extra_info.

    Skips the test when TensorFlow runs out of device memory; fails it when TensorFlow ran the ops elsewhere.
    """
    fit, timings = measured_unless_out_of_memory(benchmark, solver, device, problem, iterations,
                                                 rounds_for(profile, iterations))
    assert_matches_reference(fit, solver, problem.n)
    record(benchmark, solver, device, problem.n, fit, **timings, **figure)
    return fit


def measured_unless_out_of_memory(benchmark, solver, device, problem, iterations, rounds):
    out_of_memory = None
    try:
        return measured(benchmark, solver, device, problem, iterations, rounds)
    except Exception as error:
        if not tensorflow_support.is_out_of_memory(error):
            raise
        out_of_memory = str(error).strip().splitlines()[0]
    # Outside the except block, so the error's frames (and the device buffers they hold) are gone first.
    gc.collect()
    pytest.skip(f"out of memory: {solver.name} on {device} at n = {problem.n} ({out_of_memory})")


def measured(benchmark, solver, device, problem, iterations, rounds):
    """(fit, {setup_s, first_run_s, placement}): setup and its placement checked, one warm-up, then the timed rounds."""
    with prepared(solver, problem, device) as (run, setup_s, placement):
        check_placement(solver, device, placement)
        # Under --benchmark-disable nothing is timed, so the answer check needs no warm-up.
        first_run_s = None if benchmark.disabled else first_call_s(run, iterations)
        fit = benchmark.pedantic(run, args=(iterations,), rounds=rounds)
    return fit, {"setup_s": setup_s, "first_run_s": first_run_s,
                 "placement": PLACEMENT_UNRECORDED.get(solver.name, placement)}


@contextmanager
def prepared(solver, problem, device):
    """(run, setup_s, placement): prepare plus a first call, kept out of the timed rounds, and where TensorFlow ran it."""
    started = time.perf_counter()
    recording = tensorflow_support.recording_placement() if solver.needs_tensorflow else nullcontext(None)
    with ExitStack() as session:  # open until the caller is done; closes the session however it ends
        with recording as placement:  # around setup only: recording slows every op it watches
            run = session.enter_context(solver.prepare(problem, device))
            run(1)  # the first call builds executors and allocates: setup, not steady state
            setup_s = time.perf_counter() - started  # the placement record, taken on the way out, is not setup
        yield run, setup_s, None if placement is None else dict(placement)


def check_placement(solver, device, placement):
    """Fail before any timing when TensorFlow ran float ops on another device than the one asked for."""
    if placement is None or solver.name in PLACEMENT_UNRECORDED:
        return
    if reason := tensorflow_support.misplaced(placement, device):
        pytest.fail(f"{solver.name} on {device}: {reason}", pytrace=False)


def first_call_s(run, iterations: int) -> float:
    """One untimed warm-up call at the benchmark's own K, and its seconds: XLA compiles once per distinct K."""
    started = time.perf_counter()
    run(iterations)
    return time.perf_counter() - started


def rounds_for(profile, iterations: int) -> int:
    return profile.rounds if iterations < LONG_ROUND_ITERATIONS else min(profile.rounds, LONG_ROUNDS)


@cache
def expected(reference, n, iterations):
    """The float64 answer, computed once per size for every solver that shares the reference."""
    return reference(seed_problem(n, iterations))


def assert_matches_reference(fit, solver, n):
    """A fast wrong answer is a failure: fit must be the float64 reference's on the seed data at n."""
    error = mismatch(fit, expected(solver.reference, n, fit.iterations), solver.dtype)
    assert error is None, error


def record(benchmark, solver, device, n, fit, setup_s, first_run_s, placement, **figure):
    """The extra_info every benchmark carries (DESIGN.md), plus what its figure needs."""
    stats = benchmark.stats.stats if benchmark.stats else None  # None under --benchmark-disable
    benchmark.extra_info.update(
        solver=solver.name, device=device, device_name=environment.device_name(device), n=n,
        iterations=fit.iterations, dtype=solver.dtype, setup_s=setup_s, first_run_s=first_run_s,
        per_iteration_us=stats.median / fit.iterations * 1e6 if stats else None,
        w=fit.w, b=fit.b, loss=fit.loss, placement=placement, **environment.versions(), **figure,
    )
