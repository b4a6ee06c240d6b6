"""The expected answers: float64 descent and the closed form, checked against NumPy's least squares and the original report."""

import numpy as np
import pytest

from solvers.problem import Fit, Problem, seed_problem
from solvers.answers import closed_form, gradient_descent, mismatch


def standardized(x):
    return (x - x.mean()) / x.std()


@pytest.mark.parametrize(
    "slope, intercept, low, high, noise",
    [(3.0, -2.0, 0, 1, 0.0), (-0.5, 40.0, -10, 10, 0.3), (1e-3, 5.0, 100, 200, 1e-4), (7.0, 0.0, 0, 100, 5.0)],
)
def test_closed_form_matches_numpy_least_squares(slope, intercept, low, high, noise):
    rng = np.random.default_rng(0)
    x = rng.uniform(low, high, 500)
    y = slope * x + intercept + noise * rng.standard_normal(500)
    w, b = closed_form(Problem(x, y, lr=0.1, iterations=1))
    (expected_w, expected_b), *_ = np.linalg.lstsq(np.column_stack([x, np.ones_like(x)]), y, rcond=None)
    np.testing.assert_allclose([w, b], [expected_w, expected_b], rtol=1e-9)
    if noise == 0:
        np.testing.assert_allclose([w, b], [slope, intercept], rtol=1e-9)


@pytest.mark.parametrize("slope, intercept", [(2.0, 1.0), (-3.0, 0.5), (0.25, -4.0)])
def test_gradient_descent_converges_to_the_closed_form_on_well_conditioned_data(slope, intercept):
    x = standardized(np.linspace(-1, 3, 200))
    y = slope * x + intercept + np.sin(7 * x)
    problem = Problem(x, y, lr=0.1, iterations=300)
    fit = gradient_descent(problem)
    np.testing.assert_allclose([fit.w, fit.b], closed_form(problem), rtol=1e-10)
    assert fit.loss == pytest.approx(np.mean((y - (fit.w * x + fit.b)) ** 2))


def test_one_step_is_the_textbook_update():
    problem = Problem(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 7.0]), lr=0.01, iterations=1)
    fit = gradient_descent(problem)
    # From w = b = 0: grad_w = -2/n·Σx·y = -2/3·31, grad_b = -2/n·Σy = -2/3·13.
    assert fit.w == pytest.approx(0.01 * 2 / 3 * 31)
    assert fit.b == pytest.approx(0.01 * 2 / 3 * 13)


def test_raw_seed_steps_stop_short_of_the_closed_form_as_reported():
    # The answer (README): the original 1e5 raw steps end at b = 20.14 where the least-squares answer is 20.27.
    fit = gradient_descent(seed_problem())
    _, closed_b = closed_form(seed_problem())
    assert fit.b == pytest.approx(20.14, abs=0.01)
    assert closed_b == pytest.approx(20.27, abs=0.01)


def test_mismatch_names_the_wrong_field_and_accepts_the_right_one():
    expected = Fit(w=1.0, b=2.0, loss=3.0, iterations=10)
    assert mismatch(expected, expected, "float64") is None
    assert mismatch(Fit(1.0 + 1e-6, 2.0, 3.0, 10), expected, "float32") is None
    assert "w = " in mismatch(Fit(1.0 + 1e-6, 2.0, 3.0, 10), expected, "float64")
    assert "b = " in mismatch(Fit(1.0, 2.1, 3.0, 10), expected, "float32")
    assert "ran 9 steps" in mismatch(Fit(1.0, 2.0, 3.0, 9), expected, "float64")
