"""Bad input is refused with an exception naming the field and the value, the same way by every solver.

Every solver takes a Problem (and refuses anything else), so a Problem's own checks are every solver's."""

import numpy as np
import pytest

import solvers
from solvers.problem import Problem, seed_problem

GOOD = {"x": [0.0, 1.0, 2.0], "y": [1.0, 3.0, 5.0], "lr": 0.1, "iterations": 10}

# id: (the field changed and its bad value, the exception, the message it must carry)
BAD = {
    "x-nan": ({"x": [0.0, np.nan, 2.0]}, ValueError, r"x must be finite, got x\[1\] = nan \(1 of 3 values are not finite\)"),
    "x-inf": ({"x": [0.0, 1.0, -np.inf]}, ValueError, r"x must be finite, got x\[2\] = -inf"),
    "y-inf": ({"y": [np.inf, 3.0, 5.0]}, ValueError, r"y must be finite, got y\[0\] = inf"),
    "y-nan": ({"y": [1.0, np.nan, np.nan]}, ValueError, r"y must be finite, got y\[1\] = nan \(2 of 3 values are not finite\)"),
    "lengths-differ": ({"y": [1.0, 3.0]}, ValueError, r"x and y must have the same length, got len\(x\) = 3 and len\(y\) = 2"),
    "one-point": ({"x": [1.0], "y": [2.0]}, ValueError, r"x and y need at least 2 points to fit a line, got 1"),
    "no-points": ({"x": [], "y": []}, ValueError, r"x and y need at least 2 points to fit a line, got 0"),
    "x-constant": ({"x": [3.0, 3.0, 3.0]}, ValueError, r"x has zero variance \(every x = 3.0\): the slope is undetermined"),
    "x-2d": ({"x": [[0.0], [1.0], [2.0]]}, ValueError, r"x must be 1-D, got shape \(3, 1\)"),
    "x-strings": ({"x": ["a", "b", "c"]}, TypeError, r"x must be real numbers, got dtype <U1 \(\['a', 'b', 'c'\]\)"),
    "x-objects": ({"x": [0.0, None, 2.0]}, TypeError, r"x must be real numbers, got dtype object"),
    "y-complex": ({"y": [1 + 1j, 3.0, 5.0]}, TypeError, r"y must be real numbers, got dtype complex128"),
    "y-bool": ({"y": [True, False, True]}, TypeError, r"y must be real numbers, got dtype bool"),
    "lr-zero": ({"lr": 0.0}, ValueError, r"lr must be finite and > 0, got 0.0"),
    "lr-negative": ({"lr": -1e-4}, ValueError, r"lr must be finite and > 0, got -0.0001"),
    "lr-nan": ({"lr": float("nan")}, ValueError, r"lr must be finite and > 0, got nan"),
    "lr-inf": ({"lr": np.inf}, ValueError, r"lr must be finite and > 0, got inf"),
    "lr-string": ({"lr": "0.1"}, TypeError, r"lr must be a real number, got '0.1' \(str\)"),
    "lr-complex": ({"lr": 0.1j}, TypeError, r"lr must be a real number, got 0.1j \(complex\)"),
    "iterations-zero": ({"iterations": 0}, ValueError, r"iterations must be >= 1, got 0"),
    "iterations-negative": ({"iterations": -5}, ValueError, r"iterations must be >= 1, got -5"),
    "iterations-float": ({"iterations": 10.0}, TypeError, r"iterations must be an integer, got 10.0 \(float\)"),
    "iterations-string": ({"iterations": "10"}, TypeError, r"iterations must be an integer, got '10' \(str\)"),
    "iterations-bool": ({"iterations": True}, TypeError, r"iterations must be an integer, got True \(bool\)"),
}
# The same rules for run(iterations), which every solver's prepared run accepts.
# NumPy 2 writes np.float64(3.0) where NumPy 1 (the TF 2.12 environment) writes 3.0.
BAD_ITERATIONS = [(0, ValueError, "got 0"), (-1, ValueError, "got -1"), (2.5, TypeError, r"got 2.5 \(float\)"),
                  (np.float64(3), TypeError, r"got (np.float64\()?3.0\)? \(float64\)"), ("7", TypeError, r"got '7' \(str\)")]


@pytest.mark.parametrize("case", BAD)
def test_a_problem_refuses_bad_input_naming_the_field_and_value(case):
    change, error, message = BAD[case]
    with pytest.raises(error, match=message):
        Problem(**{**GOOD, **change})


def test_every_solver_refuses_bad_iteration_counts_at_run_time(solver):
    with solver.prepare(seed_problem(100, iterations=5), "cpu") as run:
        for iterations, error, message in BAD_ITERATIONS:
            with pytest.raises(error, match=f"iterations must be .*{message}"):
                run(iterations)
        assert run(np.int64(3)).iterations == 3  # NumPy integers are integers


def test_every_solver_refuses_what_is_not_a_problem(solver):
    with pytest.raises(TypeError, match=f"{solver.name} needs a solvers.problem.Problem, got dict"):
        solver.prepare(GOOD, "cpu")


def test_every_solver_refuses_an_unknown_device_listing_its_own(solver):
    with pytest.raises(ValueError, match=f"{solver.name} runs on {', '.join(solver.devices)}, not on 'tpu'"):
        solver.prepare(seed_problem(100, 5), "tpu")


def test_an_unknown_solver_name_lists_the_known_ones():
    with pytest.raises(KeyError, match=f"unknown solver 'numpy-loop'; known solvers: {', '.join(solvers.REGISTRY)}"):
        solvers.get("numpy-loop")


def test_good_input_is_normalized_to_float64_vectors():
    problem = Problem(x=[0, 1, 2], y=np.array([1, 3, 5], dtype=np.int32), lr=np.float32(0.5), iterations=np.int64(4))
    assert problem.x.dtype == problem.y.dtype == np.float64 and problem.x.flags.c_contiguous
    assert (type(problem.lr), type(problem.iterations)) == (float, int)
    assert (problem.lr, problem.iterations, problem.n) == (0.5, 4, 3)
