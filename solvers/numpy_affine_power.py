"""The affine limit in O(n + log K): K steps of the (w, b) map as one 3×3 matrix power, iterates equal to rounding."""

from contextlib import contextmanager
from functools import partial

from solvers.answers import affine_descent
from solvers.problem import Problem


@contextmanager
def prepare(problem: Problem, device: str):
    # Times answers.affine_descent itself; its expected answer is the loop (answers.gradient_descent).
    yield partial(affine_descent, problem)
