"""The gate's stages (perf/gate/stages.py) on fake workers: the screen, its budget, the confirmation."""

import math
import random
import sys
import time
from contextlib import contextmanager

import pytest
from gate_fakes import QUICK, VERSIONS, cpu_only, fake_workers_for_every_version, fakes

from perf.gate import stages
from perf.gate.interleave import Outcome, Problem
from perf.gate.stages import verdicts
from perf.gate.verdict import failed
from perf.gate.versions import ROOT, Version
from perf.measure import Key


def test_problems_become_their_own_verdicts():
    outcome = Outcome(Key("tf1_callable", "cpu", 1000), problem=Problem("error", "error on candidate: wrong answer: w = 1"))
    assert verdicts([outcome], "candidate", stages.Stopping(0.1))[0]["verdict"] == "error"
    assert failed([{"verdict": "error"}]) and failed([{"verdict": "missing"}])
    assert not failed([{"verdict": "new"}, {"verdict": "inconclusive"}, {"verdict": "improvement"},
                       {"verdict": "unconfirmed"}])


@pytest.fixture
def fake_passes(monkeypatch):
    """stages' passes on fake workers: each fresh pass gets new fakes answering with these round times. Returns
    the passes' indices; imported (below) gets the solvers each pass's workers were told to import first."""
    counted = []

    def use(seconds):
        @contextmanager
        def started_for_pass(versions, threads, pass_index, solvers=None):
            counted.append(pass_index)
            imported.append(solvers)
            yield fakes(cpu_only("numpy_loop", "numpy_lean"), baseline={"seconds": seconds},
                        candidate={"seconds": seconds})

        monkeypatch.setattr(stages, "started_for_pass", started_for_pass)
        return counted

    imported = []
    use.imported = imported
    return use


def test_the_screen_stops_once_a_threshold_slowdown_is_ruled_out_for_every_benchmark(fake_passes):
    jitter = random.Random(3)
    counted = fake_passes(lambda solver, label, index: 1e-4 * (1 + 0.01 * jitter.random()))
    screen = stages.Stopping(0.10)
    outcomes = stages.screened(VERSIONS, 1, None, ["cpu"], QUICK, screen, seed=1, progress=lambda text: None)
    assert len(counted) == stages.MIN_PASSES and {outcome.key.solver for outcome in outcomes} == {"numpy_loop", "numpy_lean"}
    assert all(row["verdict"] == "pass" for row in stages.verdicts(outcomes, "candidate", screen))


def test_an_undecided_benchmark_is_measured_to_the_most_passes_a_decided_one_stops(fake_passes):
    jitter = random.Random(3)

    def seconds(solver, label, index):
        if solver == "numpy_lean":  # so noisy that a 10% slowdown is neither ruled out nor shown
            return 1e-4 * math.exp(jitter.gauss(0, 0.5))
        return 1e-4 * (1 + 0.02 * jitter.random())

    counted = fake_passes(seconds)
    screen = stages.Stopping(0.10, min_passes=8, max_passes=12)
    outcomes = stages.screened(VERSIONS, 1, None, ["cpu"], QUICK, screen, seed=1, progress=lambda text: None)
    assert len(counted) == 12  # past min_passes only numpy_lean, never decided, until max_passes (within the budget)
    # The first pass's workers import every solver (the benchmarks come from their listings), the later ones only
    # the solvers of the benchmarks still measured.
    assert fake_passes.imported == [None] + [["numpy_lean", "numpy_loop"]] * 7 + [["numpy_lean"]] * 4
    assert [len(outcome.log_ratios["candidate"]) for outcome in outcomes] == [8] * 2 + [12] * 2
    verdict = {row["benchmark"]: row["verdict"] for row in stages.verdicts(outcomes, "candidate", screen)}
    assert verdict == {"numpy_loop-cpu-n1000": "pass", "numpy_loop-cpu-n100000": "pass",
                       "numpy_lean-cpu-n1000": "inconclusive", "numpy_lean-cpu-n100000": "inconclusive"}


