"""Time one FSSGD run per solver × device × n; every timed answer is checked against its float64 expected answer."""

from perf.measure.benchmark import benchmarked
from solvers.problem import seed_problem


def test_fssgd(benchmark, solver, device, n, profile):
    benchmark.group = f"n={n}"  # one table per size, solvers side by side
    steps = profile.steps_at(n)
    benchmarked(benchmark, solver, device, seed_problem(n, iterations=steps), steps, profile, paired=True)
