"""The two limits of the question: the algebraic one (five sums, O(n + K)) and the conditioning one (standardized x)."""

import numpy as np
import pytest

import solvers
from solvers.problem import seed_problem
from solvers.answers import TOLERANCE, closed_form, gradient_descent, mismatch

SEED_STEP_COUNTS = [1, 2, 10, 1_000, 100_000]


@pytest.fixture(scope="module")
def seed_iterates():
    """The loop's (answers.gradient_descent) (w, b) on the seed data after each of SEED_STEP_COUNTS steps."""
    problem = seed_problem()
    return {iterations: gradient_descent(problem, iterations) for iterations in SEED_STEP_COUNTS}


@pytest.mark.parametrize("name", ["numpy_affine_limit", "numpy_affine_power"])
def test_the_affine_map_gives_the_loops_iterates_on_the_seed_data(name, seed_iterates):
    with solvers.get(name).prepare(seed_problem(), "cpu") as run:
        for iterations, expected in seed_iterates.items():
            fit = run(iterations)
            assert mismatch(fit, expected, "float64") is None, mismatch(fit, expected, "float64")
            assert fit.loss == pytest.approx(expected.loss, rel=TOLERANCE["float64"])


@pytest.mark.parametrize("name", ["numpy_affine_limit", "numpy_affine_power"])
@pytest.mark.parametrize("size", [2, 100, 10_000])
def test_the_affine_map_gives_the_loops_iterates_at_other_sizes(name, size):
    problem = seed_problem(size, iterations=3_000)
    with solvers.get(name).prepare(problem, "cpu") as run:
        fit = run()
    assert mismatch(fit, gradient_descent(problem), "float64") is None


@pytest.mark.parametrize("steps", [100, 200])
def test_standardized_descent_reaches_the_closed_form_in_a_few_hundred_steps(steps):
    problem = seed_problem(iterations=steps)
    with solvers.get("numpy_standardized").prepare(problem, "cpu") as run:
        fit = run()
    np.testing.assert_allclose([fit.w, fit.b], closed_form(problem), rtol=1e-6)


@pytest.mark.tensorflow
def test_standardized_while_loop_reaches_the_closed_form_to_float32_precision():
    problem = seed_problem(iterations=200)
    with solvers.get("tf1_while_loop_standardized").prepare(problem, "cpu") as run:
        fit = run()
    np.testing.assert_allclose([fit.w, fit.b], closed_form(problem), rtol=TOLERANCE["float32"])

