"""The gate's bisect (perf/gate/bisect.py): the search's logic against an injected gate over a fake history, the
gate's rows read into a step, and the first-parent line in a real temporary repository."""

import json
import math
import subprocess
import sys

import pytest

from perf.gate import bisect, versions
from perf.judge import words
from perf.judge.rules import Verdict

GOOD = "g" * 40
COMMITS = [f"{index}" * 40 for index in range(1, 8)]  # seven commits after GOOD, BAD last
THRESHOLD = math.log1p(0.10)


def history_gate(speed_of, calls=None):
    """A gate over a fake history: each commit's log time in speed_of; a candidate slower than its baseline by the
    threshold is a REGRESSION, by less CLEAR."""
    def run_step(baseline, candidate):
        change = speed_of(candidate) - speed_of(baseline)
        verdict = words.REGRESSION if change > THRESHOLD else words.CLEAR
        row = {"benchmark": "tf1_feed_dict-cpu-n1000", "verdict": verdict, "ratio": math.exp(change),
               "low": math.exp(change) * 0.98, "high": math.exp(change) * 1.02}
        if calls is not None:
            calls.append((baseline, candidate))
        return bisect.Step(baseline, candidate, verdict, [row])
    return run_step


def slowed_from(position, by=0.25):
    return lambda commit: 0.0 if commit == GOOD else (math.log1p(by) if COMMITS.index(commit) >= position else 0.0)


@pytest.mark.parametrize("position", range(len(COMMITS)))
def test_the_single_culprit_is_named_wherever_it_lies(position):
    calls, said = [], []
    search = bisect.searched(GOOD, COMMITS, history_gate(slowed_from(position), calls), say=said.append,
                             parents=lambda commit: ["p"])
    assert search.status == bisect.FOUND_EXIT and search.culprit == COMMITS[position]
    assert "this commit did it" in search.lines[-1] and "FOUND" in search.lines[0]
    # GOOD against BAD and three halvings of seven: a 25% culprit beside a parent at 1.00 (their intervals 2% wide)
    # needs no gate against its parent.
    assert calls[0] == (GOOD, COMMITS[-1]) and len(calls) <= 1 + 3
    assert all(baseline == GOOD for baseline, _ in calls) and len(said) == len(calls)
    assert position == 0 or "by their gates against GOOD: tf1_feed_dict-cpu-n1000 at least 1.201" in search.lines[-1]


@pytest.mark.parametrize("position", range(1, len(COMMITS)))
def test_a_culprit_the_gates_against_good_do_not_show_alone_is_gated_against_its_parent(position):
    # 12%: its low end (1.098) over its parent's high end (1.02) is short of the whole threshold.
    calls = []
    search = bisect.searched(GOOD, COMMITS, history_gate(slowed_from(position, by=0.12), calls),
                             say=lambda line: None, parents=lambda commit: ["p"])
    assert search.culprit == COMMITS[position] and calls[-1] == (COMMITS[position - 1], COMMITS[position])
    assert "against its parent: REGRESSION" in search.lines[-1] and "this commit did it" in search.lines[-1]
    # A wider threshold asks more of the two gates against GOOD: the 25% culprit is then gated against its parent too.
    calls = []
    bisect.searched(GOOD, COMMITS, history_gate(slowed_from(position), calls), say=lambda line: None,
                    parents=lambda commit: ["p"], threshold=0.25)
    assert calls[-1] == (COMMITS[position - 1], COMMITS[position])


def test_a_line_with_no_slowdown_ends_nothing_to_find_after_one_gate():
    calls = []
    search = bisect.searched(GOOD, COMMITS, history_gate(lambda commit: 0.0, calls), say=lambda line: None)
    assert search.status == bisect.NOTHING_EXIT == 0 and search.culprit is None and len(calls) == 1
    assert "NOTHING TO FIND" in search.lines[0]


def test_a_drift_is_said_as_small_steps_with_the_commit_where_their_sum_passes_the_threshold():
    # Commits 3, 4 and 5 each 4.5% slower: against GOOD the sum passes 10% at 5; no neighbour is a regression.
    step = math.log1p(0.045)
    speed = lambda commit: 0.0 if commit == GOOD else step * sum(1 for index in (2, 3, 4)
                                                                   if COMMITS.index(commit) >= index)
    search = bisect.searched(GOOD, COMMITS, history_gate(speed), say=lambda line: None, parents=lambda c: ["p"])
    assert search.status == bisect.FOUND_EXIT and search.culprit == COMMITS[4]
    assert "no one commit did it; small steps added up" in search.lines[-1]
    assert "its parent" in search.lines[1] and "1.092" in search.lines[1]  # the parent's sum so far, against GOOD


