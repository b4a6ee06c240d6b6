"""Progress of long rounds: said on a terminal, quiet in a log, and never part of what a run saves."""

import os
import pty
import subprocess
import sys
import threading

import pytest
from conftest import ROOT

from perf.measure import progress


def test_long_rounds_are_announced_and_reported_short_ones_are_not():
    heard = []
    with progress.reporting(heard.append):
        progress.expected("tf1_feed_dict cpu n=1,000", 3, 25.4, 100_000)
        progress.round_done("tf1_feed_dict cpu n=1,000", 1, 3, 25.06)
        progress.expected("numpy_lean cpu n=1,000", 3, 0.5, 100_000)
        progress.round_done("numpy_lean cpu n=1,000", 1, 3, 0.5)
    progress.round_done("outside the block", 1, 3, 99.0)
    assert heard == ["tf1_feed_dict cpu n=1,000: 3 timed rounds of 100,000 steps, about 25 s each",
                     "tf1_feed_dict cpu n=1,000: round 1 of 3 took 25.1 s"]


# The suite itself, with every round counted as long, on a pseudo-terminal and into a pipe.

LONG_ROUNDS = "import perf.measure.progress\nperf.measure.progress.MIN_ROUND_S = 0.0\n"


def suite_command(tmp_path):
    (tmp_path / "long_rounds.py").write_text(LONG_ROUNDS)
    return [sys.executable, "-m", "pytest", str(ROOT / "perf"), "-c", str(ROOT / "pytest.ini"), "--rootdir", str(ROOT),
            "-p", "no:cacheprovider", "-p", "long_rounds", "--solvers", "numpy_lean", "--devices", "cpu",
            f"--benchmark-json={tmp_path / 'run.json'}"]


def suite_environment(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_XDIST")}
    return {**env, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "COLUMNS": "200"}


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


@pytest.mark.e2e
def test_on_a_terminal_each_round_says_where_it_is(tmp_path):
    output = on_a_terminal(suite_command(tmp_path), suite_environment(tmp_path))
    assert "passed" in output
    rounds = [line.strip() for line in output.splitlines() if line.strip().startswith("numpy_lean cpu n=1,000: round")]
    assert rounds and rounds[0].startswith("numpy_lean cpu n=1,000: round 1 of ")
    assert rounds[-1].split(" took ")[0].endswith(f"round {len(rounds)} of {len(rounds)}")


@pytest.mark.e2e
def test_in_a_log_nothing_is_said(tmp_path):
    result = subprocess.run(suite_command(tmp_path), capture_output=True, text=True, env=suite_environment(tmp_path),
                            cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:]
    assert ": round 1 of " not in result.stdout + result.stderr
    assert (tmp_path / "run.json").read_text().count("round 1 of") == 0


@pytest.fixture(autouse=True)
def no_reporter_left_behind():
    yield
    assert progress._write is None
