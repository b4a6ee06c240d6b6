"""Time to accuracy: wall time and steps to the closed form within accuracy.TARGET, raw x vs standardized x."""

import pytest

from perf.measure.benchmark import benchmarked
from solvers import accuracy
from solvers.answers import TOLERANCE
from solvers.problem import SEED_N, seed_problem

# Raw x at lr 1e-4: the original NumPy loop, the same loop without redundant passes, the in-graph loops.
# Standardized x at lr 0.1: the same NumPy and in-graph loops. tf1_feed_dict is left out: ~40 s a round here.
SOLVERS = ("numpy_loop", "numpy_lean", "tf1_while_loop", "tf2_function_xla",
           "numpy_standardized", "tf1_while_loop_standardized")

pytestmark = pytest.mark.full_profile


def test_time_to_accuracy(benchmark, workers, solver, device, profile):
    benchmark.group = f"time to accuracy {accuracy.TARGET:g} n={SEED_N}"
    problem = seed_problem(SEED_N)
    # Aim the float64 expected answer tighter by the dtype's tolerance, so that an answer that far from it
    # (float32) is still within the target.
    needed, _ = accuracy.iterations_to_accuracy(solver.expected, problem, accuracy.TARGET - TOLERANCE[solver.dtype])
    iterations = needed or accuracy.MAX_ITERATIONS
    descent = accuracy.descent_of(solver.expected, problem)
    fit = benchmarked(benchmark, workers, solver, device, SEED_N, iterations, profile, figure="time_to_accuracy",
                      x_scaling=descent.x_scaling, lr=descent.problem.lr)
    error = accuracy.fit_error(fit, problem)
    assert needed is None or error <= accuracy.TARGET, f"relative error {error:.3g} after {iterations:,} steps"
    benchmark.extra_info["time_to_accuracy"] = {"target": accuracy.TARGET, "iterations": iterations,
                                                "reached": error <= accuracy.TARGET, "error": error}
