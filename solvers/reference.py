"""The answers every timed result is checked against: float64 gradient descent and the closed form."""

import numpy as np

from solvers.problem import Fit, Problem

# Relative error allowed against the float64 reference. float32 rounding accumulates with the
# step count: measured 1.9e-5 at 1e5 steps (n = 100) and 1.4e-4 for b at 142,414 raw steps (the
# time-to-accuracy run, n = 1000); 5e-4 keeps a 3.5x margin over that worst case.
TOLERANCE = {"float64": 1e-9, "float32": 5e-4}
# The fix from the original answer: on standardized x this step converges in ~1e2 iterations.
STANDARDIZED_LR = 0.1


def gradient_descent(problem: Problem, iterations: int | None = None) -> Fit:
    """The same iteration as every solver, in float64, written plainly."""
    iterations = problem.iterations if iterations is None else iterations
    x, y, n, lr = problem.x, problem.y, problem.n, problem.lr
    w = b = 0.0
    for _ in range(iterations):
        residual = y - (w * x + b)
        grad_w = -2 / n * np.dot(x, residual)
        grad_b = -2 / n * np.sum(residual)
        w, b = w - lr * grad_w, b - lr * grad_b
    return Fit(w=w, b=b, loss=mean_squared_error(problem, w, b), iterations=iterations)


def standardized_gradient_descent(problem: Problem, iterations: int | None = None, lr: float = STANDARDIZED_LR) -> Fit:
    """Gradient descent on x_s = (x - mean) / std with step lr (not problem.lr), mapped back to w, b for x."""
    mean, std = problem.x.mean(), problem.x.std()
    standardized = Problem(x=(problem.x - mean) / std, y=problem.y, lr=lr, iterations=problem.iterations)
    fit = gradient_descent(standardized, iterations)
    w = fit.w / std
    b = fit.b - mean * w
    return Fit(w=w, b=b, loss=mean_squared_error(problem, w, b), iterations=fit.iterations)


def closed_form(problem: Problem) -> tuple[float, float]:
    """The least-squares (w, b) that gradient descent converges to."""
    w, b = np.polyfit(problem.x, problem.y, deg=1)
    return float(w), float(b)


def mean_squared_error(problem: Problem, w: float, b: float) -> float:
    return float(np.mean((problem.y - (w * problem.x + b)) ** 2))


def mismatch(fit: Fit, reference: Fit, dtype: str) -> str | None:
    """Why fit is not the reference's answer within dtype's tolerance, or None when it is."""
    rtol = TOLERANCE[dtype]
    if fit.iterations != reference.iterations:
        return f"ran {fit.iterations} iterations, the reference ran {reference.iterations}"
    for name in ("w", "b"):
        got, want = getattr(fit, name), getattr(reference, name)
        if not np.isclose(got, want, rtol=rtol, atol=0):
            return f"{name} = {got!r}, float64 reference {want!r} (rtol {rtol:g}, {dtype})"
    return None
