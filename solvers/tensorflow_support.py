"""TensorFlow for the solvers: imported lazily and quietly, with strict device placement and its thread setting."""

import os
import re
import sys
import tempfile
from contextlib import contextmanager, nullcontext
from functools import cache

# Read by session_config() and the eager runtime; the benchmark option --threads sets it.
THREADS_VARIABLE = "FSSGD_THREADS"
# 0 leaves TensorFlow's own thread pools, as the seed program ran; N pins intra- and inter-op threads to N.
DEFAULT_THREADS = 0
# TensorFlow aborts the interpreter on a negative count and spends minutes starting 100,000 threads.
MAX_THREADS = 1024
ONEDNN_VARIABLE = "TF_ENABLE_ONEDNN_OPTS"
# "0" in a counted worker (perf/measure/count.py sets it): TensorFlow's idle pool threads then sleep at once rather than
# spin, whose instructions are waiting, not work, and as many as the scheduling allows (docs/measurement.md,
# "Counted: instructions a step").
SPINNING_VARIABLE = "FSSGD_THREAD_SPINNING"
DEVICE_SPECS = {"cpu": "/device:CPU:0", "gpu": "/device:GPU:0"}
NO_GPU = "no GPU visible to TensorFlow"  # why gpu benchmarks skip, and gpu solvers are refused, without one
# Printed by TensorFlow's C++ runtime while it loads, through a logger that starts before
# TF_CPP_MIN_LOG_LEVEL is read, so only catching them on the way out quiets them.
STARTUP_NOISE = re.compile(
    r"All log messages before absl::InitializeLog|port\.cc:\d+\] oneDNN custom operations are on"
    r"|cpu_feature_guard\.cc|To enable the following instructions:.*rebuild TensorFlow"
)


def import_tensorflow():
    # Silence C++ start-up logs before the first import; an explicit user setting wins.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    quiet = "tensorflow" not in sys.modules and os.environ["TF_CPP_MIN_LOG_LEVEL"] != "0"
    with startup_noise_dropped() if quiet else nullcontext():
        import tensorflow as tf

    eager_threads(tf)  # before anything starts the eager runtime, which fixes them (even TF1 while_loops start it)
    return tf


@contextmanager
def startup_noise_dropped():
    """Whatever is written to file descriptor 2 inside the block, less TensorFlow's known start-up lines."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            kept = [line for line in captured.read().decode(errors="replace").splitlines(keepends=True)
                    if not STARTUP_NOISE.search(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


def thread_count(text: str) -> int:
    """The --threads / FSSGD_THREADS value as a count; ValueError, with what is allowed, for any other."""
    try:
        count = int(text)
    except (TypeError, ValueError):
        count = None
    if count is None or not 0 <= count <= MAX_THREADS:
        raise ValueError(f"expected 0 (TensorFlow's defaults) or a thread count from 1 to {MAX_THREADS}, got {text!r}")
    return count


def threads() -> int:
    """TensorFlow's intra- and inter-op threads for this process: 0 for TensorFlow's own defaults."""
    try:
        return thread_count(os.environ.get(THREADS_VARIABLE, str(DEFAULT_THREADS)))
    except ValueError as error:
        raise ValueError(f"{THREADS_VARIABLE}: {error}") from None


def thread_spinning() -> bool:
    """Whether TensorFlow's pool threads spin while they wait for work, as by default."""
    return os.environ.get(SPINNING_VARIABLE, "1") != "0"


def onednn_enabled() -> bool | None:
    """Whether this process's TensorFlow runs oneDNN's ops, as TensorFlow decided it; None where it cannot say."""
    try:
        from tensorflow.python.util import _pywrap_util_port
    except ImportError:
        return None
    return bool(_pywrap_util_port.IsMklEnabled())


def session_config():
    """Strict placement (an op that cannot run where asked fails) and the thread setting (0: TensorFlow's)."""
    tf = import_tensorflow()
    config = tf.compat.v1.ConfigProto(
        allow_soft_placement=False,
        intra_op_parallelism_threads=threads(),
        inter_op_parallelism_threads=threads(),
    )
    config.experimental.disable_thread_spinning = not thread_spinning()
    return config


@contextmanager
def eager_config():
    """TF2 eager code and tf.functions under session_config()'s placement rule and threads, as TF1 sessions are.

    Eager soft-places by default: a GPU request without a GPU would silently run on the CPU. With
    allow_soft_placement=False it fails instead, with the same InvalidArgumentError a TF1 session gives.
    The setting is process-wide, so it is restored on exit.
    """
    tf, config = import_tensorflow(), session_config()
    wanted = (config.intra_op_parallelism_threads, config.inter_op_parallelism_threads)
    if eager_threads(tf) != wanted:
        raise RuntimeError(
            f"TensorFlow's eager runtime runs (intra, inter) = {eager_threads(tf)} op threads, not the {wanted} asked: "
            f"TensorFlow fixes them when it starts, so set {THREADS_VARIABLE} before the first TensorFlow import"
        )
    soft = tf.config.get_soft_device_placement()
    tf.config.set_soft_device_placement(config.allow_soft_placement)
    try:
        yield
    finally:
        tf.config.set_soft_device_placement(soft)


@cache
def eager_threads(tf) -> tuple[int, int]:
    """The eager runtime's (intra, inter) op threads, set to threads() at first import unless it already started."""
    threading = tf.config.threading
    if not thread_spinning():  # the eager runtime's pools, which TF1 sessions share where it starts first
        from tensorflow.python.eager import context

        config = context.context()._config or tf.compat.v1.ConfigProto()
        config.experimental.disable_thread_spinning = True
        context.context()._config = config
    try:
        threading.set_intra_op_parallelism_threads(threads())
        threading.set_inter_op_parallelism_threads(threads())
    except RuntimeError:  # already started by TensorFlow code run before ours; eager_config reports the mismatch
        pass
    return threading.get_intra_op_parallelism_threads(), threading.get_inter_op_parallelism_threads()
