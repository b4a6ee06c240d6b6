"""The gate: verdicts on made-up passes, passes and stages on fake workers, the worker protocol, versions, the command."""

import math
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest

from perf.gate import stages
from perf.gate.__main__ import CANNOT_GATE, FAILED
from perf.gate.interleave import (ROUND_S, ROUNDS_PER_TRIAL, Outcome, benchmarks_of, prepared_outcomes, round_order,
                                  run_pass, started)
from perf.gate.neighbour import noisy_neighbour
from perf.gate.stages import verdicts
from perf.gate.verdict import failed, judged, ruled_out
from perf.gate.versions import ROOT, GateError, Version, checked_out
from perf.measure.profiles import PROFILES
from perf.measure.worker import CPU_VARIABLE
from perf.report.rows import Key
from solvers import tensorflow_support
from solvers.tensorflow_support import onednn_setting

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
    outcome = Outcome(Key("tf1_callable", "cpu", 1000), problem="error on candidate: wrong answer: w = 1")
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
    assert outcomes["gone"].problem == "missing" and outcomes["added"].problem == "new"
    assert outcomes["tf1_callable"].problem == "skipped: tensorflow is not installed"
    assert outcomes["numpy_lean"].problem == "error on candidate: ValueError: broken"
    assert workers["candidate"].asked[-1]["op"] == "close"  # a trial that failed is closed all the same


def test_the_benchmarks_come_from_both_registries_so_a_lost_solver_is_not_left_out():
    found = {"baseline": cpu_only("numpy_loop", "gone"), "candidate": cpu_only("numpy_loop", "added")}
    names = {key.solver for key in benchmarks_of(found, None, ["cpu"], QUICK)}
    assert names == {"numpy_loop", "gone", "added"}


def test_a_candidate_that_lost_a_package_the_baseline_had_fails_rather_than_skips():
    workers = {"baseline": FakeWorker(cpu_only("numpy_loop", "tf1_callable")),
               "candidate": FakeWorker(cpu_only("numpy_loop", "tf1_callable", tf1_callable="broken install"), "candidate")}
    assert passes(workers, ["tf1_callable"], count=1)["tf1_callable"].problem == "error on candidate: broken install"


def test_gpu_benchmarks_skip_with_the_reason_each_package_gives_where_no_version_sees_a_gpu():
    listing = {"tf1_while_loop": {"cpu": None, "gpu": "no GPU visible to TensorFlow"},
               "jax_step": {"cpu": None, "gpu": "no GPU visible to JAX"}}
    outcomes = prepared_outcomes(fakes(listing), [Key("tf1_while_loop", "gpu", 1000), Key("jax_step", "gpu", 1000)],
                                 QUICK)
    assert [outcome.problem for outcome in outcomes] == ["skipped: no GPU visible to TensorFlow",
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
    assert result.returncode in (0, FAILED), result.stderr  # the verdict is the noise study's to judge
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


def test_the_noisy_neighbour_loads_another_cpu_and_stops_with_its_block():
    worker_cpu = max(os.sched_getaffinity(0))
    with noisy_neighbour(worker_cpu) as cpus:
        assert worker_cpu not in cpus or cpus == [worker_cpu]
        children = subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True, text=True).stdout.split()
        assert children
    time.sleep(0.2)
    assert not set(children) & set(subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True,
                                                   text=True).stdout.split())


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


