"""The registry: stable names, one module per solver, clear errors, and no TensorFlow import until needed."""

import importlib
import subprocess
import sys

import pytest

import solvers
from solvers.problem import seed_problem
from solvers.answers import TOLERANCE

# Names are ids in saved results: this list may only grow.
STABLE_NAMES = [
    "numpy_loop", "tf1_feed_dict", "tf1_while_loop",
    "tf1_feed_dict_no_loss", "tf1_constant", "tf1_constant_no_loss", "tf1_callable",
    "tf2_eager", "tf2_function", "tf2_function_xla",
    "numpy_lean", "numpy_affine_limit", "numpy_affine_power", "numpy_standardized", "tf1_while_loop_standardized",
]


def test_stable_names_are_never_removed():
    assert set(STABLE_NAMES) <= set(solvers.REGISTRY)


@pytest.mark.parametrize("name", list(solvers.REGISTRY))
def test_each_entry_is_one_module_with_prepare(name):
    solver = solvers.get(name)
    assert solver.name == name
    assert callable(importlib.import_module(f"solvers.{name}").prepare)
    assert solver.devices and set(solver.devices) <= set(solvers.DEVICES)
    assert solver.dtype in TOLERANCE


def test_what_a_solver_needs_is_a_package_with_an_install_hint():
    from solvers.packages import INSTALL_HINTS

    assert {package for solver in solvers.REGISTRY.values() for package in solver.needs} <= set(INSTALL_HINTS)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(KeyError, match="unknown solver 'nope'; known solvers: numpy_loop, tf1_feed_dict"):
        solvers.get("nope")


def test_unsupported_device_is_refused_before_any_work():
    with pytest.raises(ValueError, match="numpy_loop runs on cpu, not on 'gpu'"):
        solvers.get("numpy_loop").prepare(seed_problem(10, 1), "gpu")


def test_importing_every_solver_module_does_not_import_tensorflow():
    modules = ", ".join(f"solvers.{name}" for name in solvers.REGISTRY)
    code = f"import sys, {modules}, perf.plugin; sys.exit('tensorflow' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=solvers.__path__[0] + "/..").returncode == 0
