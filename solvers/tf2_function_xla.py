"""TensorFlow 2 tf.function with jit_compile=True: the whole loop compiled by XLA into one fused program."""

from functools import partial

from solvers import tf2_function

prepare = partial(tf2_function.prepare, jit_compile=True)
