"""Every command the README and docs/ name answers --help, without a traceback."""

import subprocess
import sys

import pytest
from helpers import ROOT

COMMANDS = ["pytest", "perf.gate", "perf.report", "perf.research.noise_study", "perf.research.releases",
            "perf.research.compare_study", "perf.research.worker_history", "perf.research.seed_programs"]


@pytest.mark.parametrize("module", COMMANDS)
def test_each_command_answers_help(module):
    result = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage:" in result.stdout and "Traceback" not in result.stderr


def test_pytest_help_names_the_suites_own_options():
    result = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    for option in ("--profile", "--threads", "--solvers", "--devices", "--fail-on-slower=PCT"):
        assert option in result.stdout
