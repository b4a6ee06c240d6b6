"""The optional packages solvers need beyond NumPy: whether each imports, how to install it, whether it sees a GPU."""

import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from functools import cache

from solvers import nvidia, tensorflow_support

INSTALL_HINTS = {
    "tensorflow": "install the tf-cpu or tf-gpu extra",
    "numba": "install the numba extra (pip install -e '.[numba]')",
    "jax": "install the jax extra (pip install -e '.[jax]'), or jax-cuda for a GPU",
    "torch": "install the torch extra (pip install -e '.[torch]'; which build: docs/gpu.md)",
}


@cache
def unavailable_reason(package: str) -> str | None:
    """Why package cannot be used here, or None when it imports."""
    try:
        if package == "tensorflow":
            tensorflow_support.import_tensorflow()  # imported its own way: quietly, threads set first
        else:
            importlib.import_module(package)
    except ImportError as error:
        return f"{package} is not installed ({error}); {INSTALL_HINTS[package]}"
    except Exception as error:  # a broken install fails in many ways, none of which is ours to fix
        return f"{package} is installed but failed to import: {type(error).__name__}: {error}"
    return None


# The packages with a GPU runtime of their own. Two in one process fight over CUDA's libraries: whichever loads its cuDNN
# first leaves the other unable to start its CUDA backend (jax-ml/jax issues 18032 and 19004). In the order
# solvers.prerequisites prints them: each is asked for a GPU where no other is loaded, so the order changes no answer.
GPU_FRAMEWORKS = ("jax", "torch", "tensorflow")


def gpu_unavailable_reason(package: str) -> str | None:
    """Why package's solvers cannot run on a GPU here, or None when it sees one: no driver, a CPU build, a driver too
    old for its CUDA, or its own error starting CUDA. Where another GPU framework is loaded in this process (the pytest
    process asks for every selected solver), it is asked in a fresh process that imports package alone, as the
    worker that times its solvers does (perf/measure/workers.py)."""
    if package == "tensorflow":
        return None if tensorflow_gpu_names() else tensorflow_support.NO_GPU
    if package not in GPU_FRAMEWORKS:
        return f"{package} solvers here are CPU-only"
    if nvidia.driver_version() is None:  # said before importing the framework: cheap where there is no GPU
        return nvidia.NO_DRIVER
    if any(sys.modules.get(other) for other in GPU_FRAMEWORKS if other != package):
        return asked_alone(package)
    return jax_gpu_reason() if package == "jax" else torch_gpu_reason()


@cache
def tensorflow_gpu_names() -> tuple[str, ...]:
    """Names of the GPUs TensorFlow sees, e.g. ('NVIDIA H200',); empty without TensorFlow or a GPU."""
    if unavailable_reason("tensorflow"):
        return ()
    tf = tensorflow_support.import_tensorflow()
    return tuple(tf.config.experimental.get_device_details(gpu).get("device_name", gpu.name)
                 for gpu in tf.config.list_physical_devices("GPU"))


@cache
def asked_alone(package: str) -> str | None:
    """gpu_unavailable_reason(package) as a fresh Python process that imports no other framework answers it."""
    tree = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder that holds this solvers package
    command = [sys.executable, "-c", "import json, sys; from solvers import packages; "
               "print(json.dumps(packages.gpu_unavailable_reason(sys.argv[1])))", package]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH")]))}
    failed = f"asking {package} for a GPU in a process of its own failed"
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment, cwd=tree)
    except (OSError, subprocess.SubprocessError) as error:
        return f"{failed}: {one_line(error)}"
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):  # it printed no answer: its last words say why
        return f"{failed}: exit {done.returncode}: {(done.stderr.strip().splitlines() or ['nothing said'])[-1]}"


def torch_gpu_reason() -> str | None:
    import torch

    if torch.version.cuda is None:
        return (f"torch {torch.__version__} is the CPU build (torch.version.cuda is None); for a GPU, install PyPI's "
                "CUDA build: pip install -e '.[torch]' without PyTorch's CPU index (docs/gpu.md)")
    if reason := nvidia.too_old_reason(f"torch {torch.__version__}", torch.version.cuda):
        return reason
    if torch.cuda.is_available():
        return None
    try:
        torch.cuda.init()  # is_available() only says no; starting CUDA says why
    except Exception as error:
        return f"PyTorch's CUDA failed to start: {one_line(error)}"
    return "no GPU visible to PyTorch"


# The module each CUDA plugin of JAX installs (jax-cuda12-plugin, jax-cuda13-plugin), and its CUDA major version.
JAX_CUDA_PLUGINS = {"jax_cuda12_plugin": "12", "jax_cuda13_plugin": "13"}


def jax_cuda_plugins() -> list[str]:
    """The CUDA versions of the JAX CUDA plugins installed here, oldest first; found without importing them."""
    return [cuda for module, cuda in JAX_CUDA_PLUGINS.items() if importlib.util.find_spec(module)]


def jax_gpu_reason() -> str | None:
    plugins = jax_cuda_plugins()
    if not plugins:
        return ("jax here is the CPU build (neither jax-cuda12-plugin nor jax-cuda13-plugin is installed); "
                "install the jax-cuda extra (pip install -e '.[jax-cuda]')")
    import jax

    if reason := nvidia.too_old_reason(f"jax {jax.__version__} with jax-cuda{plugins[0]}-plugin", plugins[0]):
        return reason
    try:
        jax.devices("gpu")
    except RuntimeError as error:
        return jax_failure(jax, error)
    return None


