"""The FSSGD problem, its seed data and the Fit every solver returns.

The seed data must not be changed, only appended to: it is how results stay
comparable with the original report and with every saved run.
"""

from dataclasses import dataclass

import numpy as np

SEED_N = 1_000
SEED_LR = 1e-4
SEED_ITERATIONS = 100_000


@dataclass(frozen=True)
class Problem:
    """Fit y ≈ w·x + b by fixed-step gradient descent from w = b = 0."""

    x: np.ndarray
    y: np.ndarray
    lr: float
    iterations: int

    @property
    def n(self) -> int:
        return len(self.x)


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
