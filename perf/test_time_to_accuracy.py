"""Time to accuracy: wall time and steps to the closed form within accuracy.TARGET, raw x vs standardized x."""

from functools import cache

import pytest

from perf.measure.benchmark import Plan
from solvers import accuracy
from solvers.answers import TOLERANCE
from solvers.problem import SEED_N, seed_problem

# Raw x at lr 1e-4: the original NumPy loop, the same loop without redundant passes, the in-graph loops.
# Standardized x at lr 0.1: the same NumPy and in-graph loops. tf1_feed_dict is left out: its round of every raw
# step, one Session.run each, is the slowest round of the suite by far (docs/results/README.md#wall-times).
SOLVERS = ("numpy_loop", "numpy_lean", "tf1_while_loop", "tf2_function_xla",
           "numpy_standardized", "tf1_while_loop_standardized")

pytestmark = pytest.mark.full_profile


@cache
def steps_needed(solver) -> int | None:
    """The first step count at which the solver's float64 expected answer is within the target, aimed tighter by
    its dtype's tolerance so that an answer that far from it (float32) is still within; None: not by MAX_ITERATIONS."""
    return accuracy.iterations_to_accuracy(solver.expected, seed_problem(SEED_N),
                                           accuracy.TARGET - TOLERANCE[solver.dtype])[0]


def plan(solver) -> Plan:
    descent = accuracy.descent_of(solver.expected, seed_problem(SEED_N))
    return Plan(SEED_N, steps_needed(solver) or accuracy.MAX_ITERATIONS,
                study={"figure": "time_to_accuracy", "x_scaling": descent.x_scaling, "lr": descent.problem.lr})


def test_time_to_accuracy(benchmark, measurement, solver, device):
    benchmark.group = f"time to accuracy {accuracy.TARGET:g} n={SEED_N}"
    fit = measurement.reported(benchmark)
    error, needed = accuracy.fit_error(fit, seed_problem(SEED_N)), steps_needed(solver)
    assert needed is None or error <= accuracy.TARGET, f"relative error {error:.3g} after {fit.iterations:,} steps"
    benchmark.extra_info["time_to_accuracy"] = {"target": accuracy.TARGET, "iterations": fit.iterations,
                                                "reached": error <= accuracy.TARGET, "error": error}
