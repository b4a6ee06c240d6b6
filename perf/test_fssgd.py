"""Time one FSSGD run per solver × device × n; every timed answer is checked against the float64 reference."""

from perf.measure import benchmarked
from solvers.problem import seed_problem


def test_fssgd(benchmark, solver, device, n, profile):
    benchmark.group = f"n={n}"  # one table per size, solvers side by side
    iterations = profile.iterations_at(n)
    benchmarked(benchmark, solver, device, seed_problem(n, iterations=iterations), iterations, profile, paired=True)
