"""The gate: verdicts on made-up passes, passes and stages on fake workers, the worker protocol, versions, the command."""

import math
import os
import random
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest

from perf.gate import stages
from perf.gate.__main__ import CANNOT_GATE, FAILED
from perf.gate.interleave import (ROUND_S, ROUNDS_PER_TRIAL, Outcome, Problem, benchmarks_of, prepared_outcomes,
                                  round_order, run_pass, started)
from perf.gate.stages import verdicts
from perf.gate.verdict import failed, judged, ruled_out
from perf.gate.versions import ROOT, GateError, Version, checked_out
from perf.measure import Key
from perf.measure.environment import onednn_setting
from perf.measure.profiles import PROFILES
from perf.measure.worker import CPU_VARIABLE
from solvers import tensorflow_support

QUICK = PROFILES["quick"]


def test_a_verdict_needs_an_interval_clear_of_one_and_a_ratio_past_half_the_threshold():
    def verdict_of(*ratios):
        return judged([math.log(ratio) for ratio in ratios], 0.10, 0.05 / 36)

    slower = verdict_of(1.30, 1.25, 1.22, 1.27, 1.26, 1.24, 1.28, 1.25)
    assert slower["verdict"] == "regression" and slower["passes"] == 8 and slower["low"] > 1
    assert slower["coverage"] == pytest.approx(1 - 2 * 0.05 / 36)
    assert verdict_of(0.70, 0.80, 0.75, 0.78, 0.77, 0.76, 0.79, 0.74)["verdict"] == "improvement"
    # Significantly slower, but by less than half the threshold: a 10% slowdown is ruled out.
    assert verdict_of(1.02, 1.03, 1.02, 1.025, 1.03, 1.02, 1.025, 1.03)["verdict"] == "pass"
    noisy = verdict_of(1.30, 0.80, 1.25, 0.95, 1.10, 0.90, 1.20, 1.00)
    assert noisy["verdict"] == "inconclusive" and noisy["detectable"] > 1.10 and "could have detected" in noisy["why"]


def test_a_threshold_slowdown_is_ruled_out_only_when_the_passes_agree():
    assert ruled_out([math.log(ratio) for ratio in (1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01)], 0.10)
    assert not ruled_out([math.log(ratio) for ratio in (1.0, 1.2, 0.9, 1.1, 0.95, 1.15, 1.0, 1.05)], 0.10)
    assert not ruled_out([0.0], 0.10)


def test_problems_become_their_own_verdicts():
    outcome = Outcome(Key("tf1_callable", "cpu", 1000), problem=Problem("error", "error on candidate: wrong answer: w = 1"))
    assert verdicts([outcome], "candidate", stages.Stopping(0.1))[0]["verdict"] == "error"
    assert failed([{"verdict": "error"}]) and failed([{"verdict": "missing"}])
    assert not failed([{"verdict": "new"}, {"verdict": "inconclusive"}, {"verdict": "improvement"},
                       {"verdict": "unconfirmed"}])


class FakeWorker:
    """Answers like perf/measure/worker.py, from a listing {solver: {device: why not, or None}}: each round of solver
    takes seconds(solver, label, round index); remembers every request."""

    def __init__(self, listing, label="baseline", broken=(), seconds=None, log=None):
        self.listing, self.broken, self.label = listing, broken, label
        self.seconds = seconds or (lambda solver, label, index: 1e-4)
        self.version = Version(label, f"the fake {label}", ROOT, sys.executable)
        self.asked, self.log, self.open = [], log if log is not None else [], None

    def ask(self, request):
        self.asked.append(request)
        self.log.append((self.label, request["op"], request.get("solver")))
        if request["op"] == "solvers":
            return {"solvers": self.listing}
        if request["op"] == "round":
            self.open[1] += 1
            return {"round_s": self.seconds(self.open[0], self.label, self.open[1])}
        if request["op"] == "close":
            return {"closed": True}
        if request["solver"] in self.broken:
            return {"error": "ValueError: broken"}
        if request["op"] == "plan":
            return {"steps": min(request["most_steps"], int(ROUND_S / 1e-4)), "calls": 1}
        self.open = [request["solver"], 0]
        return {"setup_s": 0.01, "first_run_s": 1e-4}


