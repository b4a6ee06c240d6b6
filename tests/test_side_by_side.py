"""Several versions in the same passes (perf/research/side_by_side.py) on fake workers: each candidate judged on the
passes its own gate would have given it, its own clock, and each confirmed only on its own flags; one candidate
timed and judged as the gate itself would."""

import math
import random
import re
import sys
import time
from collections import Counter

import pytest
from gate_fakes import QUICK, VERSIONS, cpu_only, fake_workers_for_every_version

from perf.gate import stages
from perf.gate.interleave import alternated
from perf.gate.versions import ROOT, Version
from perf.measure import Key
from perf.research import side_by_side
from perf.research.side_by_side import SideBySide


def test_confirmation_measures_each_version_only_on_its_own_flags_beside_the_baseline(monkeypatch):
    started = fake_workers_for_every_version(monkeypatch, cpu_only("numpy_loop", "numpy_lean"),
                                             lambda solver, label, index: 1e-4 * (1.5 if label == "A" else 1.0))
    versions = [Version(label, label, ROOT, sys.executable) for label in ("baseline", "A", "B")]
    lean = Key("numpy_lean", "cpu", 1000)
    found = side_by_side.confirmation(versions, 1, {"A": [lean], "B": []}, QUICK, stages.confirming(0.10), seed=3,
                                progress=lambda text: None)
    assert set(found) == {"A"} and set(found["A"]) == {lean.name} and found["A"][lean.name].verdict == "regression"
    # B flagged nothing: it is not started; numpy_loop, flagged by nobody, is not measured.
    assert {tuple(labels) for labels, _ in started} <= {("baseline", "A"), ("A", "baseline")}
    assert all(solvers == ["numpy_lean"] for _, solvers in started) and len(started) == stages.CONFIRMATION_MIN_PASSES
    assert side_by_side.confirmation(versions, 1, {"A": [], "B": []}, QUICK, stages.confirming(0.10), seed=3) == {}


def test_each_variant_timed_in_the_same_passes_is_judged_on_the_passes_its_own_gate_would_have_given(monkeypatch):
    jitter = random.Random(5)

    def seconds(solver, label, index):
        if label == "noisy":  # never decided: its gate times it to the most passes
            return 1e-4 * math.exp(jitter.gauss(0, 0.5))
        return 1e-4 * (1 + 0.01 * jitter.random()) * (1.5 if label == "slower" else 1.0)

    started = fake_workers_for_every_version(monkeypatch, cpu_only("numpy_lean"), seconds)
    versions = [Version(label, label, ROOT, sys.executable) for label in ("baseline", "slower", "noisy")]
    screen = stages.Stopping(0.10, max_passes=12)
    timed = side_by_side.measured(versions, 1, lambda workers: [Key("numpy_lean", "cpu", 1000)], QUICK, 1, screen,
                                  lambda text: None)
    (outcome,) = timed.outcomes
    # Timed 12 times for the noisy copy's sake; the slower one's gate stopped it, decided, at the fewest passes, and
    # with nothing left open for it the slower copy's worker is started no more.
    assert timed.gate_passes == {("slower", outcome.key): stages.MIN_PASSES, ("noisy", outcome.key): 12}
    assert len(outcome.log_ratios["slower"]) == stages.MIN_PASSES and len(outcome.log_ratios["noisy"]) == 12
    assert [labels for labels, _ in started] == ([["baseline", "slower", "noisy"]] * stages.MIN_PASSES
                                                 + [["baseline", "noisy"]] * (12 - stages.MIN_PASSES))
    (row,) = timed.verdicts("slower", screen)
    assert row.verdict == "regression" and row.passes == stages.MIN_PASSES
    assert timed.verdicts("noisy", screen)[0].passes == 12


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
    passes = side_by_side.measured(versions, 1, lambda workers: keys, QUICK, 1, screen, lambda text: None).gate_passes
    loop, lean = keys
    # A decided numpy_loop in 8 passes (96 s), then timed only numpy_lean, which costs nothing: 20 passes.
    assert passes["A", loop] == 8 and passes["A", lean] == 20
    # B went on with numpy_loop: one pass more starts within its 100 s, none after.
    assert passes["B", loop] == 9 and passes["B", lean] == 8


