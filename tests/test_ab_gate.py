"""The A/B gate: verdicts on made-up trials, interleaving with fake workers, versions, and the command end to end."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from perf import ab_gate
from perf.ab_gate import Benchmark, Outcome
from perf.profiles import PROFILES

ROOT = Path(__file__).resolve().parents[1]


def outcome_with(baseline_medians, candidate_medians) -> Outcome:
    """An outcome whose trials have these medians (three equal rounds each)."""
    def trials(medians):
        return [{"rounds_s": [median] * 3} for median in medians]

    return Outcome(Benchmark("tf1_while_loop", "cpu", 1000), iterations=500,
                   trials={"baseline": trials(baseline_medians), "candidate": trials(candidate_medians)})


def verdict_of(baseline_medians, candidate_medians, threshold=0.10):
    return ab_gate.verdict(outcome_with(baseline_medians, candidate_medians), "baseline", "candidate", threshold)


@pytest.mark.parametrize("candidate, expected", [
    ([1.30, 1.25, 1.22, 1.27, 1.26], "regression"),  # every pair slower, the median past +10%
    ([0.70, 0.80, 0.75, 0.78, 0.77], "improvement"),
    ([1.30, 1.25, 0.95, 1.27, 1.26], "inconclusive"),  # past +10%, but one pair says faster
    ([1.05, 1.02, 0.98, 1.03, 1.04], "pass"),  # significantly slower, but within the threshold
])
def test_a_verdict_needs_both_the_threshold_and_an_interval_clear_of_one(candidate, expected):
    row = verdict_of([1.0] * 5, candidate)
    assert row["verdict"] == expected
    assert row["trials"] == 5 and row["low"] <= row["ratio"] <= row["high"]


def test_ratios_pair_trial_with_trial_so_a_drift_common_to_both_cancels():
    # The machine slows over the run for both versions alike: every pair still reads 1.
    drift = [1.0, 1.3, 1.6, 1.2, 1.0]
    row = verdict_of(drift, drift)
    assert row["ratio"] == pytest.approx(1.0) and row["verdict"] == "pass"


def test_problems_become_their_own_verdicts():
    outcome = Outcome(Benchmark("tf1_callable", "cpu", 1000), problem="error on candidate: wrong answer: w = 1")
    assert ab_gate.verdict(outcome, "baseline", "candidate", 0.1)["verdict"] == "error"
    assert ab_gate.failed([{"verdict": "error"}]) and ab_gate.failed([{"verdict": "missing"}])
    assert not ab_gate.failed([{"verdict": "new"}, {"verdict": "inconclusive"}, {"verdict": "improvement"}])


class FakeWorker:
    """Answers like perf/trials.py's worker, from a solver listing; remembers what it was asked."""

    def __init__(self, solvers, unavailable=None, broken=()):
        self.solvers, self.unavailable, self.broken = solvers, unavailable or {}, broken
        self.asked = []

    def ask(self, request):
        self.asked.append(request)
        if request["op"] == "solvers":
            return {"solvers": self.solvers, "unavailable": self.unavailable}
        if request["solver"] in self.broken:
            return {"error": "ValueError: broken"}
        return {"trial": {"rounds_s": [1e-4 * request["iterations"]] * request["max_rounds"]}}


def interleave(baseline: FakeWorker, candidate: FakeWorker, names, trials=3):
    benchmarks = [Benchmark(name, "cpu", 1000) for name in names]
    outcomes = ab_gate.interleaved({"baseline": baseline, "candidate": candidate}, benchmarks, trials, PROFILES["quick"])
    return {outcome.benchmark.solver: outcome for outcome in outcomes}


def test_every_benchmark_gets_its_trials_on_both_versions_at_one_calibrated_count():
    both = {"numpy_loop": ["cpu"], "numpy_lean": ["cpu"]}
    baseline, candidate = FakeWorker(both), FakeWorker(both)
    outcomes = interleave(baseline, candidate, both, trials=3)
    for outcome in outcomes.values():
        assert outcome.problem is None and [len(t) for t in outcome.trials.values()] == [3, 3]
        # 0.1 ms a step: ROUND_S / 1e-4 steps, within the profile's most.
        assert outcome.iterations == min(int(ab_gate.ROUND_S / 1e-4), PROFILES["quick"].iterations)
    counts = {request["iterations"] for request in candidate.asked if request["op"] == "trial"}
    assert counts == {outcomes["numpy_loop"].iterations}  # the candidate never sizes its own rounds


