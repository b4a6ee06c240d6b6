"""--decide: the gate's command built from a comparison's CAN'T TELL rows, and its verdicts as the comparison's and the
run's ending, with the gate's run injected (no subprocess, nothing timed); and once end to end, through the real
gate."""

import json
import shlex
import subprocess
import sys
from functools import partial

import pytest
from helpers import COMPARED_KEY as KEY
from helpers import FSSGD, ROOT, bench, document, info, spread

from perf.gate.decide import GATE_BUDGET_S, decided_by_gate, decision_of, gate_arguments, gate_budget_s, gate_line
from perf.judge.outcome import FAILED, NOT_MEASURED, PASSED
from perf.measure import Key
from perf.report.compare import COMPARISON_EXITS, compared, comparison, comparison_summary, run_ending

COMMIT = {"id": "0123456789abcdef", "dirty": False}
UNDECIDED = compared(KEY, spread(1.0, 0.3), spread(1.3, 0.3))  # tf1_while_loop-cpu-n1000, CAN'T TELL
WHILE_LOOP = "test_fssgd[tf1_while_loop-cpu-n1000]"


def gate_row(verdict, **fields):
    figures = {"ratio": 1.02, "low": 0.98, "high": 1.06, "coverage": 0.9, "passes": 7} if verdict != "error" else {}
    return {"verdict": verdict, "benchmark": KEY.name, **figures, **fields}


def fake_gate(status, rows, ending="gate passed", calls=None):
    """A run_gate that writes the gate's --json (rows, status, ending) where the command asks, and remembers it."""
    def run(command, say):
        if calls is not None:
            calls.append(command)
        report = command[command.index("--json") + 1]
        with open(report, "w") as file:
            json.dump({"status": status, "ending": ending, "rows": rows}, file)
        say(ending)
        return status, ending

    return run


def cant_tell_comparison(run_gate, commit=COMMIT, threshold=0.10):
    """A saved run and this one whose one benchmark is CAN'T TELL, compared under --decide with this gate."""
    then = {**document([bench(WHILE_LOOP, info(spread(1.0, 0.3)))]), "commit_info": commit}
    now = [bench(WHILE_LOOP, info(spread(1.3, 0.3)))]
    decide = partial(decided_by_gate, say=lambda line: None, commit_here=lambda commit: True, run_gate=run_gate)
    return comparison(then, "0001_run.json", FSSGD, now, threshold, decide=decide)


@pytest.mark.parametrize("gate_verdict, verdict", [("regression", "slower"), ("improvement", "faster"),
                                                   ("clear", "unchanged")])
def test_a_gate_verdict_that_decides_becomes_the_comparisons_with_the_gates_ratio(gate_verdict, verdict):
    decision = decision_of([UNDECIDED], {KEY.name: gate_row(gate_verdict)})
    result = decision.decided[KEY]
    assert result.verdict == verdict and result.change.value == 1.02 and result.detectable is None
    assert decision.lines == [f"decided by the gate: {KEY.name} {verdict.upper()} (gate ratio 1.02 [0.98, 1.06], "
                              f"7 passes)"]
    assert decision.failed is None and decision.not_measured is None


@pytest.mark.parametrize("gate_verdict", ["inconclusive", "unconfirmed", "new", "skipped"])
def test_a_gate_verdict_that_does_not_decide_leaves_the_row_cant_tell_and_says_why(gate_verdict):
    decision = decision_of([UNDECIDED], {KEY.name: gate_row(gate_verdict, why="not ruled out")})
    assert decision.decided == {} and decision.failed is None
    assert decision.lines == [f"not decided by the gate: {KEY.name} CAN'T TELL (gate {gate_verdict.upper()}: not "
                              f"ruled out; gate ratio 1.02 [0.98, 1.06], 7 passes)"]


def test_a_gate_error_fails_the_run_whatever_fail_on_slower_says():
    found = cant_tell_comparison(fake_gate(FAILED, [gate_row("error", why="error on candidate: wrong answer")],
                                           "gate FAILED: 1 error"))
    assert found.failed == f"the gate found errors: {KEY.name} (error on candidate: wrong answer)"
    assert run_ending([found], None) == (FAILED, [f"--decide: {found.failed}"], [])


