"""One Session.run per step with constant data and only the train op fetched: the bare cost of a Session.run."""

from contextlib import contextmanager
from functools import partial

from solvers import tf1_graph
from solvers.problem import Problem
from solvers.tensorflow_support import session_config


@contextmanager
def prepare(problem: Problem, device: str):
    graph = tf1_graph.build(problem, device, fed=False)
    with tf1_graph.session(graph, session_config()) as session:
        step = partial(session.run, graph.train)
        yield tf1_graph.stepping(session, graph, step)
