"""How several worker processes share one GPU: the memory settings each starts with, what it held, what ran out.

Only the standard library, and no framework imported here: the worker (perf/measure/worker.py) uses this inside another
version's tree, and reads a framework only where that version's solvers imported it."""

import gc
import os
import re
import subprocess
import sys
from functools import cache

# Set in every worker and in the pytest process unless the user set them: each framework would otherwise take most of
# the GPU in the first process that touches it (TensorFlow nearly all, TF1 sessions and TF2 alike; JAX 75%), and the
# suite keeps a worker per trial alive at once. PyTorch's caching allocator is emptied after every trial instead.
MEMORY_SETTINGS = {"TF_FORCE_GPU_ALLOW_GROWTH": "true", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
OUT_OF_MEMORY = "out of memory"  # the kind a worker gives an out-of-memory error, whichever framework raised it
# Where released() cannot reset a framework's peak: JAX's memory_stats() keeps peak_bytes_in_use for the process's
# life, so its peak is read as each trial opens too (peak_at_open).
PEAK_NOT_RESET = ("jax",)
# What a recorded peak is the peak of (extra_info.gpu_peak_scope): the trial's own, or the worker's so far (trial_peak).
TRIAL, WORKER = "trial", "worker"
# The exception classes the frameworks raise when a device allocation fails: TensorFlow's, PyTorch's, and JAX's (whose
# runtime error says RESOURCE_EXHAUSTED in its message, and otherwise means other failures too).
OUT_OF_MEMORY_CLASSES = ("ResourceExhaustedError", "OutOfMemoryError")
JAX_RUNTIME_CLASSES = ("XlaRuntimeError", "JaxRuntimeError")
# What an error says where a device allocation failed under a class that also means other failures, in any error of
# its chain. TensorFlow raises some of its GPU out-of-memory errors as InternalError, and torch.compile wraps PyTorch's
# OutOfMemoryError in its own error and repeats its text; an InternalError that says none of these stays other. A
# message counts only where it also names the GPU (GPU_NAMED): TensorFlow's host-side "Failed to allocate memory for
# the batch" is a failed allocation too, but not the GPU's.
OUT_OF_MEMORY_MESSAGES = (
    # TensorFlow, copying into a GPU tensor its allocator could not allocate: errors::Internal in
    # core/common_runtime/gpu/gpu_util.cc ("when really the problem is out of GPU memory": tensorflow#7025).
    r"Dst tensor is not initialized",
    # TensorFlow's matmul where its cuBLAS call fails ("Blas GEMM launch failed : a.shape=(...)", SGEMM, xGEMMBatched:
    # core/kernels/matmul_op.cc): in the reports, cuBLAS could get no memory on a GPU that other processes held
    # (tensorflow#11812, #34069: gone once the other notebooks closed). The only one not worded as an allocation.
    r"Blas \w*GEMM\w* launch failed",
    # The CUDA driver's failed allocation, as TensorFlow's stream executor words it: "failed to allocate 3.81G
    # (4087755776 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory" (stream_executor/cuda/cuda_driver.cc),
    # or "failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY" (tensorflow#7272).
    r"(?i)failed to allocate", r"CUDA_ERROR_OUT_OF_MEMORY",
    # PyTorch's caching allocator, "CUDA out of memory. Tried to allocate 2.00 GiB", repeated by torch.compile's
    # wrappers: BackendCompilerFailed "backend='inductor' raised:\nOutOfMemoryError: CUDA out of memory..."
    # (torch/_dynamo/exc.py), InductorError "OutOfMemoryError: CUDA out of memory..." (torch/_inductor/exc.py); and
    # PyTorch's check of a CUDA call that failed with cudaErrorMemoryAllocation, "CUDA error: out of memory".
    r"CUDA out of memory", r"CUDA error: out of memory",
)
GPU_NAMED = re.compile(r"(?i)gpu|cuda|cublas")  # CUDA_ERROR_..., device:GPU:0, cuBLAS, "CUDA out of memory"


def memory_settings(environ=os.environ) -> dict[str, str]:
    """The GPU memory settings a worker runs with: MEMORY_SETTINGS, where environ does not set them otherwise."""
    return {name: environ.get(name, default) for name, default in MEMORY_SETTINGS.items()}


def out_of_memory(error: BaseException, device: str) -> str | None:
    """out_of_memory_message where a GPU trial's error is out of memory, else None: on the CPU the same words mean the
    host's memory, and the error keeps its traceback."""
    return out_of_memory_message(error, holders()) if device == "gpu" and is_out_of_memory(error) else None


def is_out_of_memory(error: BaseException) -> bool:
    """Whether error is a framework's out-of-memory error, or wraps one."""
    return out_of_memory_cause(error) is not None


def out_of_memory_cause(error: BaseException) -> BaseException | None:
    """The out-of-memory error in error's chain, or None: one of an out-of-memory class first, else the innermost whose
    message says an allocation failed, which a wrapper's repeats. An error wraps its __cause__ (raise ... from), and
    its __context__ only where it hid it (raise ... from None, as torch.compile's errors do): one raised while another
    was handled, without either, is a failure of its own."""
    chain, waiting = {}, [error]  # chain: id -> error, in the order met
    while waiting:
        link = waiting.pop(0)
        if link is None or id(link) in chain:  # a chain can loop: an error raised again while it was handled
            continue
        chain[id(link)] = link
        waiting += [link.__cause__, link.__context__ if link.__suppress_context__ else None]
    by_class = [link for link in chain.values() if out_of_memory_class(link)]
    by_message = [link for link in chain.values() if out_of_memory_line(link)]
    return (by_class or by_message[::-1] or [None])[0]


def out_of_memory_class(error: BaseException) -> bool:
    name = type(error).__name__
    return name in OUT_OF_MEMORY_CLASSES or (name in JAX_RUNTIME_CLASSES and "RESOURCE_EXHAUSTED" in str(error))


def out_of_memory_line(error: BaseException) -> str | None:
    """The first line of error's message that says a device allocation failed, where the message names the GPU."""
    message = str(error)
    if not GPU_NAMED.search(message):
        return None
    return next((line.strip() for line in message.splitlines()
                 if any(re.search(pattern, line) for pattern in OUT_OF_MEMORY_MESSAGES)), None)


def nvidia_smi(*arguments: str) -> str:
    """What nvidia-smi prints with these arguments; '' without a driver (FileNotFoundError) or where it fails."""
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
    """Each GPU's model and driver version ('NVIDIA H100 80GB HBM3, 570.86'); empty without a driver."""
    listing = nvidia_smi("--query-gpu=name,driver_version", "--format=csv,noheader")
    return tuple(line.strip() for line in listing.splitlines() if line.strip())


@cache
def driver_cuda_version() -> str | None:
    """The newest CUDA the driver runs ('12.8'), as nvidia-smi -q says it; None without a driver."""
    found = re.search(r"^\s*CUDA Version\s*:\s*(\S+)", nvidia_smi("-q"), re.MULTILINE)
    return found.group(1) if found else None


def out_of_memory_message(error: BaseException, held_by: list[str]) -> str:
    """What ran out (not a wrapper around it), who held the GPU then, and what to change."""
    cause = out_of_memory_cause(error) or error
    first_line = out_of_memory_line(cause) or (str(cause).strip().splitlines() or [type(cause).__name__])[0]
    raised_as = f" (raised as {type(error).__name__})" if cause is not error else ""
    who = (f"{len(held_by)} process{'es' * (len(held_by) != 1)} held the GPU then ({'; '.join(held_by)})" if held_by
           else "nvidia-smi could not say which processes held the GPU")
    settings = ", ".join(f"{name}={value}" for name, value in memory_settings().items())
    return (f"out of memory: {type(cause).__name__}: {first_line}{raised_as}; {who}. Each of the suite's processes "
            f"runs under {settings}, and it keeps one worker per trial alive: free the GPU of other processes, or run "
            f"fewer at once (a profile with fewer trials; pytest without -n)")


def peak_bytes(package: str) -> int | None:
    """The most GPU memory package's runtime here has held since the last released() (JAX's: ever), where it says."""
    if (module := sys.modules.get(package)) is None:
        return None
    if package == "torch":
        return int(module.cuda.max_memory_allocated()) if module.cuda.is_initialized() else None
    if package == "tensorflow":
        return int(module.config.experimental.get_memory_info("GPU:0")["peak"])
    if package == "jax":
        return (module.devices("gpu")[0].memory_stats() or {}).get("peak_bytes_in_use")
    return None


def peak_at_open(package: str) -> int | None:
    """package's peak as a trial opens, where released() cannot reset it (JAX's), else None; 0 where JAX has started no
    backend, and starts none where JAX can say (its cost belongs to the trial's setup); None where it cannot say."""
    if package not in PEAK_NOT_RESET:
        return None
    if package not in sys.modules:
        return 0
    # JAX's own answer is private (jax._src); where a release drops it, the peak is read, starting a backend.
    started = getattr(sys.modules.get("jax._src.xla_bridge"), "backends_are_initialized", None)
    try:
        return 0 if started is not None and not started() else peak_bytes(package)
    except Exception:
        return None


def trial_peak(package: str, at_open: int | None, at_close: int | None) -> tuple[int | None, str | None]:
    """A closed trial's peak and its scope: the trial's own (TRIAL) where released() reset the peak before the trial
    or it rose during the trial; else the worker's (WORKER), which bounds the trial's; (None, None) where unknown."""
    if at_close is None:
        return None, None
    if package not in PEAK_NOT_RESET or (at_open is not None and at_close > at_open):
        return at_close, TRIAL
    return at_close, WORKER


def released(package: str) -> None:
    """What a closed GPU trial held, given back, and the peak reset where the framework can."""
    gc.collect()  # JAX's and PyTorch's device buffers go with their last reference
    module = sys.modules.get(package)
    if package == "torch" and module is not None and module.cuda.is_initialized():
        module.cuda.empty_cache()
        module.cuda.reset_peak_memory_stats()
    elif package == "tensorflow" and module is not None:
        module.config.experimental.reset_memory_stats("GPU:0")
