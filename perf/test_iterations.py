"""Total time against the step count K at n = 1,000: one-off setup apart from the cost of each step."""

import pytest

from perf.measure.benchmark import Plan
from solvers.problem import SEED_N

# The loops whose one-off and per-step costs differ most: the original two, the in-graph loops, XLA.
SOLVERS = ("numpy_loop", "tf1_feed_dict", "tf1_while_loop", "tf2_function", "tf2_function_xla")
ITERATION_COUNTS = (10, 100, 1_000, 10_000)

pytestmark = pytest.mark.full_profile


def plan(iterations) -> Plan:
    return Plan(SEED_N, iterations, study={"figure": "iteration_sweep"})  # the study's id in the report


# Zero-padded ids sort by K: test_iterations[tf1_while_loop-cpu-k01000].
@pytest.mark.parametrize("iterations", ITERATION_COUNTS, ids=[f"k{k:05d}" for k in ITERATION_COUNTS])
def test_iterations(benchmark, measurement, solver, device, iterations):
    benchmark.group = f"iterations n={SEED_N}"
    measurement.reported(benchmark)
