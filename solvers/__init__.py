"""The registry: a stable name for every solver, the devices it runs on, and what it needs.

Names are ids in saved results: never rename one, only add. Adding a solver is one
module with `prepare(problem, device)` plus one line here; it is then benchmarked and
tested with no other edit.

`prepare(problem, device)` is a context manager: entering it does the untimed setup
(graph, session, data placement) and yields `run(iterations=None) -> Fit`, which starts
from w = b = 0 every call and returns its answer on the host; leaving it frees the session.
"""

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from solvers.reference import gradient_descent, standardized_gradient_descent

DEVICES = ("cpu", "gpu")


@dataclass(frozen=True)
class Solver:
    name: str
    devices: tuple[str, ...]
    dtype: str
    needs_tensorflow: bool
    # The float64 computation this solver's answers must match; a solver that changes the
    # algorithm (e.g. standardizes x) names its own.
    reference: Callable = gradient_descent

    def prepare(self, problem, device: str):
        if device not in self.devices:
            raise ValueError(f"{self.name} runs on {', '.join(self.devices)}, not on {device!r}")
        return importlib.import_module(f"solvers.{self.name}").prepare(problem, device)


REGISTRY = {
    solver.name: solver
    for solver in (
        Solver("numpy_loop", devices=("cpu",), dtype="float64", needs_tensorflow=False),
        Solver("tf1_feed_dict", devices=DEVICES, dtype="float32", needs_tensorflow=True),
        Solver("tf1_while_loop", devices=DEVICES, dtype="float32", needs_tensorflow=True),
        Solver("tf1_feed_dict_no_loss", devices=DEVICES, dtype="float32", needs_tensorflow=True),
        Solver("tf1_constant", devices=DEVICES, dtype="float32", needs_tensorflow=True),
        Solver("tf1_constant_no_loss", devices=DEVICES, dtype="float32", needs_tensorflow=True),
        Solver("tf1_callable", devices=DEVICES, dtype="float32", needs_tensorflow=True),
        Solver("tf2_eager", devices=DEVICES, dtype="float32", needs_tensorflow=True),
        Solver("tf2_function", devices=DEVICES, dtype="float32", needs_tensorflow=True),
        Solver("tf2_function_xla", devices=DEVICES, dtype="float32", needs_tensorflow=True),
        Solver("numpy_lean", devices=("cpu",), dtype="float64", needs_tensorflow=False),
        Solver("numpy_affine_limit", devices=("cpu",), dtype="float64", needs_tensorflow=False),
        Solver("numpy_affine_power", devices=("cpu",), dtype="float64", needs_tensorflow=False),
        # lr 0.1 on standardized x whatever problem.lr is: a different iteration, so its own reference.
        Solver("numpy_standardized", devices=("cpu",), dtype="float64", needs_tensorflow=False,
               reference=standardized_gradient_descent),
        Solver("tf1_while_loop_standardized", devices=DEVICES, dtype="float32", needs_tensorflow=True,
               reference=standardized_gradient_descent),
    )
}


def get(name: str) -> Solver:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown solver {name!r}; known solvers: {', '.join(REGISTRY)}") from None
