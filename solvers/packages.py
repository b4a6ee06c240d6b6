"""The optional packages solvers need beyond NumPy: whether each imports here, how to install it, whether it sees a GPU."""

import importlib
from functools import cache

from solvers import tensorflow_support

INSTALL_HINTS = {
    "tensorflow": "install the tf-cpu or tf-gpu extra",
    "numba": "install the numba extra (pip install -e '.[numba]')",
    "jax": "install the jax extra (pip install -e '.[jax]'), or jax-cuda for a GPU",
    "torch": "install the torch extra (pip install -e '.[torch]'; which build: docs/gpu.md)",
}


@cache
def unavailable_reason(package: str) -> str | None:
    """Why package cannot be used here, or None when it imports."""
    if package == "tensorflow":
        return tensorflow_support.unavailable_reason()  # imported its own way: quietly, threads set first
    try:
        importlib.import_module(package)
    except ImportError as error:
        return f"{package} is not installed ({error}); {INSTALL_HINTS[package]}"
    except Exception as error:  # a broken install fails in many ways, none of which is ours to fix
        return f"{package} is installed but failed to import: {type(error).__name__}: {error}"
    return None


def gpu_unavailable_reason(package: str) -> str | None:
    """Why package's solvers cannot run on a GPU here, or None when it sees one."""
    if package == "tensorflow":
        return None if tensorflow_support.gpu_names() else tensorflow_support.NO_GPU
    if package == "jax":
        import jax

        try:
            jax.devices("gpu")
        except RuntimeError:  # JAX's answer when no backend of that kind is there
            return "no GPU visible to JAX"
        return None
    if package == "torch":
        import torch

        return None if torch.cuda.is_available() else "no GPU visible to PyTorch"
    return f"{package} solvers here are CPU-only"


def gpu_name(package: str) -> str:
    """The GPU's name as package's runtime reports it, e.g. 'NVIDIA H100 80GB HBM3'; only where it sees one."""
    if package == "tensorflow":
        return tensorflow_support.gpu_names()[0]
    if package == "jax":
        import jax

        return jax.devices("gpu")[0].device_kind
    if package == "torch":
        import torch

        return torch.cuda.get_device_name(0)
    raise ValueError(f"{package} solvers here are CPU-only")
