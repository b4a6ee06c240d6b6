"""The registry: a stable name for every solver, the devices it runs on, and what it needs.

Names are ids in saved results: never rename one, only add. Adding a solver is one module with
`prepare(problem, device)` plus one entry here: docs/development.md#adding-a-solver says what each does.
"""

import importlib
import math
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

from solvers import packages
from solvers.problem import DivergenceError, Fit, Problem, check_iterations
from solvers.answers import (TOLERANCE, affine_descent, gradient_descent, standardized_affine_descent,
                             standardized_gradient_descent)

DEVICES = ("cpu", "gpu")


class SolverUnavailable(RuntimeError):
    """A solver that cannot run here, on this device: its message is the reason the benchmarks skip with."""


@dataclass(frozen=True)
class Solver:
    name: str
    devices: tuple[str, ...]
    dtype: str
    needs: tuple[str, ...] = ()
    expected: Callable = gradient_descent
    compiles_per_count: bool = False
    gpu_needs: tuple[str, ...] = ()

    def unavailable_reason(self, device: str) -> str | None:
        """Why this solver cannot run on device here (a missing package, no GPU, Triton's build tools), or None."""
        for package in self.needs:
            if reason := packages.unavailable_reason(package) or (
                    device == "gpu" and packages.gpu_unavailable_reason(package)):
                return reason
        for need in self.gpu_needs if device == "gpu" else ():
            if reason := packages.gpu_need_reason(need):
                return reason
        return None

    def prepare(self, problem: Problem, device: str):
        if device not in self.devices:
            raise ValueError(f"{self.name} runs on {', '.join(self.devices)}, not on {device!r}")
        if not isinstance(problem, Problem):
            raise TypeError(f"{self.name} needs a solvers.problem.Problem, got {type(problem).__name__}")
        if reason := self.unavailable_reason(device):
            raise SolverUnavailable(f"{self.name} cannot run on {device} here: {reason}")
        return checked(self, problem, importlib.import_module(f"solvers.{self.name}").prepare(problem, device))


@contextmanager
def checked(solver: Solver, problem: Problem, prepared):
    """The solver's run with its iteration count checked before and divergence checked after, the same for all."""
    # Fixed-step descent with a stable step never ends above its starting loss on this convex quadratic (each
    # step lowers the loss), so ending above it, beyond the dtype's rounding, means the iterates blew up.
    # Computed once, here: inside the timed call the check is three isfinite tests and one comparison.
    ceiling = problem.starting_loss * (1 + TOLERANCE[solver.dtype])
    with prepared as run:

        def checked_run(iterations: int | None = None) -> Fit:
            fit = run(problem.iterations if iterations is None else check_iterations(iterations))
            if not (finite(fit) and fit.loss <= ceiling):
                raise DivergenceError(divergence_message(solver, problem, fit))
            return fit

        yield checked_run


def finite(fit: Fit) -> bool:
    return math.isfinite(fit.w) and math.isfinite(fit.b) and math.isfinite(fit.loss)


def divergence_message(solver: Solver, problem: Problem, fit: Fit) -> str:
    limit = problem.stable_lr_limit
    if problem.lr > limit:
        # |1 - lr·λmax| is how much the error along the Hessian's top eigenvector grows per step.
        cause = (f"lr {problem.lr:g} is above the stable limit {limit:.4g} for this x "
                 f"(the error grows {problem.lr * 2 / limit - 1:.4g}x per step)")
    else:
        cause = f"lr {problem.lr:g} is within the stable limit {limit:.4g} for this x, so its arithmetic broke down"
    outcome = f"above the starting loss {problem.starting_loss:.4g}" if finite(fit) else "not finite"
    return (f"{solver.name} diverged: {cause}; after {fit.iterations} step{'s' * (fit.iterations != 1)} w = {fit.w:.4g}, b = {fit.b:.4g}, "
            f"loss = {fit.loss:.4g} ({outcome}; checked on the final answer, not per step)")


REGISTRY = {
    solver.name: solver
    for solver in (
        Solver("numpy_loop", devices=("cpu",), dtype="float64"),
        Solver("tf1_feed_dict", devices=DEVICES, dtype="float32", needs=("tensorflow",)),
        Solver("tf1_while_loop", devices=DEVICES, dtype="float32", needs=("tensorflow",)),
        Solver("tf1_feed_dict_no_loss", devices=DEVICES, dtype="float32", needs=("tensorflow",)),
        Solver("tf1_constant", devices=DEVICES, dtype="float32", needs=("tensorflow",)),
        Solver("tf1_constant_no_loss", devices=DEVICES, dtype="float32", needs=("tensorflow",)),
        Solver("tf1_callable", devices=DEVICES, dtype="float32", needs=("tensorflow",)),
        Solver("tf2_eager", devices=DEVICES, dtype="float32", needs=("tensorflow",)),
        Solver("tf2_function", devices=DEVICES, dtype="float32", needs=("tensorflow",)),
        Solver("tf2_function_xla", devices=DEVICES, dtype="float32", needs=("tensorflow",), compiles_per_count=True),
        # It times answers.gradient_descent itself, so its answer is checked against the matrix power.
        Solver("numpy_lean", devices=("cpu",), dtype="float64", expected=affine_descent),
        Solver("numpy_affine_limit", devices=("cpu",), dtype="float64"),
        Solver("numpy_affine_power", devices=("cpu",), dtype="float64"),
        # lr 0.1 on standardized x whatever problem.lr is: a different iteration, so its own expected answer.
        Solver("numpy_standardized", devices=("cpu",), dtype="float64", expected=standardized_affine_descent),
        Solver("tf1_while_loop_standardized", devices=DEVICES, dtype="float32", needs=("tensorflow",),
               expected=standardized_gradient_descent),
        # The roofline: each step one fused sweep over the data, vectorized (solvers/numba_fused.py).
        Solver("numba_fused", devices=("cpu",), dtype="float64", needs=("numba",)),
        Solver("jax_fori_loop", devices=DEVICES, dtype="float32", needs=("jax",)),
        Solver("jax_step", devices=DEVICES, dtype="float32", needs=("jax",)),
        Solver("torch_eager", devices=DEVICES, dtype="float32", needs=("torch",)),
        Solver("torch_compile", devices=DEVICES, dtype="float32", needs=("torch",), gpu_needs=("triton",)),
    )
}


def get(name: str) -> Solver:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown solver {name!r}; known solvers: {', '.join(REGISTRY)}") from None
