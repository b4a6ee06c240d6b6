"""The original NumPy program: float64 FSSGD that recomputes predictions and the loss every step."""

from contextlib import contextmanager

import numpy as np

from solvers.problem import Fit, Problem


@contextmanager
def prepare(problem: Problem, device: str):
    x, y, n, lr = problem.x, problem.y, problem.n, problem.lr

    def run(iterations: int) -> Fit:
        w = b = 0.0
        y_pred = w * x + b
        loss = np.sum((y - y_pred) ** 2) / n
        # The original's work per step, redundant passes included: that is what is being measured.
        for _ in range(iterations):
            grad_w = 2 / n * np.sum(-x * (y - y_pred))
            grad_b = 2 / n * np.sum(-(y - y_pred))
            w -= lr * grad_w
            b -= lr * grad_b
            y_pred = w * x + b
            loss = np.sum((y - y_pred) ** 2) / n
        return Fit(w=float(w), b=float(b), loss=float(loss), iterations=iterations)

    yield run
