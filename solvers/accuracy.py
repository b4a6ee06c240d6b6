"""Steps to a stated accuracy: the first step at which float64 descent is that close to the closed form."""

from typing import NamedTuple

import numpy as np

from solvers.answers import STANDARDIZED, closed_form, standardized_problem, step_matrix
from solvers.problem import Fit, Problem

# Relative error in both w and b against the least-squares answer: what "converged" means here.
TARGET = 1e-3
MAX_ITERATIONS = 1_000_000
# Steps evaluated per vectorized batch: big enough to amortize numpy calls, small enough not to overshoot much.
CHUNK = 4_096


class Descent(NamedTuple):
    """What an expected answer iterates on, and the mean and std that map its (w, b) back to the original x."""

    problem: Problem
    x_scaling: str
    mean: float = 0.0
    std: float = 1.0


def descent_of(expected, problem: Problem) -> Descent:
    """The iteration behind a solver's expected answer: raw x at problem.lr, or standardized x at STANDARDIZED_LR."""
    if expected in STANDARDIZED:
        on_standardized, mean, std = standardized_problem(problem)
        return Descent(on_standardized, "standardized", mean, std)
    return Descent(problem, "raw")


def relative_error(w, b, closed: tuple[float, float]):
    """max(|w − w*| / |w*|, |b − b*| / |b*|): both coefficients must be within the target."""
    closed_w, closed_b = closed
    return np.maximum(np.abs(w - closed_w) / abs(closed_w), np.abs(b - closed_b) / abs(closed_b))


def fit_error(fit: Fit, problem: Problem) -> float:
    return float(relative_error(fit.w, fit.b, closed_form(problem)))


def iterations_to_accuracy(expected, problem: Problem, target: float = TARGET,
                           max_iterations: int = MAX_ITERATIONS) -> tuple[int | None, float]:
    """(K*, error at K*): the first K whose iterate is within target, or (None, error at max_iterations).

    The iterates come from the affine map of (w, b, 1) that one gradient step is (answers.step_matrix),
    equal to the loop's up to rounding, at a few ns per step instead of O(n).
    """
    descent = descent_of(expected, problem)
    closed = closed_form(problem)
    # The step matrix to the powers 1 … CHUNK, stacked: one batch of steps becomes one broadcast product.
    powers = np.empty((CHUNK, 3, 3))
    powers[0] = step_matrix(descent.problem)
    for index in range(1, CHUNK):
        powers[index] = powers[index - 1] @ powers[0]
    state = np.array([0.0, 0.0, 1.0])
    for start in range(0, max_iterations, CHUNK):
        steps = min(CHUNK, max_iterations - start)
        states = powers[:steps] @ state  # the iterates after start + 1 … start + steps steps
        w = states[:, 0] / descent.std
        errors = relative_error(w, states[:, 1] - descent.mean * w, closed)
        reached = np.flatnonzero(errors <= target)
        if reached.size:
            return start + int(reached[0]) + 1, float(errors[reached[0]])
        state = states[-1]
    return None, float(errors[-1])
