"""TensorFlow 2 tf.function with jit_compile=True: the whole loop compiled by XLA into one fused program."""

from solvers.problem import Problem
from solvers.tensorflow_support import session_config
from solvers.tf2_function import prepare_compiled


def prepare(problem: Problem, device: str):
    return prepare_compiled(problem, device, session_config(), jit_compile=True)
