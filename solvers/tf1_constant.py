"""The original TensorFlow 1 program with the data held in the graph as constants: what feed_dict copies cost."""

from functools import partial

from solvers import tf1_graph
from solvers.problem import Problem
from solvers.tensorflow_support import session_config


def prepare(problem: Problem, device: str):
    return tf1_graph.prepared(problem, device, session_config(), fed=False,
                              step=lambda session, graph: partial(session.run, [graph.train, graph.loss]))
