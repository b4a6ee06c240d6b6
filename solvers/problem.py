"""The FSSGD problem, its seed data and the Fit every solver returns.

The seed data must not be changed, only appended to: it is how results stay
comparable with the original report and with every saved run.
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np

SEED_N = 1_000
SEED_LR = 1e-4
SEED_ITERATIONS = 100_000
MIN_POINTS = 2  # a line needs two distinct x


class DivergenceError(ArithmeticError):
    """Gradient descent blew up: the step is beyond the stable limit (or the data overflowed the dtype)."""


@dataclass(frozen=True)
class Problem:
    """Fit y ≈ w·x + b by fixed-step gradient descent from w = b = 0."""

    x: np.ndarray
    y: np.ndarray
    lr: float
    iterations: int

    def __post_init__(self):
        # Checked once here, so every solver (NumPy or TensorFlow) refuses bad input the same way.
        x, y = real_vector("x", self.x), real_vector("y", self.y)
        if len(x) != len(y):
            raise ValueError(f"x and y must have the same length, got len(x) = {len(x)} and len(y) = {len(y)}")
        if len(x) < MIN_POINTS:
            raise ValueError(f"x and y need at least {MIN_POINTS} points to fit a line, got {len(x)}")
        if np.ptp(x) == 0:
            raise ValueError(f"x has zero variance (every x = {float(x[0])!r}): the slope is undetermined")
        object.__setattr__(self, "x", x)  # frozen: normalized once, at construction
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "lr", check_learning_rate(self.lr))
        object.__setattr__(self, "iterations", check_iterations(self.iterations))

    @property
    def n(self) -> int:
        return len(self.x)

    @property
    def starting_loss(self) -> float:
        """The loss at w = b = 0, mean(y²), where every run starts."""
        return float(np.mean(self.y ** 2))

    @property
    def stable_lr_limit(self) -> float:
        """2/λmax of the loss's Hessian 2/n·[[Σx², Σx], [Σx, n]]: a larger fixed step diverges (≈ 3.0e-4 on the seed x)."""
        sum_x = float(np.sum(self.x))
        hessian = 2 / self.n * np.array([[float(np.dot(self.x, self.x)), sum_x], [sum_x, self.n]])
        return float(2 / np.linalg.eigvalsh(hessian)[-1])


def real_vector(field: str, value) -> np.ndarray:
    """value as a 1-D float64 array, or a TypeError/ValueError naming the field and what is wrong."""
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":  # bool, complex, str, object, datetime: not real numbers
        flat = array.ravel()
        raise TypeError(f"{field} must be real numbers, got dtype {array.dtype} "
                        f"({flat[:3].tolist()!r}{'...' if flat.size > 3 else ''})")
    if array.ndim != 1:
        raise ValueError(f"{field} must be 1-D, got shape {array.shape}")
    array = np.ascontiguousarray(array, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(f"{field} must be finite, got {field}[{bad[0]}] = {float(array[bad[0]])!r} "
                         f"({bad.size} of {array.size} values are not finite)")
    return array


def check_learning_rate(value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"lr must be a real number, got {value!r} ({type(value).__name__})")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"lr must be finite and > 0, got {value!r}")
    return float(value)


def check_iterations(value) -> int:
    """value as an int ≥ 1, or a TypeError/ValueError naming it; run(iterations) checks with this too."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"iterations must be an integer, got {value!r} ({type(value).__name__})")
    if value < 1:
        raise ValueError(f"iterations must be >= 1, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Fit:
    """What a solver returns: the final (w, b), the loss there, and how many steps it took."""

    w: float
    b: float
    loss: float
    iterations: int


def seed_x(n: int = SEED_N) -> np.ndarray:
    # n = 1000 is the original program's x, bit for bit; other sizes keep its range.
    if n == SEED_N:
        return np.arange(100, step=0.1)
    return np.linspace(0, 100, n, endpoint=False)


def seed_y(x: np.ndarray) -> np.ndarray:
    return x + 20 * np.sin(x / 10) + 15


def seed_problem(n: int = SEED_N, iterations: int = SEED_ITERATIONS, lr: float = SEED_LR) -> Problem:
    x = seed_x(n)
    return Problem(x=x, y=seed_y(x), lr=lr, iterations=iterations)
