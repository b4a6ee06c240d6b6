"""The tests' setup: pytester, and the real suite and gate run in a subprocess (the tests that use those are marked
e2e: `pytest -m "not e2e"` is the fast loop); the suite's options, solver parametrization and skips are its plugin's
(perf/plugin.py). Shared helpers are in helpers.py."""

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT, on_a_terminal

XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")
E2E_FIXTURES = {"run_suite", "run_perf", "run_gate", "long_rounds_suite", "run_perf_on_a_terminal"}

# The tests' alone, so not in the root conftest. pytest takes pytest_plugins from a conftest it loads before configuring,
# and it loads this one then whenever a run collects tests/ (given a path in it, or above it: it looks into test*).
pytest_plugins = ["pytester"]


def pytest_collection_modifyitems(items):
    for item in items:
        if E2E_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def outside_xdist(monkeypatch):
    """The test may run on an xdist worker; a pytest it starts must not believe it is one, or pytest-benchmark would
    not time and the suite's plugin would refuse to."""
    for name in XDIST_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def run_suite(pytester, outside_xdist):
    """run_suite(*paths_and_options): the real suite in a subprocess, from an empty folder, with --budget 0 (the
    profile's trials, as many each time) unless the options give their own."""
    def run(*args):
        return pytester.runpytest_subprocess(
            "--budget", "0", *args, "-c", str(ROOT / "pytest.ini"), "--rootdir", str(ROOT), "-p", "no:cacheprovider")

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
    each round would be said on a terminal, and --budget 0 (the profile's trials); options go at the end of the
    command, and a --budget there wins."""
    (tmp_path / "long_rounds.py").write_text("import perf.measure.progress\nperf.measure.progress.MIN_ROUND_S = 0.0\n")
    command = [sys.executable, "-m", "pytest", str(ROOT / "perf"), "-c", str(ROOT / "pytest.ini"), "--rootdir",
               str(ROOT), "-p", "no:cacheprovider", "-p", "long_rounds", "--color=no", "--budget", "0"]
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
