"""The gate's stages (perf/gate/stages.py) on fake workers: the screen, its budget, the confirmation."""

import math
import random
from contextlib import contextmanager

import pytest
from gate_fakes import QUICK, VERSIONS, cpu_only, fake_workers_for_every_version, fakes

from perf.gate import stages
from perf.gate.interleave import Outcome, Unjudged
from perf.gate.stages import verdicts
from perf.gate.ending import failed
from perf.judge.rules import Verdict
from perf.measure import Key


def test_unjudged_benchmarks_become_their_own_verdicts():
    outcome = Outcome(Key("tf1_callable", "cpu", 1000), unjudged=Unjudged("error", "error on candidate: wrong answer: w = 1"))
    assert verdicts([outcome], "candidate", stages.Stopping(0.1))[0].verdict == "error"
    assert failed([Verdict("error")]) and failed([Verdict("missing")])
    assert not failed([Verdict("new"), Verdict("inconclusive"), Verdict("improvement"), Verdict("unconfirmed")])


@pytest.fixture
def fake_passes(monkeypatch):
    """stages' passes on fake workers: each fresh pass gets new fakes answering with these round times. Returns
    the passes' indices; imported (below) gets the solvers each pass's workers were told to import first, workers
    each pass's fakes."""
    counted = []

    def use(seconds):
        @contextmanager
        def workers_for_pass(versions, threads, pass_index, solvers=None):
            counted.append(pass_index)
            imported.append(solvers)
            workers.append(fakes(cpu_only("numpy_loop", "numpy_lean"), baseline={"seconds": seconds},
                                 candidate={"seconds": seconds}))
            yield workers[-1]

        monkeypatch.setattr(stages, "workers_for_pass", workers_for_pass)
        return counted

    imported, workers = [], []
    use.imported, use.workers = imported, workers
    return use


def test_the_screen_stops_once_a_threshold_slowdown_is_ruled_out_for_every_benchmark(fake_passes):
    jitter = random.Random(3)
    counted = fake_passes(lambda solver, label, index: 1e-4 * (1 + 0.01 * jitter.random()))
    screen = stages.Stopping(0.10)
    outcomes = stages.screened(VERSIONS, 1, None, ["cpu"], QUICK, screen, seed=1, progress=lambda text: None)
    assert len(counted) == stages.MIN_PASSES and {outcome.key.solver for outcome in outcomes} == {"numpy_loop", "numpy_lean"}
    assert all(row.verdict == "clear" for row in stages.verdicts(outcomes, "candidate", screen))


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
    verdict = {row.benchmark: row.verdict for row in stages.verdicts(outcomes, "candidate", screen)}
    assert verdict == {"numpy_loop-cpu-n1000": "clear", "numpy_loop-cpu-n100000": "clear",
                       "numpy_lean-cpu-n1000": "inconclusive", "numpy_lean-cpu-n100000": "inconclusive"}


def test_named_solvers_are_all_the_first_pass_imports_and_all_it_times(fake_passes):
    fake_passes(lambda solver, label, index: 1e-4)
    outcomes = stages.screened(VERSIONS, 1, ["numpy_lean"], ["cpu"], QUICK, stages.Stopping(0.10), seed=1,
                               progress=lambda text: None)
    assert fake_passes.imported[0] == ["numpy_lean"] and {outcome.key.solver for outcome in outcomes} == {"numpy_lean"}


def test_a_first_pass_asks_each_version_for_its_solvers_once_in_the_screen_and_the_confirmation(fake_passes):
    counted = fake_passes(lambda solver, label, index: 1e-4)
    outcomes = stages.screened(VERSIONS, 1, None, ["cpu"], QUICK, stages.Stopping(0.10), seed=1,
                               progress=lambda text: None)
    stages.confirmation(VERSIONS, 1, [outcomes[0].key], QUICK, stages.confirming(0.10), seed=2,
                        progress=lambda text: None)
    first_passes = [workers for pass_index, workers in zip(counted, fake_passes.workers) if pass_index == 0]
    assert len(first_passes) == 2
    assert all([request["op"] for request in worker.asked].count("solvers") == 1
               for workers in first_passes for worker in workers.values())


