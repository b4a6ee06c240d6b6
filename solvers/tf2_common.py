"""What the TensorFlow 2 solvers share: the data as float32 tensors on the device, and the original loss."""

from solvers.problem import Problem


def data_on(tf, problem: Problem, device_spec: str):
    """x and y as float32 tensors placed on the device once, at setup."""
    with tf.device(device_spec):
        return tf.constant(problem.x, dtype=tf.float32), tf.constant(problem.y, dtype=tf.float32)


def original_loss(tf, x, y, w, b):
    # The original's loss, sum((y - y_pred)^2 / n), so the tape differentiates the same expression.
    return tf.reduce_sum((y - (w * x + b)) ** 2 / x.shape[0])
