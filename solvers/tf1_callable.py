"""The constant-data train step as a Session.make_callable: the per-call fetch and feed handling done once, at setup."""

from contextlib import contextmanager

from solvers import tf1_graph
from solvers.problem import Problem
from solvers.tensorflow_support import session_config


@contextmanager
def prepare(problem: Problem, device: str):
    graph = tf1_graph.build(problem, device, fed=False)
    with tf1_graph.session(graph, session_config()) as session:
        step = session.make_callable(graph.train)
        yield tf1_graph.stepping(session, graph, step)
