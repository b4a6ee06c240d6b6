"""The constant-data train step as a Session.make_callable: the per-call fetch and feed handling done once, at setup."""

from solvers import tf1_graph
from solvers.problem import Problem
from solvers.tensorflow_support import session_config


def prepare(problem: Problem, device: str):
    return tf1_graph.prepared(problem, device, session_config(), fed=False,
                              step=lambda session, graph: session.make_callable(graph.train))