def test_a_culprit_whose_own_step_is_flagged_after_earlier_steps_is_said_as_a_drift_and_a_step():
    # Commit 3 5% slower, commit 4 12% more: commit 4 is flagged alone, but its parent was already slower than GOOD.
    speed = lambda commit: 0.0 if commit == GOOD else (math.log1p(0.05) * (COMMITS.index(commit) >= 2)
                                                      + math.log1p(0.12) * (COMMITS.index(commit) >= 3))
    calls = []
    search = bisect.searched(GOOD, COMMITS, history_gate(speed, calls), say=lambda line: None,
                             parents=lambda commit: ["p"])
    assert search.culprit == COMMITS[3] and calls[-1] == (COMMITS[2], COMMITS[3])
    assert "against its parent: REGRESSION" in search.lines[-1] and "already made" in search.lines[-1]
    assert "a drift and a step" in search.lines[-1] and "1.050 [1.029, 1.071]" in search.lines[-1]


def test_a_step_that_cannot_tell_ends_the_search_naming_the_range_left():
    gate = history_gate(slowed_from(5))

    def undecided_at_4(baseline, candidate):  # the second halving: 2 was CLEAR
        if candidate == COMMITS[4]:
            return bisect.Step(baseline, candidate, words.INCONCLUSIVE, why="a slowdown of 10% is not ruled out")
        return gate(baseline, candidate)

    search = bisect.searched(GOOD, COMMITS, undecided_at_4, say=lambda line: None)
    assert search.status == bisect.UNDECIDED_EXIT == 3 and search.culprit is None
    assert f"after {COMMITS[2][:10]}, up to {COMMITS[-1][:10]}" in search.lines[0] and "not ruled out" in search.lines[0]


def test_a_first_gate_that_measured_nothing_is_not_measured():
    nothing = lambda baseline, candidate: bisect.Step(baseline, candidate, bisect.NOT_MEASURED, why="no GPU here")
    search = bisect.searched(GOOD, COMMITS, nothing, say=lambda line: None)
    assert search.status == bisect.NOT_MEASURED == 10 and "no GPU here" in search.lines[0]


def test_a_merge_named_as_the_culprit_says_how_to_search_inside_it():
    search = bisect.searched(GOOD, COMMITS, history_gate(slowed_from(2)), say=lambda line: None,
                             parents=lambda commit: ["a", "b"])
    assert f"python -m perf.gate.bisect {COMMITS[2][:10]}^1 {COMMITS[2][:10]}^2" in search.lines[-1]


@pytest.mark.parametrize("verdicts, expected, why", [
    (["clear", "regression"], words.REGRESSION, ""),
    (["clear", "improvement"], words.CLEAR, ""),
    (["pass", "clear"], words.CLEAR, ""),  # a saved "pass" is today's CLEAR
    (["clear", "inconclusive"], words.INCONCLUSIVE, "b INCONCLUSIVE"),
    (["clear", "missing"], words.INCONCLUSIVE, "a commit in the range lacks it"),
    (["unconfirmed"], words.INCONCLUSIVE, "a UNCONFIRMED"),
])
def test_a_steps_verdict_is_the_selections(verdicts, expected, why):
    rows = [{"benchmark": name, "verdict": verdict} for name, verdict in zip("ab", verdicts)]
    verdict, said = bisect.step_verdict(rows)
    assert verdict == expected and why in said


