"""All iterations in one Session.run: a tf.while_loop over data held in the graph on the chosen device."""

from contextlib import contextmanager

from solvers import tensorflow_support
from solvers.problem import Fit, Problem
from solvers.tensorflow_support import DEVICE_SPECS, import_tensorflow


@contextmanager
def prepare(problem: Problem, device: str):
    config = tensorflow_support.session_config()
    tf = import_tensorflow().compat.v1
    n, lr = problem.n, problem.lr
    graph = tf.Graph()
    with graph.as_default(), tf.device(DEVICE_SPECS[device]):
        x = tf.constant(problem.x, dtype=tf.float32)
        y = tf.constant(problem.y, dtype=tf.float32)
        # Fed at run time, so one graph (and one setup) serves every iteration count.
        iterations_fed = tf.placeholder(tf.int32, shape=())

        def step(i, w, b):
            # The gradient of the original loss, sum((y - y_pred)^2 / n), written out.
            residual = y - (w * x + b)
            grad_w = -2 / n * tf.reduce_sum(x * residual)
            grad_b = -2 / n * tf.reduce_sum(residual)
            return i + 1, w - lr * grad_w, b - lr * grad_b

        zero = tf.constant(0.0, dtype=tf.float32)
        _, w, b = tf.while_loop(lambda i, w, b: i < iterations_fed, step, (tf.constant(0), zero, zero))
        loss = tf.reduce_sum((y - (w * x + b)) ** 2 / n)
    graph.finalize()

    with tf.Session(graph=graph, config=config) as session:

        def run(iterations: int) -> Fit:
            final_w, final_b, final_loss = session.run([w, b, loss], feed_dict={iterations_fed: iterations})
            return Fit(w=float(final_w), b=float(final_b), loss=float(final_loss), iterations=iterations)

        yield run
