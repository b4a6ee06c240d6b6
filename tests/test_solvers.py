"""Every registered solver gives its expected answer, on the seed data and on other data."""

from dataclasses import replace

import numpy as np
import pytest

import solvers
from solvers.answers import TOLERANCE, affine_descent, closed_form, gradient_descent, mismatch
from solvers.problem import Problem, seed_problem


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
def test_gives_its_expected_answer(solver, name):
    problem = PROBLEMS[name]
    with solver.prepare(problem, "cpu") as run:
        fit = run()
    error = mismatch(fit, solver.expected(problem), solver.dtype)
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
        error = mismatch(fit, solver.expected(problem, iterations), solver.dtype)
        assert error is None, error


def test_one_process_prepares_more_problems_than_a_compilers_cache_holds(solver):
    """Each size is a compile where a solver compiles: ten in one process, past dynamo's recompile limit of 8 (the
    worker and the test process prepare many), each still gives its expected answer."""
    for n in range(20, 220, 20):
        problem = seed_problem(n, iterations=5)
        with solver.prepare(problem, "cpu") as run:
            fit = run()
        error = mismatch(fit, solver.expected(problem), solver.dtype)
        assert error is None, f"n = {n}: {error}"


def one_step_short(descent):
    """descent with a fault: it stops one step early and says it ran them all."""
    return lambda problem, iterations=None: replace(descent(problem, (iterations or problem.iterations) - 1),
                                                    iterations=iterations or problem.iterations)


# Solvers that time an expected answer's own code (solvers/answers.py), and where that code is looked up.
TIMING_AN_ANSWER = {"numpy_lean": ("solvers.numpy_lean.gradient_descent", gradient_descent),
                    "numpy_standardized": ("solvers.numpy_lean.gradient_descent", gradient_descent),
                    "numpy_affine_power": ("solvers.numpy_affine_power.affine_descent", affine_descent)}


@pytest.mark.parametrize("name", TIMING_AN_ANSWER)
def test_a_fault_in_code_that_is_also_an_answer_fails_its_answer_check(name, monkeypatch):
    # Each is checked against the other formulation, so its check does not compare a function with itself.
    target, descent = TIMING_AN_ANSWER[name]
    monkeypatch.setattr(target, one_step_short(descent))
    solver, problem = solvers.get(name), seed_problem(1000, iterations=20)  # before standardized x converges
    with solver.prepare(problem, "cpu") as run:
        fit = run()
    assert fit.iterations == 20 and mismatch(fit, solver.expected(problem), solver.dtype) is not None