def test_a_regression_is_decided_in_the_fewest_passes_then_confirmed_alone(fake_passes):
    jitter = random.Random(3)

    def seconds(solver, label, index):
        return 1e-4 * (1 + 0.02 * jitter.random()) * (1.5 if label == "candidate" and solver == "numpy_lean" else 1.0)

    counted = fake_passes(seconds)
    screen = stages.Stopping(0.10)
    outcomes = stages.screened(VERSIONS, 1, None, ["cpu"], QUICK, screen, seed=1, progress=lambda text: None)
    assert len(counted) == stages.MIN_PASSES  # an obvious regression is decided: it needs no more passes than a CLEAR one
    rows = stages.verdicts(outcomes, "candidate", screen)
    verdict = {row.benchmark: row.verdict for row in rows}
    assert verdict == {"numpy_loop-cpu-n1000": "clear", "numpy_loop-cpu-n100000": "clear",
                       "numpy_lean-cpu-n1000": "regression", "numpy_lean-cpu-n100000": "regression"}
    counted.clear()
    final = stages.confirmed(VERSIONS, 1, outcomes, rows, QUICK, 0.10, seed=2, progress=lambda text: None)
    assert len(counted) == stages.CONFIRMATION_MIN_PASSES
    assert [row.verdict for row in final] == [row.verdict for row in rows]
    assert all(row.why.startswith("confirmed") for row in final if row.verdict == "regression")


def test_a_flag_that_does_not_repeat_alone_is_reported_and_does_not_fail(fake_passes):
    fake_passes(lambda solver, label, index: 1e-4)
    outcome = Outcome(Key("numpy_lean", "cpu", 1000), 100, 1, {"candidate": []})
    rows = [Verdict("regression", "numpy_lean-cpu-n1000", ratio=1.3)]
    (row,) = stages.confirmed(VERSIONS, 1, [outcome], rows, QUICK, 0.10, seed=2, progress=lambda text: None)
    assert row.verdict == "unconfirmed" and row.why.startswith("regression in the screen, clear measured again")
    assert not failed([row])


def test_confirmation_measures_only_the_flagged_benchmarks_beside_the_baseline(monkeypatch):
    started = fake_workers_for_every_version(monkeypatch, cpu_only("numpy_loop", "numpy_lean"),
                                             lambda solver, label, index: 1e-4 * (1.5 if label == "candidate" else 1.0))
    lean = Key("numpy_lean", "cpu", 1000)
    found = stages.confirmation(VERSIONS, 1, [lean], QUICK, stages.confirming(0.10), seed=3, progress=lambda text: None)
    assert set(found) == {lean.name} and found[lean.name].verdict == "regression"
    # numpy_loop, not flagged, is neither imported nor measured.
    assert all(solvers == ["numpy_lean"] for _, solvers in started) and len(started) == stages.CONFIRMATION_MIN_PASSES
    assert stages.confirmation(VERSIONS, 1, [], QUICK, stages.confirming(0.10), seed=3) == {}


def test_the_budget_stops_the_screen_after_the_fewest_passes(fake_passes):
    jitter = random.Random(3)
    counted = fake_passes(lambda solver, label, index: 1e-4 * math.exp(jitter.gauss(0, 0.5)))  # never decided
    stages.screened(VERSIONS, 1, None, ["cpu"], QUICK, stages.Stopping(0.10, budget_s=0), seed=1,
                    progress=lambda text: None)
    assert len(counted) == stages.MIN_PASSES


def test_the_screen_judges_at_its_rate_over_all_benchmarks_and_the_confirmation_per_flag_with_time_for_each():
    screen, again = stages.Stopping(0.10), stages.confirming(0.10)
    assert screen.alpha(36) == pytest.approx(0.05 / 36) and again.alpha(36) == 0.05
    undecided = [0.3, -0.2, 0.25, -0.1, 0.2, 0.1]
    spent_s = stages.CONFIRMATION_BUDGET_S + 10  # past the budget of one flag, not of many
    assert not again.keeps(undecided, 6, spent_s, benchmarks=1, live=1)
    assert again.keeps(undecided, 6, spent_s, benchmarks=10, live=10)
    assert not again.keeps(undecided, stages.CONFIRMATION_MAX_PASSES, 0, benchmarks=1, live=1)
    assert again.keeps([0.0] * 2, 2, 1e9, benchmarks=1, live=1)  # the fewest passes, whatever the clock