def test_the_passes_the_noise_study_says_a_slowdown_needs_catch_it_with_the_gates_power():
    from perf.gate.noise_study import passes_needed
    from perf.gate.verdict import FALSE_ALARM_RATE, POWER

    spread, benchmarks, rng = 0.05, 36, random.Random(7)
    needed = passes_needed(spread, 0.10, benchmarks)

    def caught(passes):
        draws = [[rng.gauss(math.log(1.1), spread) for _ in range(passes)] for _ in range(400)]
        return sum(judged(values, 0.10, FALSE_ALARM_RATE / benchmarks)["verdict"] == "regression"
                   for values in draws) / len(draws)

    assert 8 < needed < 16
    assert caught(needed) >= POWER - 0.03
    assert caught(needed // 2) < POWER - 0.1


def test_the_noise_study_counts_each_comparison_by_what_it_tests_and_takes_a_pass_spread_from_all_its_passes():
    from perf.gate.noise_study import pass_spreads, tallies

    values = [0.03, -0.05, 0.01, 0.06, -0.02, 0.0, 0.04, -0.07]
    row = {**judged(values, 0.10, 0.05 / 36), "benchmark": "numpy_loop-cpu-n1000"}
    flagged = {"verdict": "regression", "ratio": 1.2, "passes": 8}
    repeat = {"neighbour": True,
              "screening": {"A/A-1": {"numpy_loop-cpu-n1000": row, "tf1_callable-cpu-n1000": flagged},
                            "code: an extra fetch every Session.run": {"tf1_feed_dict-cpu-n1000": flagged,
                                                                       "numpy_loop-cpu-n1000": flagged},
                            "x1.1": {"torch_eager-cpu-n1000": {"verdict": "skipped"}}},
              "confirmation": {"A/A-1": {"tf1_callable-cpu-n1000": {"verdict": "pass"}},
                               "code: an extra fetch every Session.run": {"tf1_feed_dict-cpu-n1000": flagged,
                                                                          "numpy_loop-cpu-n1000": flagged}},
              "values": {"A/A-1": {"numpy_loop-cpu-n1000": values}, "x1.1": {"numpy_loop-cpu-n1000": [0.1, 0.5]}}}
    found = tallies([repeat])
    assert found["identical copies (A/A), noisy neighbour"]["tf1_callable-cpu-n1000"] == [1, 1, 0, 0, 0]
    assert found["code: an extra fetch every Session.run, noisy neighbour"]["tf1_feed_dict-cpu-n1000"][:3] == [1, 1, 1]
    assert found["benchmarks a code regression leaves alone, noisy neighbour"]["numpy_loop-cpu-n1000"][:3] == [1, 1, 1]
    assert not any(kind.startswith("slowed") for kind in found)
    assert pass_spreads([repeat])["numpy_loop-cpu-n1000"] == pytest.approx(statistics.stdev(values))


def test_slowed_groups_split_the_solvers_into_copies_each_counted_as_slowed_only_where_it_slows():
    from perf.gate.noise_study import kind_of, slowed_copies
    from perf.measure.trials import slowdown_factors

    names = ["numpy_loop", "tf1_feed_dict", "tf1_while_loop", "numba_fused", "jax_step"]
    copies = slowed_copies(1.1, 2, ",".join(names))
    slowed = [slowdown_factors(spec) for _, spec in copies]
    assert [label for label, _ in copies] == ["x1.1 (1 of 2)", "x1.1 (2 of 2)"]
    assert sorted(name for factors in slowed for name in factors) == sorted(names)  # each solver in one group
    assert all(set(factors.values()) == {1.1} for factors in slowed)
    assert slowed_copies(1.25, 1, ",".join(names)) == [("x1.25", "*=1.25")]
    label, spec = copies[0]
    assert kind_of(label, "numpy_loop-cpu-n1000", spec) == "slowed 1.1x, a group of solvers at a time"
    assert kind_of(label, "tf1_feed_dict-cpu-n1000", spec) == "benchmarks a slowdown of other solvers leaves alone"
    assert kind_of("x1.25", "tf1_feed_dict-cpu-n1000", "*=1.25") == "slowed 1.25x"
    assert kind_of("x1.1", "tf1_feed_dict-cpu-n1000") == "slowed 1.1x"  # a repeat from before it kept its factors


def test_a_replay_with_the_screens_own_rule_gives_its_verdicts_back_and_a_smaller_first_count_saves_passes():
    from perf.gate.noise_study import replayed

    steady = [0.01, -0.01, 0.0, 0.005, -0.005, 0.01, 0.0, -0.01]  # decided (PASS) at any count
    slowed = [math.log(1.1) + value for value in steady]  # decided (REGRESSION) at any count
    noisy = [0.3, -0.3, 0.2, -0.2, 0.3, -0.1, 0.25, -0.3, 0.1, -0.2]  # never decided
    rows = {"a-cpu-n1": steady, "b-cpu-n1": noisy}
    repeat = {"neighbour": False, "factors": {"A/A-1": "", "x1.1": "*=1.1"},
              "values": {"A/A-1": rows, "x1.1": {"a-cpu-n1": slowed, "b-cpu-n1": noisy}}, "confirmation": {}}
    repeat["screening"] = {label: {name: {**judged(values[:len(values) if name == "b-cpu-n1" else 8], 0.10, 0.05 / 2),
                                          "benchmark": name} for name, values in by_name.items()}
                           for label, by_name in repeat["values"].items()}
    again = replayed([repeat], 8)  # the rule the rows were judged with
    assert all(tally[4] == 0 and tally[5] == tally[6] for tally in again.values())  # the rule it ran with: no change
    sooner = replayed([repeat], 5)
    assert sooner["identical copies (A/A), quiet"][:5] == [2, 0, 0, 1, 0]  # steady PASS, noisy INCONCLUSIVE, as before
    assert sooner["identical copies (A/A), quiet"][5:] == [5 + 10, 8 + 10]  # steady stopped at 5; noisy to its end
    assert sooner["slowed 1.1x, quiet"][1] == 1


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


def test_the_resampled_pools_are_the_identical_copies_passes_each_also_negated():
    from perf.gate.noise_study import exchangeable_pools

    repeat = {"neighbour": False, "values": {"A/A-1": {"a-cpu-n1": [0.05, -0.02]}, "A/A-2": {"a-cpu-n1": [0.01]},
                                             "x1.1": {"a-cpu-n1": [0.5, 0.6]}}}
    other = {"neighbour": True, "values": {"A/A-1": {"a-cpu-n1": [0.3]}}}
    pools = exchangeable_pools([repeat, other])
    assert sorted(pools["quiet"]["a-cpu-n1"]) == [-0.05, -0.02, -0.01, 0.01, 0.02, 0.05]  # no slowed copy, no offset
    assert sorted(pools["noisy neighbour"]["a-cpu-n1"]) == [-0.3, 0.3]


def test_resampled_comparisons_follow_the_gates_rule_screen_then_confirmation():
    from perf.gate.noise_study import resampled

    def repeat(values):
        return {"neighbour": True, "values": {"A/A-1": {"a-cpu-n1": values, "b-cpu-n1": [0.0, 0.001]}}}

    steady = resampled([repeat([0.01, -0.01, 0.005, -0.005])], 20)["noisy neighbour"]["a-cpu-n1"]
    assert steady[1.0] == [("pass", stages.MIN_PASSES)] * 20
    assert steady[1.1] == [("confirmed", stages.MIN_PASSES)] * 20
    wild = resampled([repeat([1.0, -1.0, 0.5, -0.5])], 5)["noisy neighbour"]["a-cpu-n1"]
    assert wild[1.0] == [("inconclusive", stages.MAX_PASSES)] * 5


def test_a_slowdown_of_the_threshold_is_seldom_passed_where_the_passes_scatter_widely():
    # The gate looks at a benchmark pass after pass and stops at the first verdict, so the chance that a slowdown of
    # exactly the threshold is "ruled out" adds up over its looks: RULED_OUT is strict enough that a benchmark
    # scattering by 0.1 a pass (about the noisiest seen, docs/results/gate-design.md section 10) is still caught.
    from perf.gate.noise_study import resampled

    rng = random.Random(3)
    scatter = [rng.gauss(0, 0.1) for _ in range(3000)]
    repeat = {"neighbour": False, "values": {"A/A-1": {f"b{index}-cpu-n1": scatter for index in range(36)}}}
    found = resampled([repeat], 30, seed=5)["quiet"]  # 36 benchmarks: the gate's level for each is CI's
    outcomes = Counter(outcome for factors in found.values() for outcome, _ in factors[1.1])
    assert outcomes["pass"] / outcomes.total() < 0.02 and outcomes["confirmed"] / outcomes.total() > 0.95
