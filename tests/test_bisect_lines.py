"""The bisect's calibration lines (perf/research/bisect_lines.py): what each case's commits change, and its record."""

import contextlib
import json
import subprocess

import pytest

from perf.research import bisect_lines
from solvers.problem import seed_problem


def git(directory, *args):
    return subprocess.run(["git", *args], cwd=directory, check=True, capture_output=True, text=True).stdout


def changed_lines(clone, commit):
    """The lines a commit adds to the solvers, less its comment lines."""
    return [line[1:] for line in git(clone, "show", "--format=", commit, "--", "solvers").splitlines()
            if line.startswith("+") and not line.startswith("+++") and not line[1:].lstrip().startswith("#")]


def answer(clone, module, n=100, iterations=50):
    """The fit a solver module of the clone gives, run from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"calibration_{module}", clone / "solvers" / f"{module}.py")
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    with loaded.prepare(seed_problem(n), "cpu") as run:
        return run(iterations)


@pytest.mark.parametrize("case", ["culprit-1", "culprit-4", "culprit-7", "clean", "drift"])
def test_each_line_is_seven_commits_after_base_whose_code_changes_are_the_cases_own(tmp_path, case):
    clone = tmp_path / "clone"
    good, commits = bisect_lines.made_line(clone, "HEAD", case)
    assert len(commits) == bisect_lines.COMMITS and git(clone, "rev-parse", "HEAD~7").strip() == good
    changing = [k for k, commit in enumerate(commits, 1) if changed_lines(clone, commit)]
    assert changing == {"culprit-1": [1], "culprit-4": [4], "culprit-7": [7], "clean": [], "drift": [2, 4, 6]}[case]
    want = bisect_lines.expected(case, commits)
    assert want == {"culprit-1": commits[0], "culprit-4": commits[3], "culprit-7": commits[6], "clean": None,
                    "drift": commits[3]}[case]


@pytest.mark.tensorflow  # the culprit slows tf1_while_loop
def test_the_slowed_solvers_give_the_same_answer_as_before(tmp_path):
    # The calibration slows solvers by real code; the benchmark's answer check must still pass, so the gate times them.
    from helpers import ROOT

    culprit, drift = tmp_path / "culprit", tmp_path / "drift"
    bisect_lines.made_line(culprit, "HEAD", "culprit-1")
    bisect_lines.made_line(drift, "HEAD", "drift")
    assert answer(drift, "numpy_loop") == answer(ROOT, "numpy_loop")
    tracked, untracked = answer(culprit, "tf1_while_loop"), answer(ROOT, "tf1_while_loop")
    assert tracked.w == untracked.w and tracked.b == untracked.b
    assert tracked.loss == pytest.approx(untracked.loss, rel=1e-6)


def test_a_run_keeps_the_search_and_says_whether_it_named_the_right_commit(tmp_path, monkeypatch, capsys):
    def bisected(clone, arguments):
        good, bad = arguments[:2]
        named = git(clone, "rev-parse", "HEAD~3").strip()  # commit 4: the culprit of culprit-4
        report = {"status": 1, "ending": "FOUND", "culprit": named, "wall_s": 120.0,
                  "steps": [{"verdict": "REGRESSION"}, {"verdict": "CLEAR"}, {"verdict": "REGRESSION"}]}
        (tmp_path / "seen").write_text(" ".join(arguments))
        with open(arguments[arguments.index("--json") + 1], "w") as saved:
            json.dump(report, saved)
        return subprocess.CompletedProcess(arguments, 1, "bisect: FOUND\n", "")

    monkeypatch.setattr(bisect_lines, "bisected", bisected)
    out = tmp_path / "out"
    assert bisect_lines.main(["culprit-4", "--out", str(out), "--threshold", "20%"]) == 0
    assert "--benchmarks tf1_while_loop-cpu-n1000 --threshold 20%" in (tmp_path / "seen").read_text()
    run = json.loads((out / "culprit-4.json").read_text())
    assert run["right"] and run["expected_position"] == run["found_position"] == 4
    assert "| culprit-4 | tf1_while_loop-cpu-n1000 | 4 | 4 | 1 | 3: REGRESSION, CLEAR, REGRESSION | 2.0 min |" in (
        out / "table.md").read_text()
    assert (out / "culprit-4.txt").read_text() == "bisect: FOUND\n"
    assert "right" in capsys.readouterr().out
    # Another selection, kept under a name of its own beside the first.
    assert bisect_lines.main(["culprit-4", "--out", str(out), "--benchmarks", "a-cpu-n1000,b-cpu-n1000", "--name",
                              "culprit-4-two"]) == 0
    assert "--benchmarks a-cpu-n1000,b-cpu-n1000" in (tmp_path / "seen").read_text()
    assert "| culprit-4-two | a-cpu-n1000,b-cpu-n1000 | 4 | 4 |" in (out / "table.md").read_text()
    assert (out / "culprit-4.json").exists() and (out / "culprit-4-two.json").exists()
    # Beside a noisy neighbour kept off the CPU the gate takes: its record says so.
    neighbours = []

    @contextlib.contextmanager
    def noisy_neighbour(avoid_cpu):
        neighbours.append(avoid_cpu)
        yield

    monkeypatch.setattr(bisect_lines, "noisy_neighbour", noisy_neighbour)
    monkeypatch.setattr(bisect_lines.cpus, "quiet_cpu", lambda: 1)
    assert bisect_lines.main(["culprit-4", "--out", str(out), "--neighbour"]) == 0
    assert neighbours == [1] and json.loads((out / "culprit-4-neighbour.json").read_text())["neighbour"]
    capsys.readouterr()
    # The same search on a line whose culprit is commit 6 named the wrong commit: the run says so and exits 1.
    assert bisect_lines.main(["culprit-6", "--out", str(out)]) == 1
    assert "WRONG" in capsys.readouterr().out


@pytest.mark.parametrize("case", ["culprit-0", "culprit-8", "culprit", "drift-2", "other"])
def test_an_unknown_case_is_a_usage_error(case, capsys):
    with pytest.raises(SystemExit) as stopped:
        bisect_lines.main([case])
    assert stopped.value.code == 2 and "unknown case" in capsys.readouterr().err
