"""TensorFlow 2 tf.function: the whole loop traced once into a graph, the iteration count a tensor argument."""

from contextlib import contextmanager

from solvers.framework_common import tf_data, tf_original_loss
from solvers.problem import Fit, Problem
from solvers.tensorflow_support import DEVICE_SPECS, eager_config, import_tensorflow


@contextmanager
def prepare(problem: Problem, device: str, jit_compile: bool = False):
    tf, spec, lr = import_tensorflow(), DEVICE_SPECS[device], problem.lr
    with eager_config():
        x, y = tf_data(tf, problem, spec)

        # A scalar int32 signature: one trace (and one XLA compile) serves every iteration count.
        @tf.function(input_signature=[tf.TensorSpec((), tf.int32)], jit_compile=jit_compile)
        def descend(iterations):
            with tf.device(spec):
                w = b = tf.constant(0.0, dtype=tf.float32)
                for _ in tf.range(iterations):  # autograph: a tf.while_loop inside the graph
                    with tf.GradientTape() as tape:
                        tape.watch([w, b])
                        loss = tf_original_loss(tf, x, y, w, b)
                    grad_w, grad_b = tape.gradient(loss, [w, b])
                    w, b = w - lr * grad_w, b - lr * grad_b
                return w, b, tf_original_loss(tf, x, y, w, b)

        def run(iterations: int) -> Fit:
            w, b, loss = descend(tf.constant(iterations, dtype=tf.int32))
            return Fit(w=float(w.numpy()), b=float(b.numpy()), loss=float(loss.numpy()), iterations=iterations)

        run(1)  # the trace, the XLA compile if any, and the first call: setup, not steady state
        yield run
