"""TensorFlow for the solvers: imported lazily and quietly, with strict device placement and its thread setting."""

import argparse
import os
import re
import sys
import tempfile
from collections import Counter
from contextlib import contextmanager
from functools import cache

# Read by session_config() and the eager runtime; the benchmark option --threads sets it.
THREADS_VARIABLE = "FSSGD_THREADS"
# 0 leaves TensorFlow's own thread pools, as the seed program ran; N pins intra- and inter-op threads to N.
DEFAULT_THREADS = 0
# TensorFlow aborts the interpreter on a negative count and spends minutes starting 100,000 threads.
MAX_THREADS = 1024
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
    if "tensorflow" in sys.modules or os.environ["TF_CPP_MIN_LOG_LEVEL"] == "0":
        import tensorflow as tf
    else:
        with startup_noise_dropped():
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


def thread_count(text: str) -> int:
    """The --threads / FSSGD_THREADS value as a count; ValueError, with what is allowed, for any other."""
    try:
        count = int(text)
    except (TypeError, ValueError):
        count = None
    if count is None or not 0 <= count <= MAX_THREADS:
        raise ValueError(f"expected 0 (TensorFlow's defaults) or a thread count from 1 to {MAX_THREADS}, got {text!r}")
    return count


def threads_argument(text: str) -> int:
    """thread_count for argparse options (pytest's and the gate's), which print an ArgumentTypeError's own message."""
    try:
        return thread_count(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def threads() -> int:
    """TensorFlow's intra- and inter-op threads for this process: 0 for TensorFlow's own defaults."""
    try:
        return thread_count(os.environ.get(THREADS_VARIABLE, str(DEFAULT_THREADS)))
    except ValueError as error:
        raise ValueError(f"{THREADS_VARIABLE}: {error}") from None


def threads_setting(count: int) -> str:
    """How a run's thread count reads in tables: 'TF default' for 0."""
    return "TF default" if count == 0 else f"pinned to {count}"


ONEDNN_VARIABLE = "TF_ENABLE_ONEDNN_OPTS"


def onednn_setting(variables=os.environ) -> str:
    """How oneDNN is set, as tables read it: by TF_ENABLE_ONEDNN_OPTS, or left to TensorFlow, which turns it on
    by default (2.9 on, Linux x86) where the CPU has the instructions it is tuned for."""
    value = variables.get(ONEDNN_VARIABLE)
    return "TF default" if value is None else f"{ONEDNN_VARIABLE}={value}"


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
    return tf.compat.v1.ConfigProto(
        allow_soft_placement=False,
        intra_op_parallelism_threads=threads(),
        inter_op_parallelism_threads=threads(),
    )


def device_spec(device: str) -> str:
    return DEVICE_SPECS[device]


def is_out_of_memory(error: BaseException) -> bool:
    """Whether error is TensorFlow's out-of-memory error; never imports TensorFlow to say no."""
    tf = sys.modules.get("tensorflow")
    return tf is not None and isinstance(error, tf.errors.ResourceExhaustedError)


@contextmanager
def recording_placement():
    """Yields a Counter, filled on exit, of the devices TensorFlow placed each float-valued op on inside this block.

    It reads the runtime's own record, not the devices asked for: TF1 sessions opened inside the block get one
    extra, traced Session.run of their graph's final ops (dummy feeds; every solver run re-initializes its
    state), and eager ops and tf.functions run inside it report their partitioned graphs. Only float-valued ops
    count: int32 loop counters, shapes and the runtime's own _Send/_Recv/_Arg nodes may live in host memory by
    design. XLA-compiled functions report nothing. Use it around setup only: it slows every op it watches.
    """
    tf = import_tensorflow()
    from tensorflow.python.eager import context  # the eager run-metadata switch has no public alias

    sessions, placed = [], Counter()
    session_init = tf.compat.v1.Session.__init__

    def recording_init(session, *args, **kwargs):
        session_init(session, *args, **kwargs)
        sessions.append(session)

    tf.compat.v1.Session.__init__ = recording_init
    context.enable_run_metadata()
    # Eager ops report their placement when their kernel is built; cached kernels (from an earlier run) would not.
    context.context().clear_kernel_cache()
    try:
        yield placed
        for session in sessions:
            if not session._closed:
                placed.update(session_placement(tf, session))
        placed.update(eager_placement(tf, context.export_run_metadata()))
    finally:
        context.disable_run_metadata()
        tf.compat.v1.Session.__init__ = session_init


def session_placement(tf, session) -> list[str]:
    """The devices of the float-valued nodes in one traced run of every op nothing else in the graph consumes."""
    graph = session.graph
    final_ops = [op for op in graph.get_operations()
                 if not any(output.consumers() for output in op.outputs) and op._control_flow_context is None]
    # Any value of the right shape will do for placement; int32 feeds are counts, so 1 runs each loop body once.
    feed = {op.outputs[0]: dummy_value(op.outputs[0]) for op in graph.get_operations() if op.type == "Placeholder"}
    metadata = tf.compat.v1.RunMetadata()
    session.run(final_ops, feed_dict=feed, run_metadata=metadata,
                options=tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE))
    return [
        stats.device
        for stats in metadata.step_stats.dev_stats
        for node in stats.node_stats
        if not node.node_name.startswith("_")  # the runtime's own feed/fetch nodes (_arg_*, _retval_*, _SOURCE)
        and any(tf.dtypes.as_dtype(output.tensor_description.dtype).is_floating for output in node.output)
    ]


def dummy_value(tensor):
    import numpy as np

    return np.ones(tensor.shape.as_list(), dtype=tensor.dtype.as_numpy_dtype)


def eager_placement(tf, metadata) -> list[str]:
    """The devices of the float-typed nodes in the partitioned graphs of eager ops and tf.functions."""
    return [
        node.device
        for function_graph in metadata.function_graphs
        for partition in function_graph.partition_graphs
        for node in partition.node
        if not node.op.startswith("_") and any(
            key in node.attr and tf.dtypes.as_dtype(node.attr[key].type).is_floating for key in ("T", "dtype"))
    ]


def misplaced(placement: dict, device: str) -> str | None:
    """Why placement ({device name: float ops placed there}) is not all on device ("cpu"/"gpu"), or None if it is."""
    if not placement:
        return "TensorFlow recorded no op placement, so it cannot be checked"
    wrong = {name: count for name, count in placement.items() if device_kind(name) != device}
    if wrong:
        where = ", ".join(f"{count} on {name}" for name, count in sorted(wrong.items()))
        return f"asked for {device}, but TensorFlow placed float ops elsewhere: {where}"
    return None


def device_kind(name: str) -> str:
    """'cpu' or 'gpu' from a device name like /job:localhost/replica:0/task:0/device:GPU:0 (XLA_GPU counts as gpu)."""
    match = re.search(r"device:(?:XLA_)?([A-Za-z]+):\d+", name)
    return match.group(1).lower() if match else f"unknown ({name})"


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
    """The eager runtime's (intra, inter) op threads, set to threads() at first import unless it already started."""
    threading = tf.config.threading
    try:
        threading.set_intra_op_parallelism_threads(threads())
        threading.set_inter_op_parallelism_threads(threads())
    except RuntimeError:  # already started by TensorFlow code run before ours; eager_config reports the mismatch
        pass
    return threading.get_intra_op_parallelism_threads(), threading.get_inter_op_parallelism_threads()