def test_the_gates_command_names_exactly_the_undecided_benchmarks_at_the_runs_threshold_cpus_and_threads(monkeypatch):
    gpu = compared(Key("tf1_callable", "gpu", 10_000), spread(1.0, 0.3), spread(1.3, 0.3))
    monkeypatch.delenv("FSSGD_SLOWDOWN", raising=False)
    assert gate_arguments("0123456789abcdef", [UNDECIDED, gpu], 0.125, (1,), 0) == [
        "0123456789abcdef", "--benchmarks", "tf1_while_loop-cpu-n1000,tf1_callable-gpu-n10000", "--threshold", "12.5%",
        "--threads", "0", "--budget", str(gate_budget_s(2)), "--cpu-affinity", "1"]
    monkeypatch.setenv("FSSGD_SLOWDOWN", "*=1.5")
    free = gate_arguments("0123456789abcdef", [UNDECIDED], 0.10, (), 2)
    # A free run leaves the gate its own one CPU (the gate always pins); the slowdown stand-in slows the candidate alone.
    assert "--cpu-affinity" not in free and free[free.index("--threshold") + 1] == "10%"
    assert free[free.index("--threads") + 1] == "2" and free[-2:] == ["--candidate-slowdown", "*=1.5"]


@pytest.mark.parametrize("affinity, threads, slowdown", [((1,), 0, None), ((), 2, "*=1.5"), ((0, 1, 2), 1, None)])
def test_the_cant_tell_line_prints_exactly_the_command_decide_runs(monkeypatch, affinity, threads, slowdown):
    # The line once left out the threads, CPUs and budget that --decide passes: pasted, it ran another gate.
    if slowdown:
        monkeypatch.setenv("FSSGD_SLOWDOWN", slowdown)
    else:
        monkeypatch.delenv("FSSGD_SLOWDOWN", raising=False)
    then = {**document([]), "commit_info": COMMIT}
    undecided = [UNDECIDED, compared(Key("tf1_callable", "gpu", 10_000), spread(1.0, 0.3), spread(1.3, 0.3))]
    calls = []
    decided_by_gate(then, undecided, 0.125, affinity, threads, say=lambda line: None, commit_here=lambda _: True,
                    run_gate=fake_gate(PASSED, [gate_row("clear")], calls=calls))
    ran = calls[0]
    assert ran[0] == sys.executable and ran[-2] == "--json"  # --decide reads the verdicts there, a file of its own
    line = gate_line(then, undecided, 0.125, affinity, threads, commit_here=lambda _: True)
    assert line.split(" (--decide runs it): ")[1] == shlex.join(["python", *ran[1:-2]])


def test_the_gates_budget_grows_with_the_rows_it_decides_up_to_its_most():
    assert gate_budget_s(1) < gate_budget_s(2) < gate_budget_s(12) == GATE_BUDGET_S == gate_budget_s(40)
    assert [gate_budget_s(rows) for rows in (1, 2, 12)] == [70, 80, 180]


def test_the_gate_is_announced_with_its_rows_and_the_time_its_screen_may_take():
    heard = []
    decided_by_gate({**document([]), "commit_info": COMMIT}, [UNDECIDED], 0.10, say=heard.append,
                    commit_here=lambda _: True, run_gate=fake_gate(PASSED, [gate_row("clear")]))
    assert heard[0].startswith(f"fssgd-bench: --decide: the gate times {COMMIT['id'][:10]} beside the working tree "
                               f"for the 1 CAN'T TELL row, screening within {gate_budget_s(1)} s, then "
                               "confirming any flag: python -m perf.gate ")