def test_a_step_reads_the_gates_json_and_a_usage_error_is_the_searchs():
    def run_gate(command, say):
        report = command[command.index("--json") + 1]
        with open(report, "w") as saved:
            json.dump({"rows": [{"benchmark": "x", "verdict": "regression", "ratio": 1.2, "low": 1.1,
                                 "high": 1.3}]}, saved)
        return 1, "gate FAILED"

    step = bisect.gated(GOOD, COMMITS[0], ["--benchmarks", "x"], run_gate=run_gate)
    assert step.verdict == words.REGRESSION and step.figures() == "x 1.200 [1.100, 1.300]"
    with pytest.raises(bisect.BisectUsageError, match="no solver nope"):
        bisect.gated(GOOD, COMMITS[0], [], run_gate=lambda command, say: (2, "error: no solver nope"))
    assert bisect.gated(GOOD, COMMITS[0], [], run_gate=lambda command, say: (10, "gate NOT MEASURED: no GPU")).why \
        == "gate NOT MEASURED: no GPU"


def test_a_steps_gate_lines_are_printed_less_the_bisect_it_proposes(monkeypatch, capsys):
    monkeypatch.setattr(bisect, "first_parent_line", lambda good, bad: (GOOD, COMMITS[:1]))

    def gate_report(arguments, run_gate, say):
        say("gate FAILED: 1 regression")
        say(f"which commit: python -m perf.gate.bisect {GOOD} {COMMITS[0]} --benchmarks x (docs/gate.md)")
        return 1, "gate FAILED", {"rows": [{"benchmark": "x", "verdict": "regression", "ratio": 1.3, "low": 1.2,
                                            "high": 1.4}]}

    monkeypatch.setattr(bisect, "gate_report", gate_report)
    assert bisect.main(["HEAD~1", "HEAD"]) == bisect.FOUND_EXIT
    out = capsys.readouterr().out
    assert "  gate FAILED: 1 regression" in out and "which commit" not in out


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def history(tmp_path, monkeypatch):
    """A repository: a, b, a merge of side branch s, c, on main's first-parent line."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for name in ("user.name", "user.email"):
        git(repo, "config", name, "test")
    for message in ("a", "b"):
        git(repo, "commit", "-q", "--allow-empty", "-m", message)
    git(repo, "checkout", "-q", "-b", "side")
    git(repo, "commit", "-q", "--allow-empty", "-m", "s")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "side", "-m", "merge")
    git(repo, "commit", "-q", "--allow-empty", "-m", "c")
    monkeypatch.setattr(bisect, "git", lambda *args: versions.git(*args, cwd=repo))
    return repo


def test_the_first_parent_line_and_the_ranges_that_make_none(history):
    good, line = bisect.first_parent_line("HEAD~3", "HEAD")
    assert good == git(history, "rev-parse", "HEAD~3") and len(line) == 3  # b, the merge, c: not the side's s
    assert line[-1] == git(history, "rev-parse", "HEAD")
    for good, bad, said in (("side", "HEAD", "not on BAD's first-parent line"), ("HEAD", "HEAD", "no commit after"),
                            ("HEAD~1", ".", "must be commits"), ("nope", "HEAD", "not a commit of this repository")):
        with pytest.raises(bisect.BisectUsageError, match=said):
            bisect.first_parent_line(good, bad)


def test_a_threshold_the_gate_would_refuse_is_the_searchs_usage_error_before_anything_runs(monkeypatch, capsys):
    monkeypatch.setattr(bisect, "first_parent_line", lambda good, bad: pytest.fail("nothing is looked up"))
    with pytest.raises(SystemExit) as stopped:
        bisect.main(["HEAD~1", "HEAD", "--threshold", "5"])
    said = capsys.readouterr().err
    assert stopped.value.code == 2 and "python -m perf.gate.bisect: error: argument --threshold" in said


def test_a_usage_error_is_a_line_and_exit_2_never_a_traceback():
    done = subprocess.run([sys.executable, "-m", "perf.gate.bisect", "HEAD~1", "."], capture_output=True, text=True)
    assert done.returncode == 2 and "must be commits" in done.stderr and "Traceback" not in done.stderr


SLOW_NUMPY_LEAN = '''"""The float64 arithmetic without the original's redundant passes, made four times over (a real slowdown)."""

from contextlib import contextmanager

from solvers.answers import gradient_descent
from solvers.problem import Problem


@contextmanager
def prepare(problem: Problem, device: str):
    def run(iterations):
        for _ in range(4):
            fit = gradient_descent(problem, iterations)
        return fit

    yield run
