"""What every benchmark does around its timed call: untimed setup, the answer checked, extra_info recorded."""

import time
from contextlib import contextmanager
from functools import cache

from perf import environment
from solvers.problem import seed_problem
from solvers.reference import mismatch

# Rounds of this many steps or more take seconds for the per-call solvers (tf1_feed_dict: ~3 s at 1e4).
LONG_ROUND_ITERATIONS = 10_000
LONG_ROUNDS = 3


@contextmanager
def prepared(solver, problem, device):
    """(run, setup_s): prepare plus a first call, the one-off cost kept out of the timed rounds."""
    started = time.perf_counter()
    with solver.prepare(problem, device) as run:
        run(1)  # the first call builds executors and allocates: setup, not steady state
        yield run, time.perf_counter() - started


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


def record(benchmark, solver, device, n, fit, setup_s, **figure):
    """The extra_info every benchmark carries (DESIGN.md), plus what its figure needs."""
    stats = benchmark.stats.stats if benchmark.stats else None  # None under --benchmark-disable
    benchmark.extra_info.update(
        solver=solver.name, device=device, device_name=environment.device_name(device), n=n,
        iterations=fit.iterations, dtype=solver.dtype, setup_s=setup_s,
        per_iteration_us=stats.median / fit.iterations * 1e6 if stats else None,
        w=fit.w, b=fit.b, loss=fit.loss, **environment.versions(), **figure,
    )
