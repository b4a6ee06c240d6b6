"""The fix from the original answer in TensorFlow 1: tf1_while_loop on standardized x with lr 0.1, whatever problem.lr."""

from functools import partial

from solvers import tf1_while_loop
from solvers.problem import Problem
from solvers.standardization import standardized
from solvers.tensorflow_support import session_config


def prepare(problem: Problem, device: str):
    return standardized(partial(tf1_while_loop.prepare_with_config, config=session_config()), problem, device)
