"""What the tests that start the real perf/ suite in a subprocess share."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


@pytest.fixture
def run_suite(pytester, monkeypatch):
    """run_suite(*paths_and_options): the real suite in a subprocess, from an empty folder."""
    # The test may run on an xdist worker; the suite it starts must not believe it is one, or
    # pytest-benchmark would not time and the root conftest would refuse to.
    for name in XDIST_VARIABLES:
        monkeypatch.delenv(name, raising=False)

    def run(*args):
        return pytester.runpytest_subprocess(
            *args, "-c", str(ROOT / "pytest.ini"), "--rootdir", str(ROOT), "-p", "no:cacheprovider")

    return run
