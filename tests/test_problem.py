"""The seed data generator is the original program's data, exactly, at every size."""

import numpy as np
import pytest

from solvers.problem import SEED_ITERATIONS, SEED_LR, seed_problem, seed_x, seed_y


def test_seed_size_is_the_original_data_bit_for_bit():
    problem = seed_problem()
    original_x = np.arange(100, step=0.1)
    np.testing.assert_array_equal(problem.x, original_x)
    np.testing.assert_array_equal(problem.y, original_x + 20 * np.sin(original_x / 10) + 15)
    assert (problem.n, problem.lr, problem.iterations) == (1000, SEED_LR, SEED_ITERATIONS)
    assert problem.x.dtype == problem.y.dtype == np.float64


@pytest.mark.parametrize("size", [2, 100, 12_345, 1_000_000])
def test_other_sizes_keep_the_seed_range(size):
    x = seed_x(size)
    np.testing.assert_array_equal(x, np.linspace(0, 100, size, endpoint=False))
    assert len(x) == size and x[0] == 0 and x[-1] < 100
    np.testing.assert_array_equal(seed_y(x), x + 20 * np.sin(x / 10) + 15)


def test_seed_problem_passes_iterations_and_learning_rate_through():
    problem = seed_problem(500, iterations=7, lr=0.01)
    assert (problem.n, problem.iterations, problem.lr) == (500, 7, 0.01)