def cpu_only(*names, **reasons):
    return {name: {"cpu": reasons.get(name)} for name in names}


def fakes(listing, **options):
    log = []
    return {label: FakeWorker(listing, label, log=log, **options.get(label, {})) for label in ("baseline", "candidate")}


def passes(workers, names, count=4, seed=7):
    """count passes of the fake workers over these cpu benchmarks at n = 1000; the outcomes by solver."""
    outcomes = prepared_outcomes(workers, [Key(name, "cpu", 1000) for name in names], QUICK)
    rng, starts = random.Random(seed), {}
    for pass_index in range(count):
        run_pass(workers, list(workers), outcomes, pass_index, rng, starts)
    return {outcome.key.solver: outcome for outcome in outcomes}


def test_every_benchmark_gets_a_trial_on_both_versions_each_pass_at_one_planned_count():
    both = cpu_only("numpy_loop", "numpy_lean")
    workers = fakes(both)
    outcomes = passes(workers, both, count=3)
    for outcome in outcomes.values():
        assert outcome.problem is None and len(outcome.log_ratios["candidate"]) == 3
        assert outcome.steps == min(int(ROUND_S / 1e-4), QUICK.steps)
        assert all(value == pytest.approx(0.0) for *_, value in outcome.log_ratios["candidate"])
    assert "plan" not in {request["op"] for request in workers["candidate"].asked}  # sized on the baseline only


