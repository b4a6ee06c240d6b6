"""The roofline of one float64 step on one core that reads every point: one fused, vectorized sweep, compiled by numba."""

from contextlib import contextmanager
from functools import cache

import numpy as np

from solvers.problem import Fit, Problem
from solvers.answers import mean_squared_error


def descend(x, y, lr, iterations):
    """gradient_descent's iteration, with both gradient sums taken in the one sweep that computes the residuals."""
    n = x.shape[0]
    w = b = 0.0
    for _ in range(iterations):
        sum_residual = sum_residual_x = 0.0
        for i in range(n):
            residual = y[i] - (w * x[i] + b)
            sum_residual += residual
            sum_residual_x += residual * x[i]
        w, b = w + lr * 2.0 / n * sum_residual_x, b + lr * 2.0 / n * sum_residual
    return w, b


@cache
def compiled():
    import numba

    # fastmath lets the two sums be split across SIMD lanes (reassociated): the vectorized loop a C compiler
    # makes at -O3 -ffast-math. It changes float64 rounding far inside the float64 tolerance.
    return numba.njit(fastmath=True)(descend)


@contextmanager
def prepare(problem: Problem, device: str):
    descend_compiled = compiled()
    x, y, lr = np.ascontiguousarray(problem.x), np.ascontiguousarray(problem.y), problem.lr

    def run(iterations: int) -> Fit:
        w, b = descend_compiled(x, y, lr, iterations)
        return Fit(w=w, b=b, loss=mean_squared_error(problem, w, b), iterations=iterations)

    run(1)  # numba compiles on the first call: setup, not steady state
    yield run
