"""What a saved run must record to be trusted and compared: versions, devices, threads, profile."""

import contextlib
import importlib.metadata
import importlib.util
import os
import platform
import re
import sys
from functools import cache

import numpy as np

from perf.measure import cpus, gpu
from perf.measure.profiles import shrink_factor
from perf.measure.trials import SLOWDOWN_VARIABLE
from perf.measure.worker import malloc_settings
from perf.measure.workers import WORKER_PROCESSES
from solvers import packages, tensorflow_support

TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tf-nightly", "tf-nightly-cpu")


def tensorflow_distribution() -> tuple[str, str] | None:
    """(distribution, version) of the installed TensorFlow wheel, read without importing it."""
    for name in TENSORFLOW_DISTRIBUTIONS:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            return name, importlib.metadata.version(name)
    return None


@cache
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            match = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read(), re.MULTILINE)
    except OSError:
        match = None
    return match.group(1).strip() if match else platform.processor() or platform.machine()


def cuda_versions() -> dict | None:
    """The CUDA each GPU framework here was built for, and the newest the driver runs; None without a GPU. TensorFlow's
    build is under machine_info.fssgd.tensorflow."""
    if not gpu.models():
        return None
    found = {"driver": gpu.driver_cuda_version()}
    if importlib.util.find_spec("torch"):
        import torch

        found["torch"] = torch.version.cuda
    for plugin in ("jax-cuda13-plugin", "jax-cuda12-plugin"):  # JAX's CUDA runtime comes as a plugin of its own
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found["jax"] = f"{plugin} {importlib.metadata.version(plugin)}"
            break
    return found


def versions() -> dict:
    distribution = tensorflow_distribution()
    return {"tensorflow": distribution[1] if distribution else None, "numpy": np.__version__}


def device_name(solver, device: str) -> str:
    """The device as the solver's own framework names it: each sees the GPU through its own runtime."""
    return packages.gpu_name(solver.needs[0]) if device == "gpu" else cpu_model()


def describe(profile: str, affinity: tuple[int, ...] = ()) -> dict:
    """The environment recorded in every saved run's machine_info, described once a run (perf/plugin.py); affinity:
    the CPUs the workers were timed on, () where free."""
    info = {
        "profile": profile,
        "cpu_model": cpu_model(),
        "numpy": np.__version__,
        "threads": tensorflow_support.threads(),  # 0: TensorFlow's defaults
        "threads_setting": threads_setting(tensorflow_support.threads()),
        # Where the workers ran: free ("free") or pinned ("CPUs 1"), which changes a TF1 step's cost (docs/results).
        "cpu_affinity": cpus.affinity_setting(affinity),
        # What TensorFlow's defaults size their thread pools from: a pinned worker imports it on its CPUs.
        "cpus_available": len(affinity) or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                            else os.cpu_count()),
        # TensorFlow's oneDNN ops, like its threads, change a step's cost (docs/results/onednn/).
        "onednn_setting": onednn_setting(),
        "thread_variables": {
            name: os.environ[name]
            for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE")
            if name in os.environ
        },
        "nvidia_gpus": list(gpu.models()),
        "cuda": cuda_versions(),
        # What each worker process imports (perf/measure/workers.py): a benchmark's process state.
        "worker_processes": WORKER_PROCESSES,
        # What lets the suite's worker processes share one GPU (perf/measure/gpu.py).
        "gpu_memory_settings": gpu.memory_settings(),
        # glibc's thresholds for a large allocation, fixed in every worker (perf/measure/worker.py).
        "malloc_settings": malloc_settings(),
        # Test tooling that stretches the timed calls (perf/measure/trials.py): a slowed run must say so.
        "slowdown": os.environ.get(SLOWDOWN_VARIABLE) or None,
        # Test tooling that runs a profile many times shorter (perf/measure/profiles.py): a shrunk run must say so.
        "shrink": None if shrink_factor() == 1 else shrink_factor(),
        "tensorflow": None,
    }
    if distribution := tensorflow_distribution():
        info["tensorflow"] = {"distribution": distribution[0], "version": distribution[1]}
        # Build details need the import, taken wherever TensorFlow imports: pytest-benchmark compares machine_info as
        # the run starts, before any benchmark has imported it, with the saved run's, which that run may have described
        # as it ended. Details present at one end only would make it warn on every comparison that the machine changed.
        if not packages.unavailable_reason("tensorflow"):
            tf = sys.modules["tensorflow"]
            build = tf.sysconfig.get_build_info()
            info["tensorflow"].update(
                cuda=build.get("cuda_version"), cudnn=build.get("cudnn_version"),
                gpus=list(packages.tensorflow_gpu_names()), onednn=tensorflow_support.onednn_enabled(),
            )
    return info


# How the settings read, in tables and on the command line ------------------------------------------------------------


threads_argument = cpus.argument_type(tensorflow_support.thread_count)


def threads_setting(count: int) -> str:
    """How a run's thread count reads in tables: 'TF default' for 0."""
    return "TF default" if count == 0 else f"pinned to {count}"


def onednn_setting(variables=os.environ) -> str:
    """How oneDNN is set, as tables read it: by TF_ENABLE_ONEDNN_OPTS, or left to TensorFlow, which turns it on
    by default (2.9 on, Linux x86) where the CPU has the instructions it is tuned for."""
    value = variables.get(tensorflow_support.ONEDNN_VARIABLE)
    return "TF default" if value is None else f"{tensorflow_support.ONEDNN_VARIABLE}={value}"
