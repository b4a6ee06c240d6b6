"""The original TensorFlow 1 program with the data held in the graph as constants: what feed_dict copies cost."""

from contextlib import contextmanager
from functools import partial

from solvers import tf1_graph
from solvers.problem import Problem
from solvers.tensorflow_support import session_config


@contextmanager
def prepare(problem: Problem, device: str):
    graph = tf1_graph.build(problem, device, fed=False)
    with tf1_graph.session(graph, session_config()) as session:
        step = partial(session.run, [graph.train, graph.loss])
        yield tf1_graph.stepping(session, graph, step)
