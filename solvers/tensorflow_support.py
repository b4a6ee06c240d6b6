"""TensorFlow for the solvers: imported lazily and quietly, with strict device placement and pinned threads."""

import os
from contextlib import contextmanager
from functools import cache

# Read by session_config(); the benchmark option --threads sets it.
THREADS_VARIABLE = "FSSGD_THREADS"
DEVICE_SPECS = {"cpu": "/device:CPU:0", "gpu": "/device:GPU:0"}


def import_tensorflow():
    # Silence C++ start-up logs before the first import; an explicit user setting wins.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    eager_threads(tf)  # before anything starts the eager runtime, which fixes them (even TF1 while_loops start it)
    return tf


@cache
def unavailable_reason() -> str | None:
    """Why TensorFlow cannot be used here, or None when it can."""
    try:
        import_tensorflow()
    except ImportError as error:
        return f"tensorflow is not installed ({error}); install the tf-cpu or tf-gpu extra"
    except Exception as error:  # a broken install fails in many ways, none of which is ours to fix
        return f"tensorflow is installed but failed to import: {type(error).__name__}: {error}"
    return None


@cache
def gpu_names() -> tuple[str, ...]:
    """Names of the GPUs TensorFlow sees, e.g. ('NVIDIA H200',); empty without TensorFlow or a GPU."""
    if unavailable_reason():
        return ()
    tf = import_tensorflow()
    return tuple(
        tf.config.experimental.get_device_details(gpu).get("device_name", gpu.name)
        for gpu in tf.config.list_physical_devices("GPU")
    )


def threads() -> int:
    return int(os.environ.get(THREADS_VARIABLE, "1"))


def session_config():
    """Strict placement (an op that cannot run where asked fails) and a pinned thread count."""
    tf = import_tensorflow()
    return tf.compat.v1.ConfigProto(
        allow_soft_placement=False,
        intra_op_parallelism_threads=threads(),
        inter_op_parallelism_threads=threads(),
    )


def device_spec(device: str) -> str:
    return DEVICE_SPECS[device]



@contextmanager
def eager_config(config):
    """TF2 eager code and tf.functions under a session config's placement rule and threads, as TF1 sessions are.

    Eager soft-places by default: a GPU request without a GPU would silently run on the CPU. With
    allow_soft_placement=False it fails instead, with the same InvalidArgumentError a TF1 session gives.
    The setting is process-wide, so it is restored on exit.
    """
    tf = import_tensorflow()
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
    """The eager runtime's (intra, inter) op threads, pinned to threads() at first import unless it already started."""
    threading = tf.config.threading
    try:
        threading.set_intra_op_parallelism_threads(threads())
        threading.set_inter_op_parallelism_threads(threads())
    except RuntimeError:  # already started by TensorFlow code run before ours; eager_config reports the mismatch
        pass
    return threading.get_intra_op_parallelism_threads(), threading.get_inter_op_parallelism_threads()