@pytest.mark.parametrize("commit, here, why", [
    ({}, True, "The saved run records no commit"),
    ({"id": "0123456789abcdef", "dirty": True}, True, "The saved run was made from 0123456789 with uncommitted changes"),
    (COMMIT, False, "The saved run's commit 0123456789 is not in this repository"),
])
def test_without_a_commit_to_check_out_the_rows_stay_cant_tell_and_nothing_runs(commit, here, why):
    calls = []
    then = {**document([]), "commit_info": commit}
    decision = decided_by_gate(then, [UNDECIDED], 0.10, say=lambda line: None, commit_here=lambda _: here,
                               run_gate=fake_gate(PASSED, [gate_row("clear")], calls=calls))
    assert calls == [] and decision.decided == {} and decision.not_measured is None and decision.failed is None
    assert decision.lines[0].startswith(f"--decide: {why}") and decision.lines[0].endswith("The CAN'T TELL rows stay so.")


def test_a_row_the_gate_decides_slower_joins_the_slower_list_and_fails_fail_on_slower():
    calls = []
    found = cant_tell_comparison(fake_gate(FAILED, [gate_row("regression", ratio=1.2, low=1.1, high=1.3)],
                                           "gate FAILED: 1 regression", calls))
    assert [command[command.index("--benchmarks") + 1] for command in calls] == [KEY.name]
    assert found.not_measured is None and [result.key for result in found.slower] == [KEY]
    assert f"decided by the gate: {KEY.name} SLOWER (gate ratio 1.20 [1.10, 1.30], 7 passes)" in found.lines
    assert found.lines[-1] == "1 SLOWER"  # the final verdicts, counted; the table's row still says CAN'T TELL
    assert any(line.startswith(WHILE_LOOP) and "CAN'T TELL" in line for line in found.lines)
    assert run_ending([found], 0.10) == (FAILED, [f"--fail-on-slower=10%: the gate's regressions (slower, surely, "
                                                  f"and by more than half of it): {KEY.name} (1.20x)"], [])
    assert run_ending([found], None) == (PASSED, [], [])  # without --fail-on-slower a SLOWER is said, and fails nothing


GATE_NOT_MEASURED = "gate NOT MEASURED: no benchmark was timed on both versions: nothing measured on cpu (no GPU)"


def test_a_gate_that_ends_not_measured_makes_the_comparison_not_measured_with_its_reason():
    found = cant_tell_comparison(fake_gate(NOT_MEASURED, [gate_row("skipped")], GATE_NOT_MEASURED))
    assert found.gate_not_measured == ("--decide: the gate on the CAN'T TELL rows measured nothing to stand behind: "
                                       f"{GATE_NOT_MEASURED}")
    assert found.not_measured is None  # the comparison's own verdicts count
    assert run_ending([found], 0.10) == (NOT_MEASURED, [], [found.gate_not_measured])


def test_a_slower_row_of_the_comparisons_own_fails_the_run_though_the_gate_measured_nothing_and_both_are_said():
    slowed = "test_fssgd[numpy_lean-cpu-n1000]"
    then = {**document([bench(WHILE_LOOP, info(spread(1.0, 0.3))),
                        bench(slowed, {**info(spread(0.4, 0.01)), "solver": "numpy_lean"})]), "commit_info": COMMIT}
    now = [bench(WHILE_LOOP, info(spread(1.3, 0.3))), bench(slowed, {**info(spread(0.6, 0.01)), "solver": "numpy_lean"})]
    decide = partial(decided_by_gate, say=lambda line: None, commit_here=lambda commit: True,
                     run_gate=fake_gate(NOT_MEASURED, [gate_row("skipped")], GATE_NOT_MEASURED))
    found = comparison(then, "0001_run.json", FSSGD, now, 0.10, decide=decide)
    status, failures, unmeasured = run_ending([found], 0.10)
    assert (status, failures) == (FAILED, ["--fail-on-slower=10%: slower by more than that: numpy_lean-cpu-n1000 "
                                           "(1.50x)"])
    assert unmeasured == [found.gate_not_measured] and GATE_NOT_MEASURED in found.gate_not_measured
    ending = comparison_summary(status, failures, unmeasured, [found], []).splitlines()[0]
    assert ending == (f"**--benchmark-compare FAILED**: {failures[0]}; NOT MEASURED: {unmeasured[0]} "
                      f"({COMPARISON_EXITS[FAILED]})")
    assert run_ending([found], None) == (NOT_MEASURED, [], unmeasured)  # without --fail-on-slower a SLOWER fails nothing


