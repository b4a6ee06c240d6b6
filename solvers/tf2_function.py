"""TensorFlow 2 tf.function: the whole loop traced once into a graph, the iteration count a tensor argument."""

from contextlib import contextmanager

from solvers.problem import Fit, Problem
from solvers.tensorflow_support import DEVICE_SPECS, eager_config, import_tensorflow, session_config
from solvers.tf2_common import data_on, original_loss


def prepare(problem: Problem, device: str):
    return prepare_compiled(problem, device, session_config(), jit_compile=False)


@contextmanager
def prepare_compiled(problem: Problem, device: str, config, jit_compile: bool):
    tf, spec, lr = import_tensorflow(), DEVICE_SPECS[device], problem.lr
    with eager_config(config):
        x, y = data_on(tf, problem, spec)

        # A scalar int32 signature: one trace (and one XLA compile) serves every iteration count.
        @tf.function(input_signature=[tf.TensorSpec((), tf.int32)], jit_compile=jit_compile)
        def descend(iterations):
            with tf.device(spec):
                w = b = tf.constant(0.0, dtype=tf.float32)
                for _ in tf.range(iterations):  # autograph: a tf.while_loop inside the graph
                    with tf.GradientTape() as tape:
                        tape.watch([w, b])
                        loss = original_loss(tf, x, y, w, b)
                    grad_w, grad_b = tape.gradient(loss, [w, b])
                    w, b = w - lr * grad_w, b - lr * grad_b
                return w, b, original_loss(tf, x, y, w, b)

        def run(iterations: int) -> Fit:
            w, b, loss = descend(tf.constant(iterations, dtype=tf.int32))
            return Fit(w=float(w.numpy()), b=float(b.numpy()), loss=float(loss.numpy()), iterations=iterations)

        run(1)  # the trace, the XLA compile if any, and the first call: setup, not steady state
        yield run
