"""Time one FSSGD run per solver × device × n; every timed answer is checked against the float64 reference."""

import gc
import time
from contextlib import ExitStack, nullcontext
from functools import cache

import pytest

from perf import environment
from solvers import tensorflow_support
from solvers.problem import seed_problem
from solvers.reference import mismatch

# TensorFlow reports no per-op placement for these; strict placement (no soft placement) still guards them.
PLACEMENT_UNRECORDED = {"tf2_function_xla": "XLA runs the whole loop as one compiled cluster and reports no op placement"}


@cache
def expected(reference, n, iterations):
    """The float64 answer, computed once per size for every solver that shares the reference."""
    return reference(seed_problem(n, iterations))


def test_fssgd(benchmark, solver, device, n, profile):
    benchmark.group = f"n={n}"  # one table per size, solvers side by side
    problem = seed_problem(n, iterations=profile.iterations)
    out_of_memory = None
    try:
        fit, setup_s, placement = measured(benchmark, solver, device, problem, profile.rounds)
    except Exception as error:
        if not tensorflow_support.is_out_of_memory(error):
            raise
        out_of_memory = str(error).strip().splitlines()[0]
    if out_of_memory:
        # Outside the except block, so the error's frames (and the device buffers they hold) are gone first.
        gc.collect()
        pytest.skip(f"out of memory: {solver.name} on {device} at n = {n} ({out_of_memory})")

    error = mismatch(fit, expected(solver.reference, n, profile.iterations), solver.dtype)
    assert error is None, error
    stats = benchmark.stats.stats if benchmark.stats else None  # None under --benchmark-disable
    benchmark.extra_info.update(
        solver=solver.name, device=device, device_name=environment.device_name(device), n=n,
        iterations=fit.iterations, dtype=solver.dtype, setup_s=setup_s,
        per_iteration_us=stats.median / fit.iterations * 1e6 if stats else None,
        w=fit.w, b=fit.b, loss=fit.loss, placement=PLACEMENT_UNRECORDED.get(solver.name, placement), **environment.versions(),
    )


def measured(benchmark, solver, device, problem, rounds):
    """(fit, setup_s, placement): untimed setup with TensorFlow's placement recorded and checked, then the timed rounds."""
    started = time.perf_counter()
    recording = tensorflow_support.recording_placement() if solver.needs_tensorflow else nullcontext(None)
    with ExitStack() as prepared:  # open until the timing is done; closes the session however it ends
        with recording as placement:
            run = prepared.enter_context(solver.prepare(problem, device))
            run(1)  # the first call builds executors and allocates: setup, not steady state
            setup_s = time.perf_counter() - started  # the placement record, taken on the way out, is not setup
        check_placement(solver, device, placement)
        return benchmark.pedantic(run, rounds=rounds), setup_s, None if placement is None else dict(placement)


def check_placement(solver, device, placement):
    if placement is None or solver.name in PLACEMENT_UNRECORDED:
        return
    reason = tensorflow_support.misplaced(placement, device)
    if reason:
        pytest.fail(f"{solver.name} on {device}: {reason}", pytrace=False)
