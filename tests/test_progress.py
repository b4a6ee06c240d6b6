"""Progress of long rounds: said on a terminal, quiet in a log, and never part of what a run saves."""

import subprocess

import pytest
from helpers import ROOT

from perf.measure import progress


def test_long_rounds_are_announced_and_reported_short_ones_are_not():
    heard = []
    with progress.reporting(heard.append):
        progress.expected("tf1_feed_dict cpu n=1,000", 3, 1, 25.4, 100_000)
        progress.round_done("tf1_feed_dict cpu n=1,000", 1, 3, 25.06)
        progress.expected("tf2_eager cpu n=1,000", 7, 5, 2.4, 1_000)
        progress.expected("numpy_lean cpu n=1,000", 3, 1, 0.5, 100_000)
        progress.round_done("numpy_lean cpu n=1,000", 1, 3, 0.5)
    progress.round_done("outside the block", 1, 3, 99.0)
    assert heard == ["tf1_feed_dict cpu n=1,000: 3 timed rounds of 100,000 steps, about 25 s each",
                     "tf1_feed_dict cpu n=1,000: round 1 of 3 took 25.1 s",
                     # A trial takes as many of its rounds as fit in its time (perf/measure/trials.py).
                     "tf2_eager cpu n=1,000: 7 trials of up to 5 timed rounds of 1,000 steps, about 2 s each"]


# The suite itself, with every round counted as long, on a pseudo-terminal and into a pipe.

NUMPY_LEAN = ("--solvers", "numpy_lean", "--devices", "cpu")


def test_on_a_terminal_each_round_says_where_it_is(run_perf_on_a_terminal, tmp_path):
    output = run_perf_on_a_terminal(*NUMPY_LEAN, f"--benchmark-json={tmp_path / 'run.json'}")
    assert "passed" in output
    rounds = [line.strip() for line in output.splitlines() if line.strip().startswith("numpy_lean cpu n=1,000: round")]
    assert rounds and rounds[0].startswith("numpy_lean cpu n=1,000: round 1 of ")
    assert rounds[-1].split(" took ")[0].endswith(f"round {len(rounds)} of {len(rounds)}")


def test_in_a_log_nothing_is_said(long_rounds_suite, tmp_path):
    command, env = long_rounds_suite
    result = subprocess.run(command + [*NUMPY_LEAN, f"--benchmark-json={tmp_path / 'run.json'}"], capture_output=True,
                            text=True, env=env, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:]
    assert ": round 1 of " not in result.stdout + result.stderr
    assert (tmp_path / "run.json").read_text().count("round 1 of") == 0


@pytest.fixture(autouse=True)
def no_reporter_left_behind():
    yield
    assert progress._write is None