def test_a_candidate_its_gate_has_decided_is_not_reopened_by_passes_timed_for_another(monkeypatch):
    jitter, rounds = random.Random(7), {}

    def seconds(solver, label, index):
        rounds[label, solver] = rounds.get((label, solver), 0) + 1
        # "steady" decides numpy_lean (CLEAR) in its gate's fewest passes but never numpy_loop, so its worker stays in
        # the passes the noisy copy's gate goes on to take numpy_lean to: those passes' values are not its gate's, and
        # would leave numpy_lean undecided if they were counted.
        calm = (label, solver) == ("steady", "numpy_lean") and rounds[label, solver] <= stages.MIN_PASSES * 6
        return 1e-4 * math.exp(jitter.gauss(0, 0.001 if calm or label == "baseline" else 0.5))

    fake_workers_for_every_version(monkeypatch, cpu_only("numpy_loop", "numpy_lean"), seconds)
    versions = [Version(label, label, ROOT, sys.executable) for label in ("baseline", "steady", "noisy")]
    loop, lean = Key("numpy_loop", "cpu", 1000), Key("numpy_lean", "cpu", 1000)
    timed = side_by_side.measured(versions, 1, lambda workers: [loop, lean], QUICK, 1,
                                  stages.Stopping(0.10, max_passes=12), lambda text: None)
    assert len(timed.outcomes[1].log_ratios["steady"]) == 12  # timed in every pass, for the noisy copy's sake
    assert timed.gate_passes[("steady", lean)] == stages.MIN_PASSES and timed.gate_passes[("noisy", lean)] == 12
    assert timed.verdicts("steady", stages.Stopping(0.10))[1].verdict == "clear"


def test_one_candidate_side_by_side_is_timed_and_judged_as_the_gate_itself_would_on_the_same_seed(monkeypatch):
    # numpy_loop slowed on the candidate (flagged, then confirmed), numpy_lean never decided, every round a second on
    # the clock: numpy_lean is timed until the budget ends it, so both clocks must agree to the pass.
    screen, again = stages.Stopping(0.10, max_passes=12, budget_s=300), stages.confirming(0.10)

    def passes_of(measure):
        now, jitter, said = [0.0], random.Random(5), []

        def seconds(solver, label, index):
            now[0] += 1
            spread, slower = (0.5, 1.0) if solver == "numpy_lean" else (0.01, 1.3 if label == "candidate" else 1.0)
            return 1e-4 * math.exp(jitter.gauss(0, spread)) * slower

        started = fake_workers_for_every_version(monkeypatch, cpu_only("numpy_loop", "numpy_lean"), seconds)
        monkeypatch.setattr(time, "perf_counter", lambda: now[0])
        return (*measure(said.append), started, [re.sub(r"(\d+) s in all$", r"candidate \1 s", line) for line in said])

    def gate(say):
        outcomes = stages.screened(VERSIONS, 1, None, ["cpu"], QUICK, screen, 1, say)
        rows = stages.verdicts(outcomes, "candidate", screen)
        confirmed = stages.confirmation(VERSIONS, 1, stages.flagged_keys(outcomes, rows), QUICK, again, 2, say)
        return outcomes, rows, {outcome.key: len(outcome.log_ratios["candidate"]) for outcome in outcomes}, confirmed

    def research(say):
        timed = side_by_side.measured(VERSIONS, 1, stages.benchmarks_named(None, ["cpu"], QUICK), QUICK, 1, screen, say)
        rows = timed.verdicts("candidate", screen)
        flagged = {"candidate": stages.flagged_keys(timed.outcomes, rows)}
        confirmed = side_by_side.confirmation(VERSIONS, 1, flagged, QUICK, again, 2, say)["candidate"]
        return timed.outcomes, rows, {key: passes for (_, key), passes in timed.gate_passes.items()}, confirmed

    gates, side_by_sides = passes_of(gate), passes_of(research)
    _, rows, passes, confirmed, _, _ = gates
    assert {row.verdict for row in rows} == {"regression", "inconclusive"}
    assert sorted(set(passes.values())) == [stages.MIN_PASSES, 8]  # 48 s a pass of both, 24 s one of numpy_lean
    assert {row.verdict for row in confirmed.values()} == {"regression"}
    assert side_by_sides == gates


@pytest.mark.parametrize("versions", [2, 3, 4, 5, 6, 9])
def test_with_more_versions_each_follows_every_other_in_its_rounds_equally_often(versions):
    order = [f"v{index}" for index in range(versions)]
    rows = [SideBySide.round_order(order, index) for index in range(2 * versions)]  # n rows, 2n where n is odd
    assert all(sorted(row) == sorted(order) for row in rows)
    follows = Counter((row[position], row[position + 1]) for row in rows for position in range(versions - 1))
    assert len(follows) == versions * (versions - 1) and len(set(follows.values())) == 1
    if versions == 2:  # the gate's own: A B, B A
        assert rows == [alternated(order, index) for index in range(4)]
