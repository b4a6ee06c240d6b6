"""The original TensorFlow 1 program: one Session.run per step, data fed through feed_dict every time."""

from contextlib import contextmanager

from solvers.problem import Fit, Problem
from solvers.tensorflow_support import device_spec, import_tensorflow, session_config


@contextmanager
def prepare(problem: Problem, device: str):
    tf = import_tensorflow().compat.v1
    n = problem.n
    graph = tf.Graph()
    with graph.as_default(), tf.device(device_spec(device)):
        X = tf.placeholder(tf.float32, shape=(n, 1))
        Y = tf.placeholder(tf.float32, shape=(n, 1))
        W = tf.get_variable("W", shape=(1, 1), initializer=tf.zeros_initializer())
        b = tf.get_variable("b", shape=(1,), initializer=tf.zeros_initializer())
        Y_pred = tf.matmul(X, W) + b
        loss = tf.reduce_sum((Y - Y_pred) ** 2 / n)
        train = tf.train.GradientDescentOptimizer(problem.lr).minimize(loss)
        initialize = tf.global_variables_initializer()
    graph.finalize()
    # The original fed its float64 NumPy arrays, so every step pays the copy and the cast to float32.
    feed = {X: problem.x.reshape(n, 1), Y: problem.y.reshape(n, 1)}

    with tf.Session(graph=graph, config=session_config()) as session:

        def run(iterations: int | None = None) -> Fit:
            iterations = problem.iterations if iterations is None else iterations
            session.run(initialize)  # every round starts from W = b = 0
            for _ in range(iterations):
                session.run([train, loss], feed_dict=feed)
            final_W, final_b, final_loss = session.run([W, b, loss], feed_dict=feed)
            return Fit(w=float(final_W[0, 0]), b=float(final_b[0]), loss=float(final_loss), iterations=iterations)

        yield run