def jax_failure(jax, error: RuntimeError) -> str:
    """Why JAX has no GPU backend: its CUDA backend failed to start, with JAX's own words, or it sees no GPU."""
    said = str(error)
    if "initialize" not in said:
        # Asked for "gpu", JAX says only that none is there; asked for "cuda", it gives the error that stopped it.
        try:
            jax.devices("cuda")
        except RuntimeError as cuda_error:
            said = str(cuda_error)
    # JAX's words (jax/_src/xla_bridge.py): "Backend 'cuda' failed to initialize: WHY. Available backends are [...]",
    # or, where the plugin may not fail quietly, "Unable to initialize backend 'cuda': WHY (...)".
    found = re.search(r"(?:failed to initialize|Unable to initialize backend '\w+'): (.*?)"
                      r"(?:\. Available backends are .*)?$", said, re.DOTALL)
    if not found:
        return "no GPU visible to JAX"
    return f"JAX's CUDA backend failed to start: {' '.join(found[1].split())}"


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def triton_reason() -> str | None:
    """What torch.compile's Triton lacks here to build its GPU code, each thing looked up as Triton does; None if
    nothing. Triton compiles a small C launcher at the first kernel, so without these torch.compile fails then."""
    if importlib.util.find_spec("triton") is None:
        return ("triton is not installed (torch.compile makes Triton kernels on a GPU); it comes with PyPI's CUDA build of "
                "torch: reinstall that")
    missing = [reason for reason in (c_compiler_missing(), python_headers_missing(), libcuda_missing()) if reason]
    return f"torch.compile's Triton cannot build here: {'; '.join(missing)}" if missing else None


# What a solver may need on a GPU beyond its packages (Solver.gpu_needs), each with its reason function.
GPU_NEEDS = {"triton": triton_reason}


def gpu_need_reason(need: str) -> str | None:
    """Why a solver's GPU need beyond its packages (GPU_NEEDS) is not met here, or None when it is."""
    try:
        reason = GPU_NEEDS[need]
    except KeyError:
        raise KeyError(f"unknown GPU need {need!r}; known: {', '.join(GPU_NEEDS)}") from None
    return reason()


def c_compiler_missing() -> str | None:
    # Triton's choice (triton/runtime/build.py): $CC as given, else gcc, else clang, on PATH.
    if (compiler := os.environ.get("CC")) is not None:
        return None if shutil.which(compiler) else f"CC is {compiler!r}, which is no program here"
    if shutil.which("gcc") or shutil.which("clang"):
        return None
    return "no C compiler (Triton takes $CC, else gcc or clang on PATH: install gcc)"


def python_headers_missing() -> str | None:
    # Triton's include folder (triton/runtime/build.py): the default scheme's, Debian's posix_local as posix_prefix.
    scheme = sysconfig.get_default_scheme()
    include = sysconfig.get_paths(scheme="posix_prefix" if scheme == "posix_local" else scheme)["include"]
    if os.path.isfile(os.path.join(include, "Python.h")):
        return None
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return f"no Python.h in {include} (Python's headers: install python{version}-dev or the like)"


# Where Triton runs ldconfig: its own fixed path, not PATH's.
LDCONFIG = "/sbin/ldconfig"


def libcuda_missing() -> str | None:
    # Triton's lookup (libcuda_dirs in triton/backends/nvidia/driver.py): TRITON_LIBCUDA_PATH where set; else the
    # libcuda.so.1 that `/sbin/ldconfig -p` lists; else, only where it lists none, LD_LIBRARY_PATH's folders.
    if folder := os.environ.get("TRITON_LIBCUDA_PATH"):
        if os.path.isfile(os.path.join(folder, "libcuda.so.1")):
            return None
        return f"TRITON_LIBCUDA_PATH is {folder}, which holds no libcuda.so.1"
    try:
        listing = subprocess.run([LDCONFIG, "-p"], capture_output=True, text=True, errors="ignore", timeout=10,
                                 check=True).stdout
    except (OSError, subprocess.SubprocessError) as error:  # Triton's own call fails the same way, and so its build
        return (f"{LDCONFIG} -p, which Triton runs to find libcuda.so.1, failed ({one_line(error)}); set "
                "TRITON_LIBCUDA_PATH to the folder that holds it")
    # Each line: "libcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1"
    folders = [os.path.dirname(line.split()[-1]) for line in listing.splitlines() if "libcuda.so.1" in line]
    if not folders:
        folders = [folder for folder in os.environ.get("LD_LIBRARY_PATH", "").split(":") if folder]
    if any(os.path.isfile(os.path.join(folder, "libcuda.so.1")) for folder in folders):
        return None
    return (f"no libcuda.so.1, the NVIDIA driver's library, where Triton looks ({LDCONFIG} -p, then LD_LIBRARY_PATH): "
            "set TRITON_LIBCUDA_PATH to the folder that holds it")


def gpu_name(package: str) -> str:
    """The GPU's name as package's runtime reports it, e.g. 'NVIDIA H100 80GB HBM3'; only where it sees one."""
    if package == "tensorflow":
        return tensorflow_gpu_names()[0]
    if package == "jax":
        import jax

        return jax.devices("gpu")[0].device_kind
    if package == "torch":
        import torch

        return torch.cuda.get_device_name(0)
    raise ValueError(f"{package} solvers here are CPU-only")
