"""The expected answers every timed result is checked against: float64 gradient descent, two ways, and the closed form."""

import numpy as np

from solvers.problem import Fit, Problem

# Relative error allowed against the expected answer. float32 rounding accumulates with the
# step count: measured 1.9e-5 at 1e5 steps (n = 100) and 1.4e-4 for b at 142,414 raw steps (the
# time-to-accuracy run, n = 1000); 5e-4 keeps a 3.5x margin over that worst case.
TOLERANCE = {"float64": 1e-9, "float32": 5e-4}
# The fix from the original answer: on standardized x this step converges in ~1e2 steps.
STANDARDIZED_LR = 0.1


def gradient_descent(problem: Problem, iterations: int | None = None) -> Fit:
    """The same iteration as every solver, in float64, written plainly: a loop of gradient steps."""
    iterations = problem.iterations if iterations is None else iterations
    x, y, n, lr = problem.x, problem.y, problem.n, problem.lr
    w = b = 0.0
    for _ in range(iterations):
        residual = y - (w * x + b)
        grad_w = -2 / n * np.dot(x, residual)
        grad_b = -2 / n * np.sum(residual)
        w, b = w - lr * grad_w, b - lr * grad_b
    return Fit(w=w, b=b, loss=mean_squared_error(problem, w, b), iterations=iterations)


def sums(problem: Problem) -> tuple[float, float, float, float]:
    """Σx, Σx², Σy, Σxy: all that a gradient step on the squared error reads from the data."""
    x, y = problem.x, problem.y
    return float(np.sum(x)), float(np.dot(x, x)), float(np.sum(y)), float(np.dot(x, y))


def step_matrix(problem: Problem) -> np.ndarray:
    """One gradient step as a matrix on (w, b, 1), built from the data's sums."""
    sum_x, sum_xx, sum_y, sum_xy = sums(problem)
    n, scale = problem.n, 2 * problem.lr / problem.n
    return np.array([
        [1 - scale * sum_xx, -scale * sum_x, scale * sum_xy],
        [-scale * sum_x, 1 - scale * n, scale * sum_y],
        [0.0, 0.0, 1.0],
    ])


def affine_descent(problem: Problem, iterations: int | None = None) -> Fit:
    """The same iterates as gradient_descent from another formulation: K steps as the K-th power of the step matrix.

    It shares no code with the loop, so each is the expected answer of the solvers that time the other.
    """
    iterations = problem.iterations if iterations is None else iterations
    w, b, _ = np.linalg.matrix_power(step_matrix(problem), iterations) @ np.array([0.0, 0.0, 1.0])
    return Fit(w=float(w), b=float(b), loss=mean_squared_error(problem, w, b), iterations=iterations)


def standardized_problem(problem: Problem, lr: float = STANDARDIZED_LR) -> tuple[Problem, float, float]:
    """(the problem on x_s = (x - mean) / std with step lr, mean, std)."""
    mean, std = float(problem.x.mean()), float(problem.x.std())
    return Problem(x=(problem.x - mean) / std, y=problem.y, lr=lr, iterations=problem.iterations), mean, std


def on_standardized_x(descent):
    """descent on standardized x with step STANDARDIZED_LR (not problem.lr), its w, b mapped back for problem's x."""

    def standardized_descent(problem: Problem, iterations: int | None = None) -> Fit:
        on_standardized, mean, std = standardized_problem(problem)
        fit = descent(on_standardized, iterations)
        w = fit.w / std
        b = fit.b - mean * w
        return Fit(w=w, b=b, loss=mean_squared_error(problem, w, b), iterations=fit.iterations)

    return standardized_descent


standardized_gradient_descent = on_standardized_x(gradient_descent)
standardized_affine_descent = on_standardized_x(affine_descent)  # the same iterates, the other way
# The expected answers that iterate on standardized x, whatever problem.lr says.
STANDARDIZED = (standardized_gradient_descent, standardized_affine_descent)


def closed_form(problem: Problem) -> tuple[float, float]:
    """The least-squares (w, b) that gradient descent converges to."""
    w, b = np.polyfit(problem.x, problem.y, deg=1)
    return float(w), float(b)


def mean_squared_error(problem: Problem, w: float, b: float) -> float:
    return float(np.mean((problem.y - (w * problem.x + b)) ** 2))


def mismatch(fit: Fit, expected: Fit, dtype: str) -> str | None:
    """Why fit is not the expected answer within dtype's tolerance, or None when it is."""
    rtol = TOLERANCE[dtype]
    if fit.iterations != expected.iterations:
        return f"ran {fit.iterations} steps, the expected answer ran {expected.iterations}"
    for name in ("w", "b"):
        got, want = getattr(fit, name), getattr(expected, name)
        if not np.isclose(got, want, rtol=rtol, atol=0):
            return f"{name} = {got!r}, expected (float64) {want!r} (rtol {rtol:g}, {dtype})"
    return None
