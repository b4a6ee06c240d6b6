"""The fix from the original answer in TensorFlow 1: tf1_while_loop on standardized x with lr 0.1, whatever problem.lr."""

from functools import partial

from solvers import tf1_while_loop
from solvers.standardization import standardized

prepare = partial(standardized, tf1_while_loop.prepare)
