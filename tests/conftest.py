"""What the tests share: the repository's root, runs built as pytest-benchmark writes them, and the real suite and
gate run in a subprocess (the tests that use those are marked e2e: `pytest -m "not e2e"` is the fast loop)."""

import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")
E2E_FIXTURES = {"run_suite", "run_perf", "run_gate", "long_rounds_suite", "run_perf_on_a_terminal"}


def pytest_collection_modifyitems(items):
    for item in items:
        if E2E_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)


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
        "stats": {"median": median, "iqr": 0.0, "rounds": rounds, "data": [median] * rounds},
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


@pytest.fixture
def outside_xdist(monkeypatch):
    """The test may run on an xdist worker; a pytest it starts must not believe it is one, or pytest-benchmark would
    not time and the root conftest would refuse to."""
    for name in XDIST_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def run_suite(pytester, outside_xdist):
    """run_suite(*paths_and_options): the real suite in a subprocess, from an empty folder."""
    def run(*args):
        return pytester.runpytest_subprocess(
            *args, "-c", str(ROOT / "pytest.ini"), "--rootdir", str(ROOT), "-p", "no:cacheprovider")

    return run


@pytest.fixture
def run_perf(run_suite):
    """run_perf(*options, modules=...): these perf/ modules (default: all of perf/) with these options."""
    def run(*args, modules=None):
        return run_suite(*(str(ROOT / "perf" / module) for module in modules or ("",)), *args)

    return run


@pytest.fixture
def run_gate(tmp_path):
    """run_gate(*arguments): `python -m perf.gate` with a --json report; (the finished process, the report or None)."""
    def run(*args):
        report = tmp_path / "gate.json"
        result = subprocess.run([sys.executable, "-m", "perf.gate", *args, "--json", str(report)],
                                cwd=ROOT, capture_output=True, text=True, timeout=600)
        return result, (json.loads(report.read_text()) if report.exists() else None)

    return run


# The suite on a terminal, where progress lines are said, with every round counted long ---------


@pytest.fixture
def long_rounds_suite(tmp_path):
    """(command, env): `pytest perf/` with every round counted long by a plugin (progress.MIN_ROUND_S = 0), so that
    each round would be said on a terminal; options go at the end of the command."""
    (tmp_path / "long_rounds.py").write_text("import perf.measure.progress\nperf.measure.progress.MIN_ROUND_S = 0.0\n")
    command = [sys.executable, "-m", "pytest", str(ROOT / "perf"), "-c", str(ROOT / "pytest.ini"), "--rootdir",
               str(ROOT), "-p", "no:cacheprovider", "-p", "long_rounds", "--color=no"]
    env = {key: value for key, value in os.environ.items() if key not in XDIST_VARIABLES}
    return command, {**env, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "COLUMNS": "200"}


@pytest.fixture
def run_perf_on_a_terminal(long_rounds_suite):
    """run(*options, **variables): everything that suite writes to a pseudo-terminal, with these environment
    variables set."""
    command, env = long_rounds_suite

    def run(*options, **variables):
        return on_a_terminal(command + list(options), {**env, **variables})

    return run


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
