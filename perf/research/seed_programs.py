"""python -m perf.research.seed_programs: the question's own two programs, written from the seed report as it gives
them (README.md, the question), timed as whole programs: their µs per step, to hold the suite's figures against.

Nothing of the suite is used: plain NumPy, and TensorFlow 1's API through tensorflow.compat.v1, each run once in a
fresh process at the seed's size (1,000 points, 1e5 steps, lr 1e-4) and timed around its loop, as the learner timed
them. Each prints one JSON line: {"program", "steps", "seconds", "us_per_step", "w", "b", "loss"}.

    python -m perf.research.seed_programs numpy
    python -m perf.research.seed_programs tensorflow
"""

import argparse
import json
import os
import sys
import time

import numpy as np

STEPS, LR = 100_000, 1e-4


def seed_data():
    x = np.arange(100, step=0.1)
    return x, x + 20 * np.sin(x / 10) + 15


def numpy_program(steps: int) -> dict:
    x, y = seed_data()
    n, W, b = len(x), 0.0, 0.0
    y_pred = W * x + b
    started = time.perf_counter()
    for _ in range(steps):
        grad_W = 2 / n * np.sum(-x * (y - y_pred))
        grad_b = 2 / n * np.sum(-(y - y_pred))
        W -= LR * grad_W
        b -= LR * grad_b
        y_pred = W * x + b
        loss = np.sum((y - y_pred) ** 2) / n
    return {"seconds": time.perf_counter() - started, "w": W, "b": b, "loss": loss}


def tensorflow_program(steps: int) -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    x_data, y_data = seed_data()
    x_data, y_data = x_data.reshape(-1, 1).astype(np.float32), y_data.reshape(-1, 1).astype(np.float32)
    n = len(x_data)
    X, Y = tf.placeholder(tf.float32, (n, 1)), tf.placeholder(tf.float32, (n, 1))
    W = tf.get_variable("W", (1, 1), initializer=tf.zeros_initializer())
    b = tf.get_variable("b", (1,), initializer=tf.zeros_initializer())
    Y_pred = tf.matmul(X, W) + b
    loss = tf.reduce_sum((Y - Y_pred) ** 2 / n)
    train = tf.train.GradientDescentOptimizer(LR).minimize(loss)
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        started = time.perf_counter()
        for _ in range(steps):
            session.run([train, loss], feed_dict={X: x_data, Y: y_data})
        seconds = time.perf_counter() - started
        w_value, b_value, loss_value = session.run([W, b, loss], feed_dict={X: x_data, Y: y_data})
    return {"seconds": seconds, "w": float(w_value[0][0]), "b": float(b_value[0]), "loss": float(loss_value)}


PROGRAMS = {"numpy": numpy_program, "tensorflow": tensorflow_program}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.research.seed_programs", description=__doc__.splitlines()[0])
    parser.add_argument("program", choices=PROGRAMS, help="which of the seed's two programs to run")
    parser.add_argument("steps", nargs="?", type=int, default=STEPS, help=f"its step count (default: {STEPS:,})")
    options = parser.parse_args(argv)
    found = PROGRAMS[options.program](options.steps)
    print(json.dumps({"program": options.program, "steps": options.steps,
                      "us_per_step": found["seconds"] / options.steps * 1e6, **found}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
