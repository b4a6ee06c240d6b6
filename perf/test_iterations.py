"""Total time against the step count K at n = 1,000: one-off setup apart from the cost of each step."""

import pytest

from perf.measure.benchmark import benchmarked
from solvers.problem import SEED_N

# The loops whose one-off and per-step costs differ most: the original two, the in-graph loops, XLA.
SOLVERS = ("numpy_loop", "tf1_feed_dict", "tf1_while_loop", "tf2_function", "tf2_function_xla")
ITERATION_COUNTS = (10, 100, 1_000, 10_000)

pytestmark = pytest.mark.full_profile


# Zero-padded ids sort by K: test_iterations[tf1_while_loop-cpu-k01000].
@pytest.mark.parametrize("iterations", ITERATION_COUNTS, ids=[f"k{k:05d}" for k in ITERATION_COUNTS])
def test_iterations(benchmark, workers, solver, device, iterations, profile):
    benchmark.group = f"iterations n={SEED_N}"
    benchmarked(benchmark, workers, solver, device, SEED_N, iterations, profile, figure="iteration_sweep")  # the study's id