def test_a_regression_is_decided_in_the_fewest_passes_then_confirmed_alone(fake_passes):
    jitter = random.Random(3)

    def seconds(solver, label, index):
        return 1e-4 * (1 + 0.02 * jitter.random()) * (1.5 if label == "candidate" and solver == "numpy_lean" else 1.0)

    counted = fake_passes(seconds)
    screen = stages.Stopping(0.10)
    outcomes = stages.screened(VERSIONS, 1, None, ["cpu"], QUICK, screen, seed=1, progress=lambda text: None)
    assert len(counted) == stages.MIN_PASSES  # a clear regression is decided: it needs no more passes than a pass
    rows = stages.verdicts(outcomes, "candidate", screen)
    verdict = {row["benchmark"]: row["verdict"] for row in rows}
    assert verdict == {"numpy_loop-cpu-n1000": "pass", "numpy_loop-cpu-n100000": "pass",
                       "numpy_lean-cpu-n1000": "regression", "numpy_lean-cpu-n100000": "regression"}
    counted.clear()
    final = stages.confirmed(VERSIONS, 1, outcomes, rows, QUICK, 0.10, seed=2, progress=lambda text: None)
    assert len(counted) == stages.CONFIRMATION_MIN_PASSES
    assert [row["verdict"] for row in final] == [row["verdict"] for row in rows]
    assert all(row["why"].startswith("confirmed") for row in final if row["verdict"] == "regression")


def test_a_flag_that_does_not_repeat_alone_is_reported_and_does_not_fail(fake_passes):
    fake_passes(lambda solver, label, index: 1e-4)
    outcome = Outcome(Key("numpy_lean", "cpu", 1000), 100, 1, {"candidate": []})
    rows = [{"benchmark": "numpy_lean-cpu-n1000", "verdict": "regression", "ratio": 1.3}]
    (row,) = stages.confirmed(VERSIONS, 1, [outcome], rows, QUICK, 0.10, seed=2, progress=lambda text: None)
    assert row["verdict"] == "unconfirmed" and row["why"].startswith("regression in the screen, pass measured again")
    assert not failed([row])


def test_confirmation_measures_each_version_only_on_its_own_flags_beside_the_baseline(monkeypatch):
    started = fake_workers_for_every_version(monkeypatch, cpu_only("numpy_loop", "numpy_lean"),
                                             lambda solver, label, index: 1e-4 * (1.5 if label == "A" else 1.0))
    versions = [Version(label, label, ROOT, sys.executable) for label in ("baseline", "A", "B")]
    lean = Key("numpy_lean", "cpu", 1000)
    found = stages.confirmation(versions, 1, {"A": [lean], "B": []}, QUICK, stages.confirming(0.10), seed=3,
                                progress=lambda text: None)
    assert set(found) == {"A"} and set(found["A"]) == {lean.name} and found["A"][lean.name]["verdict"] == "regression"
    # B flagged nothing: it is not started; numpy_loop, flagged by nobody, is not measured.
    assert {tuple(labels) for labels, _ in started} <= {("baseline", "A"), ("A", "baseline")}
    assert all(solvers == ["numpy_lean"] for _, solvers in started) and len(started) == stages.CONFIRMATION_MIN_PASSES
    assert stages.confirmation(versions, 1, {"A": [], "B": []}, QUICK, stages.confirming(0.10), seed=3) == {}


def test_the_budget_stops_the_screen_after_the_fewest_passes(fake_passes):
    jitter = random.Random(3)
    counted = fake_passes(lambda solver, label, index: 1e-4 * math.exp(jitter.gauss(0, 0.5)))  # never decided
    stages.screened(VERSIONS, 1, None, ["cpu"], QUICK, stages.Stopping(0.10, budget_s=0), seed=1,
                    progress=lambda text: None)
    assert len(counted) == stages.MIN_PASSES


