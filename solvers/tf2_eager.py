"""TensorFlow 2 eager: one GradientTape step per Python iteration, every op dispatched from Python."""

from contextlib import contextmanager

from solvers.framework_common import tf_data, tf_original_loss
from solvers.problem import Fit, Problem
from solvers.tensorflow_support import DEVICE_SPECS, eager_config, import_tensorflow


@contextmanager
def prepare(problem: Problem, device: str):
    tf, spec, lr = import_tensorflow(), DEVICE_SPECS[device], problem.lr
    with eager_config():
        x, y = tf_data(tf, problem, spec)
        with tf.device(spec):
            w, b = tf.Variable(0.0, dtype=tf.float32), tf.Variable(0.0, dtype=tf.float32)

        def run(iterations: int) -> Fit:
            # Entered per call, not across the yield: eager device scopes are thread state, not lexical.
            with tf.device(spec):
                w.assign(0.0)  # every round starts from w = b = 0
                b.assign(0.0)
                for _ in range(iterations):
                    with tf.GradientTape() as tape:
                        loss = tf_original_loss(tf, x, y, w, b)
                    grad_w, grad_b = tape.gradient(loss, [w, b])
                    w.assign_sub(lr * grad_w)
                    b.assign_sub(lr * grad_b)
                loss = tf_original_loss(tf, x, y, w, b)
            return Fit(w=float(w.numpy()), b=float(b.numpy()), loss=float(loss.numpy()), iterations=iterations)

        yield run
