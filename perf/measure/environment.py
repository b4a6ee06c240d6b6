"""What a saved run must record to be trusted and compared: versions, devices, threads, profile."""

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np

from perf.measure.profiles import shrink_factor
from perf.measure.trials import SLOWDOWN_VARIABLE
from solvers import tensorflow_support

SAVED_RUNS = ".benchmarks"  # pytest-benchmark's default storage, one folder per environment inside it
TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tf-nightly", "tf-nightly-cpu")


def tensorflow_distribution() -> tuple[str, str] | None:
    """(distribution, version) of the installed TensorFlow wheel, read without importing it."""
    for name in TENSORFLOW_DISTRIBUTIONS:
        try:
            return name, importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


@cache
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            match = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read(), re.MULTILINE)
    except OSError:
        match = None
    return match.group(1).strip() if match else platform.processor() or platform.machine()


@cache
def nvidia_gpu_models() -> tuple[str, ...]:
    """GPU models as the driver reports them, without importing TensorFlow; empty without a driver."""
    if not shutil.which("nvidia-smi"):
        return ()
    try:
        listing = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(line.strip() for line in listing.splitlines() if line.strip())


def storage_key() -> str:
    """A folder name per environment, so CPU-only and GPU results never share a baseline."""
    distribution = tensorflow_distribution()
    key = f"{distribution[0]}-{distribution[1]}" if distribution else "numpy-only"
    gpus = nvidia_gpu_models()
    if distribution and gpus:
        key += "-" + gpus[0].split(",")[0]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", key)


def runs_folder() -> Path:
    """Where this environment's runs are saved, relative to where pytest runs, unless --benchmark-storage says."""
    return Path(SAVED_RUNS) / storage_key()


def versions() -> dict:
    distribution = tensorflow_distribution()
    return {"tensorflow": distribution[1] if distribution else None, "numpy": np.__version__}


def device_name(device: str) -> str:
    return tensorflow_support.gpu_names()[0] if device == "gpu" else cpu_model()


def describe(profile: str) -> dict:
    """The environment recorded in every saved run's machine_info."""
    info = {
        "profile": profile,
        "cpu_model": cpu_model(),
        "numpy": np.__version__,
        "threads": tensorflow_support.threads(),  # 0: TensorFlow's defaults
        "threads_setting": tensorflow_support.threads_setting(tensorflow_support.threads()),
        # What TensorFlow's defaults size their thread pools from.
        "cpus_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        # TensorFlow's oneDNN ops, like its threads, change a step's cost (README "oneDNN").
        "onednn_setting": tensorflow_support.onednn_setting(),
        "thread_variables": {
            name: os.environ[name]
            for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE")
            if name in os.environ
        },
        "nvidia_gpus": list(nvidia_gpu_models()),
        # Test tooling that stretches the timed calls (perf/measure/trials.py): a slowed run must say so.
        "slowdown": os.environ.get(SLOWDOWN_VARIABLE) or None,
        # Test tooling that runs a profile many times shorter (perf/measure/profiles.py): a shrunk run must say so.
        "shrink": None if shrink_factor() == 1 else shrink_factor(),
        "tensorflow": None,
    }
    distribution = tensorflow_distribution()
    if distribution:
        info["tensorflow"] = {"distribution": distribution[0], "version": distribution[1]}
        # Build details need the import; only take them when this run already paid for it.
        if "tensorflow" in sys.modules and not tensorflow_support.unavailable_reason():
            tf = sys.modules["tensorflow"]
            build = tf.sysconfig.get_build_info()
            info["tensorflow"].update(
                cuda=build.get("cuda_version"), cudnn=build.get("cudnn_version"), gpus=list(tensorflow_support.gpu_names()),
                onednn=tensorflow_support.onednn_enabled(),
            )
    return info
