"""Where TensorFlow placed a solver's float ops, read from the runtime's own record, and why that is not the device
asked for."""

import re
from collections import Counter
from contextlib import contextmanager

import numpy as np

from solvers.tensorflow_support import import_tensorflow


@contextmanager
def recording_placement():
    """Yields a Counter, filled on exit, of the devices TensorFlow placed each float-valued op on inside this block,
    from the runtime's own record: TF1 sessions opened inside it get one extra, traced Session.run of their graph's
    final ops, and eager ops and tf.functions report their partitioned graphs. Only float-valued ops count: loop
    counters, shapes and the runtime's _Send/_Recv/_Arg nodes may live in host memory by design. XLA-compiled functions
    report nothing. Around setup only: it slows every op it watches."""
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
    feed = {op.outputs[0]: np.ones(op.outputs[0].shape.as_list(), dtype=op.outputs[0].dtype.as_numpy_dtype)
            for op in graph.get_operations() if op.type == "Placeholder"}
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
    if wrong := {name: count for name, count in placement.items() if device_kind(name) != device}:
        where = ", ".join(f"{count} on {name}" for name, count in sorted(wrong.items()))
        return f"asked for {device}, but TensorFlow placed float ops elsewhere: {where}"
    return None


def device_kind(name: str) -> str:
    """'cpu' or 'gpu' from a device name like /job:localhost/replica:0/task:0/device:GPU:0 (XLA_GPU counts as gpu)."""
    match = re.search(r"device:(?:XLA_)?([A-Za-z]+):\d+", name)
    return match.group(1).lower() if match else f"unknown ({name})"
