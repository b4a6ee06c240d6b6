"""Every registered solver gives the float64 reference's answer, on the seed data and on other data."""

import numpy as np
import pytest

from solvers.problem import Problem, seed_problem
from solvers.reference import TOLERANCE, closed_form, mismatch


def line(slope, intercept, x, noise=0.0, seed=0):
    y = slope * x + intercept + noise * np.random.default_rng(seed).standard_normal(len(x))
    return x, y


PROBLEMS = {
    "seed": seed_problem(1000, iterations=1000),
    "seed-n100": seed_problem(100, iterations=500),
    "negative-slope": Problem(*line(-3.0, 10.0, np.linspace(-5, 5, 300)), lr=0.01, iterations=500),
    "shifted-range": Problem(*line(0.5, -20.0, np.linspace(50, 60, 400)), lr=1e-4, iterations=2000),
    "noisy-unit-range": Problem(*line(4.0, 1.0, np.random.default_rng(1).uniform(0, 1, 800), noise=0.5), lr=0.3, iterations=300),
}


@pytest.mark.parametrize("name", PROBLEMS)
def test_matches_the_float64_reference(solver, name):
    problem = PROBLEMS[name]
    with solver.prepare(problem, "cpu") as run:
        fit = run()
    error = mismatch(fit, solver.reference(problem), solver.dtype)
    assert error is None, error
    assert fit.loss == pytest.approx(np.mean((problem.y - (fit.w * problem.x + fit.b)) ** 2), rel=TOLERANCE[solver.dtype])


@pytest.mark.parametrize("slope, intercept", [(2.0, 1.0), (-0.7, 30.0)])
def test_converges_to_the_closed_form_on_standardized_data(solver, slope, intercept):
    x = np.linspace(0, 100, 1000, endpoint=False)
    x = (x - x.mean()) / x.std()
    problem = Problem(*line(slope, intercept, x, noise=0.1), lr=0.1, iterations=300)
    with solver.prepare(problem, "cpu") as run:
        fit = run()
    np.testing.assert_allclose([fit.w, fit.b], closed_form(problem), rtol=10 * TOLERANCE[solver.dtype])


def test_every_round_starts_from_zero_and_does_the_same_work(solver):
    problem = seed_problem(1000, iterations=200)
    with solver.prepare(problem, "cpu") as run:
        first, second = run(), run()
    assert first == second


def test_one_prepared_run_serves_every_iteration_count(solver):
    problem = seed_problem(1000, iterations=50)
    with solver.prepare(problem, "cpu") as run:
        fits = {iterations: run(iterations) for iterations in (1, 7, 50)}
    for iterations, fit in fits.items():
        assert fit.iterations == iterations
        error = mismatch(fit, solver.reference(problem, iterations), solver.dtype)
        assert error is None, error
