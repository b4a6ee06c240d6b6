"""solvers.accuracy: the steps to a stated accuracy, checked against the loops they stand for."""

import pytest

import solvers

from solvers import accuracy
from solvers.problem import seed_problem
from solvers.answers import gradient_descent, standardized_gradient_descent

# Found by solvers.accuracy on the seed data and pinned here, so a change to the data or the method shows.
STANDARDIZED_STEPS_TO_1E3 = 31
RAW_STEPS_TO_1E3 = 137_957


def error_after(expected, iterations):
    problem = seed_problem()
    return accuracy.fit_error(expected(problem, iterations), problem)


def test_standardized_x_reaches_the_target_in_31_steps_and_not_in_30():
    needed, error = accuracy.iterations_to_accuracy(standardized_gradient_descent, seed_problem(), 1e-3)
    assert needed == STANDARDIZED_STEPS_TO_1E3
    # The loop itself agrees: the first K within the target, and the error reported is its error.
    assert error_after(standardized_gradient_descent, needed) == pytest.approx(error, rel=1e-9)
    assert error <= 1e-3
    assert error_after(standardized_gradient_descent, needed - 1) > 1e-3


def test_raw_x_needs_about_138_thousand_steps_and_the_matrix_power_agrees_at_the_boundary():
    problem = seed_problem()
    needed, error = accuracy.iterations_to_accuracy(gradient_descent, problem, 1e-3)
    assert needed == RAW_STEPS_TO_1E3 and error <= 1e-3
    # numpy_affine_power gives the loop's iterates in O(log K), where the loop would take seconds.
    with solvers.get("numpy_affine_power").prepare(problem, "cpu") as run:
        assert accuracy.fit_error(run(needed), problem) <= 1e-3 < accuracy.fit_error(run(needed - 1), problem)


def test_raw_x_is_short_of_the_target_after_the_questions_1e5_steps():
    needed, error = accuracy.iterations_to_accuracy(gradient_descent, seed_problem(), 1e-3, max_iterations=100_000)
    assert needed is None
    assert error == pytest.approx(error_after(gradient_descent, 100_000), rel=1e-9) and error > 1e-3


@pytest.mark.parametrize("target", [1e-2, 3e-4])
def test_raw_first_step_within_target_matches_the_reference_loop_at_the_boundary(target):
    # The affine map stands in for O(n) steps; at the boundary K* - 1 / K* the loop must agree with it.
    problem = seed_problem(100)  # a small n keeps the loop cheap at ~1e5 steps
    needed, _ = accuracy.iterations_to_accuracy(gradient_descent, problem, target)
    assert accuracy.fit_error(gradient_descent(problem, needed), problem) <= target
    assert accuracy.fit_error(gradient_descent(problem, needed - 1), problem) > target


def test_chunk_boundaries_do_not_shift_the_answer(monkeypatch):
    monkeypatch.setattr(accuracy, "CHUNK", 7)
    assert accuracy.iterations_to_accuracy(standardized_gradient_descent, seed_problem(), 1e-3)[0] == (
        STANDARDIZED_STEPS_TO_1E3)


def test_a_cap_below_the_answer_reports_the_error_left_at_the_cap():
    needed, error = accuracy.iterations_to_accuracy(standardized_gradient_descent, seed_problem(), 1e-3,
                                                     max_iterations=10)
    assert needed is None
    assert error == pytest.approx(error_after(standardized_gradient_descent, 10), rel=1e-9)
    assert error > 1e-3


def test_the_descent_behind_each_expected_answer():
    problem = seed_problem()
    raw, standardized = (accuracy.descent_of(expected, problem)
                         for expected in (gradient_descent, standardized_gradient_descent))
    assert (raw.x_scaling, raw.problem.lr) == ("raw", problem.lr)
    assert (standardized.x_scaling, standardized.problem.lr) == ("standardized", 0.1)
    assert standardized.problem.x.mean() == pytest.approx(0, abs=1e-12)
    assert standardized.problem.x.std() == pytest.approx(1)