def test_each_variant_timed_in_the_same_passes_is_judged_on_the_passes_its_own_gate_would_have_given(monkeypatch):
    jitter = random.Random(5)

    def seconds(solver, label, index):
        if label == "noisy":  # never decided: its gate times it to the most passes
            return 1e-4 * math.exp(jitter.gauss(0, 0.5))
        return 1e-4 * (1 + 0.01 * jitter.random()) * (1.5 if label == "slower" else 1.0)

    started = fake_workers_for_every_version(monkeypatch, cpu_only("numpy_lean"), seconds)
    versions = [Version(label, label, ROOT, sys.executable) for label in ("baseline", "slower", "noisy")]
    screen = stages.Stopping(0.10, max_passes=12)
    outcomes = stages.measured(versions, 1, [Key("numpy_lean", "cpu", 1000)], QUICK, 1, screen, lambda text: None)
    (outcome,) = outcomes
    # Timed 12 times for the noisy copy's sake; the slower one's gate stopped it, decided, at the fewest passes, and
    # with nothing left open for it the slower copy's worker is started no more.
    assert outcome.gate_passes == {"slower": stages.MIN_PASSES, "noisy": 12}
    assert len(outcome.log_ratios["slower"]) == stages.MIN_PASSES and len(outcome.log_ratios["noisy"]) == 12
    assert [labels for labels, _ in started] == ([["baseline", "slower", "noisy"]] * stages.MIN_PASSES
                                                 + [["baseline", "noisy"]] * (12 - stages.MIN_PASSES))
    (row,) = stages.verdicts(outcomes, "slower", screen)
    assert row["verdict"] == "regression" and row["passes"] == stages.MIN_PASSES
    assert stages.verdicts(outcomes, "noisy", screen)[0]["passes"] == 12


def test_the_screen_judges_at_its_rate_over_all_benchmarks_and_the_confirmation_per_flag_with_time_for_each():
    screen, again = stages.Stopping(0.10), stages.confirming(0.10)
    assert screen.alpha(36) == pytest.approx(0.05 / 36) and again.alpha(36) == 0.05
    undecided = [0.3, -0.2, 0.25, -0.1, 0.2, 0.1]
    spent_s = stages.CONFIRMATION_BUDGET_S + 10  # past the budget of one flag, not of many
    assert not again.keeps(undecided, 6, spent_s, benchmarks=1, live=1)
    assert again.keeps(undecided, 6, spent_s, benchmarks=10, live=10)
    assert not again.keeps(undecided, stages.CONFIRMATION_MAX_PASSES, 0, benchmarks=1, live=1)
    assert again.keeps([0.0] * 2, 2, 1e9, benchmarks=1, live=1)  # the fewest passes, whatever the clock


def test_each_candidates_budget_is_charged_only_for_the_benchmarks_its_own_gate_still_times(monkeypatch):
    now = [0.0]
    jitter = random.Random(11)
    noisy = {"A": "numpy_lean", "B": "numpy_loop"}  # what each candidate cannot decide

    def seconds(solver, label, index):
        if solver == "numpy_loop":
            now[0] += 1.0  # a round of numpy_loop takes a second on the gate's clock, numpy_lean's none
        spread = 2.0 if noisy.get(label) == solver else 0.01  # so noisy that nothing is decided in 20 passes
        return 1e-4 * math.exp(jitter.gauss(0, spread))

    fake_workers_for_every_version(monkeypatch, cpu_only("numpy_loop", "numpy_lean"), seconds)
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])
    versions = [Version(label, label, ROOT, sys.executable) for label in ("baseline", "A", "B")]
    keys = [Key("numpy_loop", "cpu", 1000), Key("numpy_lean", "cpu", 1000)]
    # A pass's numpy_loop trial: 6 rounds on each of 3 versions, 18 s, of which a two-version gate would spend 12.
    screen = stages.Stopping(0.10, min_passes=8, max_passes=20, budget_s=100)
    loop, lean = stages.measured(versions, 1, keys, QUICK, 1, screen, lambda text: None)
    # A decided numpy_loop in 8 passes (96 s), then timed only numpy_lean, which costs nothing: 20 passes.
    assert loop.gate_passes["A"] == 8 and lean.gate_passes["A"] == 20
    # B went on with numpy_loop: one pass more starts within its 100 s, none after.
    assert loop.gate_passes["B"] == 9 and lean.gate_passes["B"] == 8
