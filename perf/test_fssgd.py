"""Time one FSSGD run per solver × device × n; every timed answer is checked against its float64 expected answer."""

from perf.measure.benchmark import benchmarked


def test_fssgd(benchmark, workers, solver, device, n, profile):
    benchmark.group = f"n={n}"  # one table per size, solvers side by side
    benchmarked(benchmark, workers, solver, device, n, profile.steps_at(n), profile, paired=True)
