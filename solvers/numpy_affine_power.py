"""The affine limit in O(n + log K): K steps of the (w, b) map as one 3×3 matrix power, iterates equal to rounding."""

from contextlib import contextmanager

import numpy as np

from solvers.numpy_affine_limit import sums
from solvers.problem import Fit, Problem


def step_matrix(problem: Problem) -> np.ndarray:
    """One gradient step as a matrix on (w, b, 1), built from the data's sums."""
    sum_x, sum_xx, sum_y, sum_xy = sums(problem)
    n, scale = problem.n, 2 * problem.lr / problem.n
    return np.array([
        [1 - scale * sum_xx, -scale * sum_x, scale * sum_xy],
        [-scale * sum_x, 1 - scale * n, scale * sum_y],
        [0.0, 0.0, 1.0],
    ])


@contextmanager
def prepare(problem: Problem, device: str):

    def run(iterations: int) -> Fit:
        w, b, _ = np.linalg.matrix_power(step_matrix(problem), iterations) @ np.array([0.0, 0.0, 1.0])
        loss = np.mean((problem.y - (w * problem.x + b)) ** 2)
        return Fit(w=float(w), b=float(b), loss=float(loss), iterations=iterations)

    yield run
