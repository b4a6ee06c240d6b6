"""The original TensorFlow 1 program: one Session.run per step, data fed through feed_dict every time."""

from functools import partial

from solvers import tf1_graph
from solvers.problem import Problem
from solvers.tensorflow_support import session_config


def prepare(problem: Problem, device: str):
    return tf1_graph.prepared(
        problem, device, session_config(), fed=True,
        step=lambda session, graph: partial(session.run, [graph.train, graph.loss], feed_dict=graph.feed),
    )
