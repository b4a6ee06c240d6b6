"""The original TensorFlow 1 program fetching only the train op: what fetching the loss every step costs."""

from functools import partial

from solvers import tf1_graph
from solvers.problem import Problem
from solvers.tensorflow_support import session_config


def prepare(problem: Problem, device: str):
    return tf1_graph.prepared(problem, device, session_config(), fed=True,
                              step=lambda session, graph: partial(session.run, graph.train, feed_dict=graph.feed))