def test_rounds_are_timed_in_turn_and_the_first_opener_alternates_from_pass_to_pass():
    workers = fakes(cpu_only("numpy_loop"))
    outcome = passes(workers, ["numpy_loop"], count=4)["numpy_loop"]
    log = [(label, op) for label, op, _ in workers["baseline"].log if op in ("open", "round")]
    trials = [log[index:index + 2 + 2 * ROUNDS_PER_TRIAL] for index in range(0, len(log), 2 + 2 * ROUNDS_PER_TRIAL)]
    assert len(trials) == 4
    for trial in trials:
        opener = trial[0][0]
        rounds = [label for label, op in trial if op == "round"]
        other = {"baseline", "candidate"} - {opener}
        # A B, B A, A B, ...: each version first in half the round pairs.
        assert rounds == [opener, *other, *other, opener] * (ROUNDS_PER_TRIAL // 2)
    assert [trial[0][0] for trial in trials].count("baseline") == 2
    assert [opened for _, opened, _ in outcome.log_ratios["candidate"]] == [trial[0][0] == "candidate" for trial in trials]


@pytest.mark.parametrize("versions", [3, 4, 5, 6, 9])
def test_with_more_versions_each_follows_every_other_in_its_rounds_equally_often(versions):
    order = [f"v{index}" for index in range(versions)]
    rows = [round_order(order, index) for index in range(2 * versions)]  # a whole design: n rows, 2n where n is odd
    assert all(sorted(row) == sorted(order) for row in rows)
    follows = Counter((row[position], row[position + 1]) for row in rows for position in range(versions - 1))
    assert len(follows) == versions * (versions - 1) and len(set(follows.values())) == 1


def test_a_drift_common_to_both_versions_cancels_from_the_paired_rounds():
    # Every round slower than the one before, for both versions alike; the candidate 1.2x as slow as the baseline.
    def seconds(solver, label, index):
        return 1e-4 * (1 + index) ** 2 * (1.2 if label == "candidate" else 1.0)

    outcome = passes(fakes(cpu_only("numpy_loop"), baseline={"seconds": seconds}, candidate={"seconds": seconds}),
                     ["numpy_loop"])["numpy_loop"]
    assert all(value == pytest.approx(math.log(1.2)) for *_, value in outcome.log_ratios["candidate"])


def test_lost_new_skipped_and_broken_benchmarks_are_named_not_timed():
    listing = cpu_only("numpy_loop", "tf1_callable", "numpy_lean", tf1_callable="tensorflow is not installed")
    workers = {"baseline": FakeWorker({**listing, **cpu_only("gone")}),
               "candidate": FakeWorker({**listing, **cpu_only("added")}, "candidate", broken=("numpy_lean",))}
    outcomes = passes(workers, ["numpy_loop", "gone", "added", "tf1_callable", "numpy_lean"], count=2)
    assert outcomes["numpy_loop"].problem is None
    assert outcomes["gone"].problem == ("missing", "missing") and outcomes["added"].problem == ("new", "new")
    assert outcomes["tf1_callable"].problem == ("skipped", "skipped: tensorflow is not installed")
    assert outcomes["numpy_lean"].problem == ("error", "error on candidate: ValueError: broken")
    assert workers["candidate"].asked[-1]["op"] == "close"  # a trial that failed is closed all the same


def test_the_benchmarks_come_from_both_registries_so_a_lost_solver_is_not_left_out():
    found = {"baseline": cpu_only("numpy_loop", "gone"), "candidate": cpu_only("numpy_loop", "added")}
    names = {key.solver for key in benchmarks_of(found, None, ["cpu"], QUICK)}
    assert names == {"numpy_loop", "gone", "added"}


def test_a_candidate_that_lost_a_package_the_baseline_had_fails_rather_than_skips():
    workers = {"baseline": FakeWorker(cpu_only("numpy_loop", "tf1_callable")),
               "candidate": FakeWorker(cpu_only("numpy_loop", "tf1_callable", tf1_callable="broken install"), "candidate")}
    assert passes(workers, ["tf1_callable"], count=1)["tf1_callable"].problem == ("error", "error on candidate: broken install")


def test_gpu_benchmarks_skip_with_the_reason_each_package_gives_where_no_version_sees_a_gpu():
    listing = {"tf1_while_loop": {"cpu": None, "gpu": "no GPU visible to TensorFlow"},
               "jax_step": {"cpu": None, "gpu": "no GPU visible to JAX"}}
    outcomes = prepared_outcomes(fakes(listing), [Key("tf1_while_loop", "gpu", 1000), Key("jax_step", "gpu", 1000)],
                                 QUICK)
    assert [outcome.problem.why for outcome in outcomes] == ["skipped: no GPU visible to TensorFlow",
                                                              "skipped: no GPU visible to JAX"]


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


VERSIONS = [Version("baseline", "a", ROOT, sys.executable), Version("candidate", "b", ROOT, sys.executable)]


def fake_workers_for_every_version(monkeypatch, listing, seconds):
    """stages' passes on fake workers, a fresh one per version whatever its label, answering with these round
    times. Returns the (labels, solvers) each pass started its workers with."""
    started = []

    @contextmanager
    def started_for_pass(versions, threads, pass_index, solvers=None):
        started.append(([version.label for version in versions], solvers))
        log = []
        yield {version.label: FakeWorker(listing, version.label, seconds=seconds, log=log) for version in versions}

    monkeypatch.setattr(stages, "started_for_pass", started_for_pass)
    return started


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


def test_a_version_is_the_working_tree_an_interpreter_or_a_revision_in_a_worktree_removed_after():
    with checked_out(".", "candidate") as version:
        assert (version.tree, version.python) == (ROOT, sys.executable)
    with checked_out(sys.executable, "baseline") as version:
        assert version.tree == ROOT and version.description.endswith(sys.executable)
    with checked_out("HEAD", "baseline") as version:
        tree = version.tree
        assert (tree / "solvers" / "__init__.py").is_file() and tree != ROOT
    assert not tree.exists()


def test_a_spec_that_names_nothing_is_refused_with_what_it_may_be():
    with pytest.raises(GateError, match="neither a git revision of this repository.*nor an executable Python"):
        with checked_out("no-such-revision-or-python", "baseline"):
            pass


@pytest.mark.e2e
@pytest.mark.skipif(tensorflow_support.unavailable_reason() is not None, reason="needs TensorFlow")
def test_a_worker_imports_first_then_pins_every_thread_its_sessions_start_to_its_cpu(monkeypatch):
    monkeypatch.setenv(CPU_VARIABLE, "0")  # every machine has a CPU 0
    with started([Version("candidate", "the working tree", ROOT, sys.executable)], 1, ["tf1_callable"]) as workers:
        worker = workers["candidate"]
        worker.ask({"op": "open", "solver": "tf1_callable", "device": "cpu", "n": 1000, "steps": 10, "calls": 1})
        threads = list(Path(f"/proc/{worker.process.pid}/task").iterdir())
        allowed = {(thread / "status").read_text().split("Cpus_allowed_list:")[1].split()[0] for thread in threads}
        worker.ask({"op": "close"})
    assert len(threads) > 1 and allowed == {"0"}  # TensorFlow's pools, started by the session, and the main thread


def test_end_to_end_a_gross_injected_slowdown_fails_the_gate_confirmed_and_named(run_gate):
    # A real 4x slowdown of every timed call of the candidate: far beyond any noise, so this checks the wiring
    # (the slowdown reaches the candidate's workers only, the verdict fails the command), not the machine.
    result, report = run_gate("HEAD", ".", "--solvers", "numpy_lean", "--candidate-slowdown", "*=4", "--passes", "3",
                              "--seed", "5")
    assert result.returncode == FAILED, result.stdout + result.stderr
    assert {row["verdict"] for row in report["rows"]} == {"regression"} and report["seed"] == 5
    assert all(row["why"].startswith("confirmed") for row in report["rows"])
    assert "numpy_lean-cpu-n1000" in result.stdout and "gate FAILED: 2 regression" in result.stdout
    assert "with FSSGD_SLOWDOWN=*=4" in report["candidate"] and "HEAD (" in report["baseline"]
    assert "seed 5 (--seed 5 replays it)" in result.stderr
    setting = onednn_setting(os.environ)  # the gate's, which both versions inherit
    assert report["onednn"] == {"baseline": setting, "candidate": setting} and f"oneDNN: baseline {setting}" in result.stdout


def test_end_to_end_identical_versions_compare_every_benchmark_with_a_ratio(run_gate):
    result, report = run_gate(".", ".", "--solvers", "numpy_loop", "--passes", "3", "--no-confirm")
    # Whether identical versions pass is the noise study's to judge; the exit status must follow the verdicts.
    assert result.returncode in (0, FAILED), result.stderr
    assert (result.returncode == FAILED) == any(row["verdict"] == "regression" for row in report["rows"])
    assert [row["benchmark"] for row in report["rows"]] == ["numpy_loop-cpu-n1000", "numpy_loop-cpu-n100000"]
    assert all(row["passes"] == 3 and row["low"] <= row["ratio"] <= row["high"] for row in report["rows"])
    assert isinstance(report["seed"], int) and len(report["passes"]["numpy_loop-cpu-n1000"]["candidate"]) == 3


def test_end_to_end_a_revision_that_does_not_exist_cannot_be_gated(run_gate):
    result, report = run_gate("no-such-revision")
    assert result.returncode == CANNOT_GATE and report is None
    assert "gate: cannot gate: 'no-such-revision' is neither a git revision" in result.stderr


def test_a_solver_no_version_has_cannot_be_gated():
    found = {"baseline": cpu_only("numpy_loop"), "candidate": cpu_only("numpy_loop")}
    with pytest.raises(GateError, match="--solvers: no version has nope; they have numpy_loop"):
        benchmarks_of(found, ["numpy_loop", "nope"], ["cpu"], QUICK)


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
