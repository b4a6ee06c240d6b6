"""The reference's float64 arithmetic without the original's redundant passes: no loss per step, only at the end."""

from contextlib import contextmanager

import numpy as np

from solvers.problem import Fit, Problem


@contextmanager
def prepare(problem: Problem, device: str):
    x, y, n, lr = problem.x, problem.y, problem.n, problem.lr

    def run(iterations: int | None = None) -> Fit:
        iterations = problem.iterations if iterations is None else iterations
        w = b = 0.0
        for _ in range(iterations):
            residual = y - (w * x + b)
            grad_w = -2 / n * np.dot(x, residual)
            grad_b = -2 / n * np.sum(residual)
            w, b = w - lr * grad_w, b - lr * grad_b
        loss = np.mean((y - (w * x + b)) ** 2)
        return Fit(w=float(w), b=float(b), loss=float(loss), iterations=iterations)

    yield run
