"""What the tests share besides fixtures: the repository's root, runs built as pytest-benchmark writes them, two runs'
benchmarks to compare, and a command run on a pseudo-terminal."""

import json
import math
import os
import pty
import subprocess
import threading
from pathlib import Path

import numpy as np

from perf.measure import Key

ROOT = Path(__file__).resolve().parents[1]


# A study's passes, as the gate's loop gives them ---------------------------------------------------

def paired_outcomes(step_us: dict, labels: list[str], n=1000, steps=100, calls=1) -> list:
    """One gate Outcome per solver: {solver: (first version's µs per step pass by pass, second's, ...)}, each pass's
    round of every version, and each later version's log ratio to the first, pass by pass."""
    from perf.gate.interleave import Outcome
    from perf.measure import Key

    found = []
    for solver, by_version in step_us.items():
        outcome = Outcome(Key(solver, "cpu", n), steps=steps, calls=calls)
        for label, values in zip(labels, by_version, strict=True):
            outcome.round_s[label] = [(index, value * 1e-6 * steps * calls) for index, value in enumerate(values)]
        first = by_version[0]
        for label, values in zip(labels[1:], by_version[1:]):
            outcome.log_ratios[label] = [(index, False, math.log(b / a))
                                         for index, (a, b) in enumerate(zip(first, values))]
        found.append(outcome)
    return found


# Runs as pytest-benchmark writes them ------------------------------------------------------------


def benchmark_entry(solver, device, n, per_step_us, iterations=1_000, rounds=5, ratio=None, spread=0.05, trials=5):
    """One benchmark of perf/test_fssgd.py as pytest-benchmark writes it, with the trials perf/measure records.

    ratio: its paired ratio to numpy_loop, the trials' ratios spread evenly over ratio × (1 ± spread) beside a
    numpy_loop of per_step_us / ratio a step; without one it is unpaired (numpy_loop itself).
    """
    step_s = per_step_us * 1e-6
    info = {"solver": solver, "device": device, "device_name": "Test CPU" if device == "cpu" else "Test GPU", "n": n,
            "iterations": iterations, "dtype": "float32", "setup_s": 0.05, "w": 1.0, "b": 1.0, "loss": 1.0,
            "tensorflow": "2.21.0", "numpy": "2.4.6", "trials": trials, "rounds_per_trial": rounds // trials or 1,
            "trial_medians_s": [step_s * iterations] * trials}
    if ratio is not None:
        reference_step_s = step_s / ratio
        info.update(reference="numpy_loop-cpu", reference_iterations=iterations,
                    trial_medians_s=[reference_step_s * ratio * factor * iterations
                                     for factor in np.linspace(1 - spread, 1 + spread, trials)],
                    reference_trial_medians_s=[reference_step_s * iterations] * trials)
    median = step_s * iterations
    return {
        "group": f"n={n}", "name": f"test_fssgd[{solver}-{device}-n{n}]", "param": f"{solver}-{device}-n{n}",
        "fullname": f"perf/test_fssgd.py::test_fssgd[{solver}-{device}-n{n}]",
        "params": {"device": device, "n": n}, "extra_info": info,
        "stats": {"median": median, "mean": median, "iqr": 0.0, "rounds": rounds, "data": [median] * rounds},
    }


def result_document(entries, tensorflow="2.21.0", profile="full", threads=1):
    """A whole run: the top-level keys of pytest-benchmark's JSON, machine_info.fssgd included."""
    return {
        "machine_info": {"node": "test", "cpu": {"brand_raw": "Test CPU"}, "fssgd": {
            "profile": profile, "cpu_model": "Test CPU", "numpy": "2.4.6", "threads": threads,
            "tensorflow": {"distribution": "tensorflow-cpu", "version": tensorflow}}},
        "commit_info": {"id": "0123456789abcdef", "dirty": False},
        "benchmarks": entries, "datetime": "2026-01-01T00:00:00", "version": "5.3.1",
    }


def write_run(path: Path, document) -> Path:
    path.write_text(json.dumps(document))
    return path


# The real suite and gate, in a subprocess ------------------------------------------------------


def on_a_terminal(command, env) -> str:
    """Everything command writes to a pseudo-terminal, read as it comes so the terminal never fills up."""
    controller, terminal = pty.openpty()
    chunks = []

    def read():
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the other end closed
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        subprocess.run(command, stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, env=env, cwd=ROOT,
                       timeout=300)
    finally:
        os.close(terminal)
        reader.join()
        os.close(controller)
    return b"".join(chunks).decode(errors="replace")


# Two runs' benchmarks to compare by their trials' ratios (test_compare.py, test_decide.py) -------------------------

COMPARED_KEY = Key("tf1_while_loop", "cpu", 1000)


def info(ratios):
    """A benchmark's extra_info whose trials have these ratios to the timing reference, each in a process of its own."""
    return {"iterations": 1000, "reference_iterations": 1000, "trials": len(ratios),
            "trial_medians_s": [0.02 * ratio for ratio in ratios], "trial_processes": list(range(len(ratios))),
            "reference_trial_medians_s": [0.02] * len(ratios), "solver": COMPARED_KEY.solver,
            "device": COMPARED_KEY.device, "n": COMPARED_KEY.n}


def spread(center, width=0.02, trials=7):
    return [center * math.exp(width * (index - trials // 2)) for index in range(trials)]


FSSGD = {"cpu_model": "AMD EPYC", "numpy": "2.4.6", "tensorflow": {"distribution": "tensorflow-cpu", "version": "2.21.0"},
         "threads_setting": "TF default", "onednn_setting": "TF default", "profile": "quick"}


def document(benchmarks, fssgd=FSSGD):
    return {"machine_info": {"fssgd": fssgd}, "benchmarks": benchmarks}


def bench(name, extra):
    return {"name": name, "fullname": f"perf/test_fssgd.py::{name}", "extra_info": extra}