def test_a_gate_that_cannot_start_or_writes_no_report_makes_the_comparison_not_measured():
    def cannot_start(command, say):
        raise FileNotFoundError("no such interpreter")

    assert cant_tell_comparison(cannot_start).gate_not_measured == "--decide: the gate cannot start: no such interpreter"
    said_only = cant_tell_comparison(lambda command, say: (NOT_MEASURED, "gate NOT MEASURED: the baseline cannot start"))
    assert said_only.gate_not_measured.endswith("measured nothing to stand behind: gate NOT MEASURED: the baseline cannot "
                                           "start")


def test_a_comparison_whose_verdicts_do_not_count_runs_no_gate():
    calls = []
    then = {**document([bench(WHILE_LOOP, info(spread(1.0, 0.3)))]), "commit_info": COMMIT}
    decide = partial(decided_by_gate, say=lambda line: None, commit_here=lambda commit: True,
                     run_gate=fake_gate(PASSED, [gate_row("clear")], calls=calls))
    found = comparison(then, "0001_run.json", {**FSSGD, "numpy": "2.3.0"}, [bench(WHILE_LOOP, info(spread(1.3, 0.3)))],
                       0.10, decide=decide)
    assert calls == [] and found.not_measured.startswith("not like with like")


def test_end_to_end_decide_hands_a_cant_tell_row_to_the_real_gate_and_takes_its_verdict(run_perf, pytester,
                                                                                      monkeypatch):
    # A shrunk run saved as if made at HEAD, its one judged row spread so wide the comparison cannot tell; then the same
    # run slowed 3x by FSSGD_SLOWDOWN, which --decide hands the gate as --candidate-slowdown: the real gate (HEAD in a
    # worktree against the working tree, its --json read back) must find the regression, and --fail-on-slower fail it.
    monkeypatch.setenv("FSSGD_SHRINK", "1000")  # the wiring, not the figures
    selection = ("--solvers", "numpy_loop,numpy_lean", "--devices", "cpu", "-k", "not n100000",
                 "--cpu-affinity", "quiet")
    run_perf(*selection, "--benchmark-autosave", modules=["test_fssgd.py"]).assert_outcomes(passed=2)
    [saved] = pytester.path.glob(".benchmarks/*/*/0001_*.json")
    run = json.loads(saved.read_text())
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    run["commit_info"] = {**run["commit_info"], "id": head.stdout.strip(), "dirty": False}
    for entry in run["benchmarks"]:
        if entry["extra_info"]["solver"] == "numpy_lean":  # 3x, as now, but too spread to tell
            medians = entry["extra_info"]["trial_medians_s"]
            entry["extra_info"]["trial_medians_s"] = [3 * factor * median for factor, median in
                                                      zip([0.5, 0.8, 1.0, 1.25, 2.0], medians, strict=True)]
    saved.write_text(json.dumps(run))
    monkeypatch.setenv("FSSGD_SLOWDOWN", "numpy_lean=3")
    result = run_perf(*selection, "--benchmark-compare", "--fail-on-slower=10%", "--decide", modules=["test_fssgd.py"])
    output = result.stdout.str()
    assert result.ret == FAILED, output[-4000:]
    result.stdout.fnmatch_lines([
        f"fssgd-bench: --decide: the gate times {head.stdout[:10]} beside the working tree for the 1 CAN'T TELL row*"
        "--benchmarks numpy_lean-cpu-n1000 *--candidate-slowdown numpy_lean=3",
        "gate FAILED: 1 regression",
        "decided by the gate: numpy_lean-cpu-n1000 SLOWER (gate ratio *",
        "fssgd-bench: FAILED --fail-on-slower=10%: the gate's regressions (slower, surely, and by more than half of "
        "it): numpy_lean-cpu-n1000 (*x)",
    ])
