"""Time one FSSGD run per solver × device × n; every timed answer is checked against the float64 reference."""

import time
from functools import cache

from perf import environment
from solvers.problem import seed_problem
from solvers.reference import mismatch


@cache
def expected(reference, n, iterations):
    """The float64 answer, computed once per size for every solver that shares the reference."""
    return reference(seed_problem(n, iterations))


def test_fssgd(benchmark, solver, device, n, profile):
    benchmark.group = f"n={n}"  # one table per size, solvers side by side
    problem = seed_problem(n, iterations=profile.iterations)
    started = time.perf_counter()
    with solver.prepare(problem, device) as run:
        run(1)  # the first call builds executors and allocates: setup, not steady state
        setup_s = time.perf_counter() - started
        fit = benchmark.pedantic(run, rounds=profile.rounds)

    error = mismatch(fit, expected(solver.reference, n, profile.iterations), solver.dtype)
    assert error is None, error
    stats = benchmark.stats.stats if benchmark.stats else None  # None under --benchmark-disable
    benchmark.extra_info.update(
        solver=solver.name, device=device, device_name=environment.device_name(device), n=n,
        iterations=fit.iterations, dtype=solver.dtype, setup_s=setup_s,
        per_iteration_us=stats.median / fit.iterations * 1e6 if stats else None,
        w=fit.w, b=fit.b, loss=fit.loss, **environment.versions(),
    )
