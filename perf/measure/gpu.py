"""How several worker processes share one GPU: the memory settings each starts with, what it held, what ran out.

Only the standard library at module level, and no framework imported here: the worker (perf/measure/worker.py) uses
this inside another version's tree, and reads a framework only where that version's solvers already imported it.
"""

import gc
import os
import re
import shutil
import subprocess
import sys
from functools import cache

# Set in every worker and in the pytest process unless the user set them: each framework would otherwise take most of
# the GPU in the first process that touches it (TensorFlow nearly all, TF1 sessions and TF2 alike; JAX 75%), and the
# suite keeps a worker per trial alive at once. PyTorch's caching allocator is emptied after every trial instead.
MEMORY_SETTINGS = {"TF_FORCE_GPU_ALLOW_GROWTH": "true", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
OUT_OF_MEMORY = "out of memory"  # the kind a worker gives an out-of-memory error, whichever framework raised it
# The exception classes the frameworks raise when a device allocation fails: TensorFlow's, PyTorch's, and JAX's (whose
# runtime error says RESOURCE_EXHAUSTED in its message, and otherwise means other failures too).
OUT_OF_MEMORY_CLASSES = ("ResourceExhaustedError", "OutOfMemoryError")
JAX_RUNTIME_CLASSES = ("XlaRuntimeError", "JaxRuntimeError")


def memory_settings(environ=os.environ) -> dict[str, str]:
    """The GPU memory settings a worker runs with: MEMORY_SETTINGS, where environ does not set them otherwise."""
    return {name: environ.get(name, default) for name, default in MEMORY_SETTINGS.items()}


def is_out_of_memory(error: BaseException) -> bool:
    """Whether error is a framework's out-of-memory error (TensorFlow's, JAX's, PyTorch's), told by its class."""
    name = type(error).__name__
    return name in OUT_OF_MEMORY_CLASSES or (name in JAX_RUNTIME_CLASSES and "RESOURCE_EXHAUSTED" in str(error))


def nvidia_smi(*arguments: str) -> str:
    """What the NVIDIA driver's nvidia-smi prints with these arguments; '' without a driver or where it fails."""
    if not shutil.which("nvidia-smi"):
        return ""
    try:
        return subprocess.run(["nvidia-smi", *arguments], capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def holders() -> list[str]:
    """The processes holding a GPU as the driver lists them ('pid 123: 500 MiB'), or [] where it cannot say."""
    listing = nvidia_smi("--query-compute-apps=pid,used_memory", "--format=csv,noheader")
    return [f"pid {pid.strip()}: {memory.strip()}" for pid, _, memory in
            (line.partition(",") for line in listing.splitlines() if line.strip())]


@cache
def models() -> tuple[str, ...]:
    """Each GPU's model and driver version as the driver reports them ('NVIDIA H100 80GB HBM3, 570.86'); empty
    without a driver."""
    listing = nvidia_smi("--query-gpu=name,driver_version", "--format=csv,noheader")
    return tuple(line.strip() for line in listing.splitlines() if line.strip())


@cache
def driver_cuda_version() -> str | None:
    """The newest CUDA the driver runs ('12.8'), as nvidia-smi -q says it; None without a driver."""
    found = re.search(r"^\s*CUDA Version\s*:\s*(\S+)", nvidia_smi("-q"), re.MULTILINE)
    return found.group(1) if found else None


def out_of_memory_message(error: BaseException, held_by: list[str]) -> str:
    """What ran out, who held the GPU then, and what to change."""
    first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    who = (f"{len(held_by)} process{'es' * (len(held_by) != 1)} held the GPU then ({'; '.join(held_by)})" if held_by
           else "nvidia-smi could not say which processes held the GPU")
    settings = ", ".join(f"{name}={value}" for name, value in memory_settings().items())
    return (f"out of memory: {type(error).__name__}: {first_line}; {who}. Each of the suite's processes runs under "
            f"{settings}, and it keeps one worker per trial alive: free the GPU of other processes, or run fewer at "
            f"once (a profile with fewer trials; pytest without -n)")


def peak_bytes(package: str) -> int | None:
    """The most GPU memory package's runtime in this process has held since the last released(), where it says."""
    if (module := sys.modules.get(package)) is None:
        return None
    if package == "torch":
        return int(module.cuda.max_memory_allocated()) if module.cuda.is_initialized() else None
    if package == "tensorflow":
        return int(module.config.experimental.get_memory_info("GPU:0")["peak"])
    if package == "jax":
        return (module.devices("gpu")[0].memory_stats() or {}).get("peak_bytes_in_use")
    return None


def released(package: str) -> None:
    """What a closed GPU trial held, given back: its buffers collected, PyTorch's cache emptied, the peak reset."""
    gc.collect()  # JAX's and PyTorch's device buffers go with their last reference
    module = sys.modules.get(package)
    if package == "torch" and module is not None and module.cuda.is_initialized():
        module.cuda.empty_cache()
        module.cuda.reset_peak_memory_stats()
    elif package == "tensorflow" and module is not None:
        module.config.experimental.reset_memory_stats("GPU:0")