'''


@pytest.mark.e2e
def test_end_to_end_a_search_names_the_commit_that_slowed_a_solver(tmp_path):
    # A clone of this repository with three commits after GOOD: a harmless one, a real fourfold slowdown of
    # numpy_lean's code, another harmless one. At a 50% threshold the untouched commits are CLEAR and the slowed ones a
    # REGRESSION far beyond any noise, so this checks the search's wiring through the real gate, not the machine.
    from helpers import ROOT

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(clone)], check=True)
    for name, value in (("user.name", "test"), ("user.email", "test@example.org")):
        git(clone, "config", name, value)
    (clone / "solvers" / "numpy_lean.py").write_text(SLOW_NUMPY_LEAN)
    for message, path in (("harmless", "README.md"), ("slow", "solvers/numpy_lean.py"), ("harmless too", "README.md")):
        if path == "README.md":
            with open(clone / path, "a") as readme:
                readme.write(f"\n<!-- {message} -->\n")
        git(clone, "commit", "-q", "-m", message, path)
    slow = git(clone, "rev-parse", "HEAD~1")
    report = tmp_path / "bisect.json"
    done = subprocess.run([sys.executable, "-m", "perf.gate.bisect", "HEAD~3", "HEAD", "--benchmarks",
                           "numpy_lean-cpu-n1000", "--threshold", "50%", "--budget", "60", "--json", str(report)],
                          cwd=clone, capture_output=True, text=True, timeout=900)
    assert done.returncode == bisect.FOUND_EXIT, done.stdout + done.stderr
    saved = json.loads(report.read_text())
    assert saved["culprit"] == slow and saved["ending"] == words.FOUND and f"{slow[:10]} (slow)" in done.stdout
    assert "this commit did it" in done.stdout and len(saved["steps"]) <= 4
    # Its gates failed between two commits, each proposing a bisect: the search prints their lines but not that one.
    assert "which commit:" not in done.stdout and "  gate: candidate" in done.stdout
    assert [step["verdict"] for step in saved["steps"]][0] == words.REGRESSION  # BAD against GOOD first


def test_a_failed_gate_between_two_commits_prints_the_bisect_of_its_regressions(tmp_path, monkeypatch):
    commits = {"perf-baseline": "a" * 40, "HEAD~5": "b" * 40, "HEAD~1": "c" * 40, "HEAD": "d" * 40, "HEAD@{0}": "d" * 40}

    def git(*args):
        if args[0] != "rev-parse" or args[1].removesuffix("^{commit}") not in commits:
            raise versions.GateError("no such revision")
        return commits[args[1].removesuffix("^{commit}")]

    monkeypatch.setattr(bisect, "git", git)
    rows = [Verdict(verdict, benchmark=name) for name, verdict in (
        ("a-cpu-n1000", words.REGRESSION), ("b-cpu-n1000", words.CLEAR), ("c-cpu-n1000", words.REGRESSION))]
    assert bisect.bisect_command("perf-baseline", "HEAD", rows, 0.10) == (
        "which commit: python -m perf.gate.bisect perf-baseline HEAD --benchmarks a-cpu-n1000,c-cpu-n1000 "
        "(docs/gate.md)")
    assert "--threshold 20%" in bisect.bisect_command("HEAD~5", "HEAD", rows, 0.20)
    # A counted gate's bisect counts too, its threshold said only where it is not the counted default.
    assert bisect.bisect_command("HEAD~5", "HEAD", rows, 0.01, counted=True).endswith(
        "--benchmarks a-cpu-n1000,c-cpu-n1000 --count (docs/gate.md)")
    assert "--count --threshold 10%" in bisect.bisect_command("HEAD~5", "HEAD", rows, 0.10, counted=True)
    # No line of commits to search: the working tree, an interpreter, a version with settings; nor without a regression.
    interpreter = tmp_path / "python"
    interpreter.write_text("")
    for baseline, candidate in (("HEAD", "."), (str(interpreter), "HEAD"), ("HEAD", "HEAD:TF_ENABLE_ONEDNN_OPTS=0")):
        assert bisect.bisect_command(baseline, candidate, rows, 0.10) is None
    assert bisect.bisect_command("HEAD~1", "HEAD", rows[1:2], 0.10) is None
    # One commit against itself (an A/A gate), or a revision that is not there, is no line to search either.
    assert bisect.bisect_command("HEAD", "HEAD@{0}", rows, 0.10) is None
    assert bisect.bisect_command("nope", "HEAD", rows, 0.10) is None
