"""The original TensorFlow 1 graph, data fed or held as constants, and its loop of one Session.run per step."""

from collections.abc import Callable
from contextlib import contextmanager
from typing import NamedTuple

from solvers import tensorflow_support
from solvers.problem import Fit, Problem
from solvers.tensorflow_support import DEVICE_SPECS, import_tensorflow


class Tf1Graph(NamedTuple):
    feed: dict | None  # the feed_dict every run needs: the data when fed, else None
    W: object
    b: object
    loss: object
    train: object
    initialize: object


@contextmanager
def prepared(problem: Problem, device: str, *, fed: bool, step: Callable):
    """A solver's prepare on the original graph, X and Y fed or constant: each step is one step(session, graph) call."""
    config = tensorflow_support.session_config()
    tf = import_tensorflow().compat.v1
    n = problem.n
    tf_graph = tf.Graph()
    with tf_graph.as_default(), tf.device(DEVICE_SPECS[device]):
        if fed:
            X = tf.placeholder(tf.float32, shape=(n, 1))
            Y = tf.placeholder(tf.float32, shape=(n, 1))
            # The original fed its float64 NumPy arrays, so every step pays the copy and the cast to float32.
            feed = {X: problem.x.reshape(n, 1), Y: problem.y.reshape(n, 1)}
        else:
            X = tf.constant(problem.x.reshape(n, 1), dtype=tf.float32)
            Y = tf.constant(problem.y.reshape(n, 1), dtype=tf.float32)
            feed = None
        W = tf.get_variable("W", shape=(1, 1), initializer=tf.zeros_initializer())
        b = tf.get_variable("b", shape=(1,), initializer=tf.zeros_initializer())
        Y_pred = tf.matmul(X, W) + b
        loss = tf.reduce_sum((Y - Y_pred) ** 2 / n)
        train = tf.train.GradientDescentOptimizer(problem.lr).minimize(loss)
        initialize = tf.global_variables_initializer()
    tf_graph.finalize()
    graph = Tf1Graph(feed, W, b, loss, train, initialize)
    with tf.Session(graph=tf_graph, config=config) as session:
        step_once = step(session, graph)

        def run(iterations: int) -> Fit:
            session.run(graph.initialize)  # every round starts from W = b = 0
            for _ in range(iterations):
                step_once()
            final_W, final_b, final_loss = session.run([graph.W, graph.b, graph.loss], feed_dict=graph.feed)
            return Fit(w=float(final_W[0, 0]), b=float(final_b[0]), loss=float(final_loss), iterations=iterations)

        yield run