def test_lost_new_skipped_and_broken_benchmarks_are_named_not_timed():
    baseline = FakeWorker({"numpy_loop": ["cpu"], "gone": ["cpu"], "tf1_callable": ["cpu"], "numpy_lean": ["cpu"]},
                          unavailable={"tf1_callable": "tensorflow is not installed"})
    candidate = FakeWorker({"numpy_loop": ["cpu"], "added": ["cpu"], "tf1_callable": ["cpu"], "numpy_lean": ["cpu"]},
                           unavailable={"tf1_callable": "tensorflow is not installed"}, broken=("numpy_lean",))
    outcomes = interleave(baseline, candidate, ["numpy_loop", "gone", "added", "tf1_callable", "numpy_lean"])
    assert outcomes["numpy_loop"].problem is None
    assert outcomes["gone"].problem == "missing" and outcomes["added"].problem == "new"
    assert outcomes["tf1_callable"].problem == "skipped: tensorflow is not installed"
    assert outcomes["numpy_lean"].problem == "error on candidate: ValueError: broken"


def test_a_version_is_the_working_tree_an_interpreter_or_a_revision_in_a_worktree_removed_after():
    with ab_gate.checked_out(".", "candidate") as version:
        assert (version.tree, version.python) == (ab_gate.ROOT, sys.executable)
    with ab_gate.checked_out(sys.executable, "baseline") as version:
        assert version.tree == ab_gate.ROOT and version.description.endswith(sys.executable)
    with ab_gate.checked_out("HEAD", "baseline") as version:
        tree = version.tree
        assert (tree / "solvers" / "__init__.py").is_file() and tree != ab_gate.ROOT
    assert not tree.exists()


def test_a_spec_that_names_nothing_is_refused_with_what_it_may_be():
    with pytest.raises(ab_gate.GateError, match="neither a git revision of this repository.*nor an executable Python"):
        with ab_gate.checked_out("no-such-revision-or-python", "baseline"):
            pass


def gate_command(*args, tmp_path):
    report = tmp_path / "ab.json"
    result = subprocess.run([sys.executable, "-m", "perf.ab_gate", *args, "--json", str(report)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    return result, (json.loads(report.read_text()) if report.exists() else None)


def test_end_to_end_a_gross_injected_slowdown_fails_the_gate_and_is_named(tmp_path):
    # A real 4x slowdown of every timed call of the candidate: far beyond any noise, so this checks the wiring
    # (the slowdown reaches the candidate's worker only, the verdict fails the command), not the machine.
    result, report = gate_command("HEAD", ".", "--solvers", "numpy_lean", "--candidate-slowdown", "*=4",
                                  tmp_path=tmp_path)
    assert result.returncode == ab_gate.FAILED, result.stdout + result.stderr
    assert {row["verdict"] for row in report["rows"]} == {"regression"}
    assert "numpy_lean-cpu-n1000" in result.stdout and "ab-gate FAILED: 2 regression" in result.stdout
    assert "slowed by *=4" in report["candidate"] and "HEAD (" in report["baseline"]


def test_end_to_end_identical_versions_compare_every_benchmark_with_a_ratio(tmp_path):
    result, report = gate_command(".", ".", "--solvers", "numpy_loop", tmp_path=tmp_path)
    assert result.returncode in (0, ab_gate.FAILED), result.stderr  # the verdict is the noise study's to judge
    assert [row["benchmark"] for row in report["rows"]] == ["numpy_loop-cpu-n1000", "numpy_loop-cpu-n100000"]
    assert all(row["trials"] == ab_gate.DEFAULT_TRIALS and row["low"] <= row["ratio"] <= row["high"]
               for row in report["rows"])


def test_end_to_end_a_revision_that_does_not_exist_cannot_be_gated(tmp_path):
    result, report = gate_command("no-such-revision", tmp_path=tmp_path)
    assert result.returncode == ab_gate.CANNOT_GATE and report is None
    assert "ab-gate: cannot gate: 'no-such-revision' is neither a git revision" in result.stderr


def test_a_candidate_that_lost_a_package_the_baseline_had_fails_rather_than_skips():
    listing = {"numpy_loop": ["cpu"], "tf1_callable": ["cpu"]}
    outcomes = interleave(FakeWorker(listing), FakeWorker(listing, unavailable={"tf1_callable": "broken install"}),
                          listing)
    assert outcomes["tf1_callable"].problem == "error on candidate: broken install"


def test_gpu_benchmarks_skip_with_the_reason_where_no_version_sees_a_gpu():
    listing = {"tf1_while_loop": ["cpu", "gpu"]}
    no_gpu = {"solvers": listing, "unavailable": {}, "devices_unavailable": {"gpu": "no GPU visible to TensorFlow"}}
    baseline, candidate = FakeWorker(listing), FakeWorker(listing)
    baseline.ask = candidate.ask = lambda request: no_gpu  # noqa: E731 (only the listing is asked for)
    outcomes = ab_gate.interleaved({"baseline": baseline, "candidate": candidate},
                                   [Benchmark("tf1_while_loop", "gpu", 1000)], 3, PROFILES["quick"])
    assert outcomes[0].problem == "skipped: no GPU visible to TensorFlow"
