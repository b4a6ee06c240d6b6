"""The gate on instructions (python -m perf.gate --count): a real code change between two commits is judged on counts,
identical code is CLEAR, and what cannot be counted is refused or said."""

import json
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT

from perf.gate import counted
from perf.judge.outcome import COUNTED_THRESHOLD
from perf.judge import words
from perf.measure import count

COUNTABLE = pytest.mark.skipif(bool(count.unavailable_reason()), reason=f"{count.unavailable_reason()}")

# numpy_lean with a little more work every step, its answer the same: a real change of a few percent of a step.
BUSIER_NUMPY_LEAN = '''"""The float64 arithmetic without the original's redundant passes, and a sum every step."""

from contextlib import contextmanager

from solvers.answers import gradient_descent
from solvers.problem import Problem


@contextmanager
def prepare(problem: Problem, device: str):
    def run(iterations):
        for _ in range(iterations):
            sum(range(100))
        return gradient_descent(problem, iterations)

    yield run
'''


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def history(tmp_path):
    """A clone of this repository whose last commit but one holds this working tree's perf/ and solvers/, and whose
    last makes numpy_lean's step busier."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(clone)], check=True)
    for name, value in (("user.name", "test"), ("user.email", "test@example.org")):
        git(clone, "config", name, value)
    for folder in ("perf", "solvers"):
        shutil.copytree(ROOT / folder, clone / folder, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    git(clone, "add", "-A", "perf", "solvers")
    git(clone, "commit", "-q", "--allow-empty", "-m", "this working tree")
    (clone / "solvers" / "numpy_lean.py").write_text(BUSIER_NUMPY_LEAN)
    git(clone, "commit", "-q", "-m", "busier", "solvers/numpy_lean.py")
    return clone


def gate(repo, tmp_path, *args):
    report = tmp_path / "gate.json"
    done = subprocess.run([sys.executable, "-m", "perf.gate", *args, "--json", str(report)], cwd=repo,
                          capture_output=True, text=True, timeout=600)
    return done, (json.loads(report.read_text()) if report.exists() else None)


@COUNTABLE
@pytest.mark.e2e
def test_a_real_change_of_a_few_percent_of_a_step_is_a_regression_and_identical_code_clear(history, tmp_path):
    done, report = gate(history, tmp_path, "HEAD~1", "HEAD", "--count", "--solvers", "numpy_lean,numpy_loop",
                        "--sizes", "1000", "--passes", "3", "--no-confirm")
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {row["benchmark"]: row for row in report["rows"]}
    assert rows["numpy_lean-cpu-n1000"]["verdict"] == words.REGRESSION
    assert 1.02 < rows["numpy_lean-cpu-n1000"]["ratio"] < 1.5  # about 2,000 more instructions on about 51,000
    # Untouched, its count moves only with the memory layout, which each pass draws anew (counting.LAYOUTS).
    assert rows["numpy_loop-cpu-n1000"]["verdict"] in (words.CLEAR, words.INCONCLUSIVE)
    assert abs(rows["numpy_loop-cpu-n1000"]["ratio"] - 1) < 0.01
    assert report["measure"] == "instructions" and report["threshold"] == COUNTED_THRESHOLD
    assert report["count"]["valgrind"] and "counted on every CPU" in done.stdout
    assert "the log ratio of its instructions a step" in done.stdout


@pytest.mark.parametrize("options, said", [
    (["--devices", "gpu"], "--count with a GPU benchmark"),
    (["--benchmarks", "tf1_feed_dict-gpu-n1000"], "--count with a GPU benchmark"),
    (["--candidate-slowdown", "*=1.5"], "the slowdown stretches time, which a count does not measure"),
])
def test_what_a_count_cannot_measure_is_a_usage_error_before_anything_runs(options, said):
    done = subprocess.run([sys.executable, "-m", "perf.gate", "HEAD", "--count", *options], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr


def test_without_valgrind_a_counted_gate_is_a_usage_error_that_says_so(tmp_path):
    done = subprocess.run([sys.executable, "-m", "perf.gate", "HEAD", "--count"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert done.returncode == 2 and "--count: cannot count here" in done.stderr and "Traceback" not in done.stderr


def test_a_counted_screen_takes_its_own_passes_and_threshold():
    screen = counted.screening(COUNTED_THRESHOLD)
    assert (screen.min_passes, screen.max_passes, screen.budget_s) == (
        counted.COUNTED_MIN_PASSES, counted.COUNTED_MAX_PASSES, counted.COUNTED_BUDGET_S)
    assert counted.screening(0.01, passes=4).min_passes == counted.screening(0.01, passes=4).max_passes == 4
    assert not counted.confirming(0.01).per_run
