"""Time one FSSGD run per solver × device × n; every timed answer is checked against its float64 expected answer."""

from perf.measure.benchmark import Plan


def plan(n, profile) -> Plan:
    """The profile's steps at n, every round beside the timing reference's."""
    return Plan(n, profile.steps_at(n), paired=True)


def test_fssgd(benchmark, measurement, solver, device, n):
    benchmark.group = f"n={n}"  # one table per size, solvers side by side
    measurement.reported(benchmark)
