"""The gate: verdicts on made-up trials, interleaving with fake workers, the worker protocol, versions, and the command."""

import sys

import pytest

from perf.gate.__main__ import CANNOT_GATE, FAILED
from perf.gate.interleave import DEFAULT_TRIALS, ROUND_S, Outcome, benchmarks_of, interleaved
from perf.gate.verdict import failed, verdict
from perf.gate.versions import ROOT, GateError, Version, checked_out
from perf.gate.worker import started
from perf.measure.profiles import PROFILES
from perf.report.rows import Key

QUICK = PROFILES["quick"]


def outcome_with(baseline_medians, candidate_medians) -> Outcome:
    """An outcome whose trials have these medians (three equal rounds each)."""
    def trials(medians):
        return [{"rounds_s": [median] * 3} for median in medians]

    return Outcome(Key("tf1_while_loop", "cpu", 1000), steps=500,
                   trials={"baseline": trials(baseline_medians), "candidate": trials(candidate_medians)})


def verdict_of(baseline_medians, candidate_medians, threshold=0.10):
    return verdict(outcome_with(baseline_medians, candidate_medians), "baseline", "candidate", threshold)


@pytest.mark.parametrize("candidate, expected", [
    ([1.30, 1.25, 1.22, 1.27, 1.26], "regression"),  # every pair slower, the median past +10%
    ([0.70, 0.80, 0.75, 0.78, 0.77], "improvement"),
    ([1.30, 1.25, 0.95, 1.27, 1.26], "inconclusive"),  # past +10%, but one pair says faster
    ([1.05, 1.02, 0.98, 1.03, 1.04], "pass"),  # significantly slower, but within the threshold
])
def test_a_verdict_needs_both_the_threshold_and_an_interval_clear_of_one(candidate, expected):
    row = verdict_of([1.0] * 5, candidate)
    assert row["verdict"] == expected
    assert row["trials"] == 5 and row["low"] <= row["ratio"] <= row["high"] and row["coverage"] == 0.9375


def test_ratios_pair_trial_with_trial_so_a_drift_common_to_both_cancels():
    # The machine slows over the run for both versions alike: every pair still reads 1.
    drift = [1.0, 1.3, 1.6, 1.2, 1.0]
    row = verdict_of(drift, drift)
    assert row["ratio"] == pytest.approx(1.0) and row["verdict"] == "pass"


def test_problems_become_their_own_verdicts():
    outcome = Outcome(Key("tf1_callable", "cpu", 1000), problem="error on candidate: wrong answer: w = 1")
    assert verdict(outcome, "baseline", "candidate", 0.1)["verdict"] == "error"
    assert failed([{"verdict": "error"}]) and failed([{"verdict": "missing"}])
    assert not failed([{"verdict": "new"}, {"verdict": "inconclusive"}, {"verdict": "improvement"}])


class FakeWorker:
    """Answers like perf/gate/worker.py, from a listing {solver: {device: why not, or None}}; remembers requests."""

    def __init__(self, listing, label="baseline", broken=()):
        self.listing, self.broken = listing, broken
        self.version = Version(label, f"the fake {label}", ROOT, sys.executable)
        self.asked = []

    def ask(self, request):
        self.asked.append(request)
        if request["op"] == "solvers":
            return {"solvers": self.listing}
        if request["solver"] in self.broken:
            return {"error": "ValueError: broken"}
        if request["op"] == "plan":
            return {"steps": min(request["most_steps"], int(ROUND_S / 1e-4)), "calls": 1}
        return {"trial": {"rounds_s": [1e-4 * request["steps"]] * request["rounds"]}}


def cpu_only(*names, **reasons):
    return {name: {"cpu": reasons.get(name)} for name in names}


def interleave(baseline: FakeWorker, candidate: FakeWorker, names, trials=3):
    workers = {"baseline": baseline, "candidate": candidate}
    found = {label: worker.listing for label, worker in workers.items()}
    outcomes = interleaved(workers, found, [Key(name, "cpu", 1000) for name in names], trials, QUICK)
    return {outcome.key.solver: outcome for outcome in outcomes}


def test_every_benchmark_gets_its_trials_on_both_versions_at_one_planned_count():
    both = cpu_only("numpy_loop", "numpy_lean")
    baseline, candidate = FakeWorker(both), FakeWorker(both, "candidate")
    outcomes = interleave(baseline, candidate, both, trials=3)
    for outcome in outcomes.values():
        assert outcome.problem is None and [len(t) for t in outcome.trials.values()] == [3, 3]
        assert outcome.steps == min(int(ROUND_S / 1e-4), QUICK.steps)
    assert {request["op"] for request in candidate.asked} == {"trial"}  # the candidate never plans its own rounds
    assert {request["steps"] for request in candidate.asked} == {outcomes["numpy_loop"].steps}


def test_every_pass_runs_both_versions_of_a_benchmark_back_to_back():
    both = cpu_only("numpy_loop", "numpy_lean", "tf1_callable")
    workers = {"baseline": FakeWorker(both), "candidate": FakeWorker(both, "candidate")}
    order = []
    for label, worker in workers.items():
        ask = worker.ask
        worker.ask = lambda request, label=label, ask=ask: order.append((label, request.get("solver"))) or ask(request)
    interleaved(workers, {label: both for label in workers}, [Key(name, "cpu", 1000) for name in both], 2, QUICK)
    trials = [entry for entry in order if entry[1]][3:]  # past the three plans
    pairs = [trials[index:index + 2] for index in range(0, len(trials), 2)]
    assert all({label for label, _ in pair} == {"baseline", "candidate"} and pair[0][1] == pair[1][1] for pair in pairs)


def test_lost_new_skipped_and_broken_benchmarks_are_named_not_timed():
    baseline = FakeWorker(cpu_only("numpy_loop", "gone", "tf1_callable", "numpy_lean",
                                   tf1_callable="tensorflow is not installed"))
    candidate = FakeWorker(cpu_only("numpy_loop", "added", "tf1_callable", "numpy_lean",
                                    tf1_callable="tensorflow is not installed"), "candidate", broken=("numpy_lean",))
    outcomes = interleave(baseline, candidate, ["numpy_loop", "gone", "added", "tf1_callable", "numpy_lean"])
    assert outcomes["numpy_loop"].problem is None
    assert outcomes["gone"].problem == "missing" and outcomes["added"].problem == "new"
    assert outcomes["tf1_callable"].problem == "skipped: tensorflow is not installed"
    assert outcomes["numpy_lean"].problem == "error on candidate: ValueError: broken"


def test_the_benchmarks_come_from_both_registries_so_a_lost_solver_is_not_left_out():
    found = {"baseline": cpu_only("numpy_loop", "gone"), "candidate": cpu_only("numpy_loop", "added")}
    names = {key.solver for key in benchmarks_of(found, None, ["cpu"], QUICK)}
    assert names == {"numpy_loop", "gone", "added"}


def test_a_candidate_that_lost_a_package_the_baseline_had_fails_rather_than_skips():
    listing = cpu_only("numpy_loop", "tf1_callable")
    outcomes = interleave(FakeWorker(listing),
                          FakeWorker(cpu_only("numpy_loop", "tf1_callable", tf1_callable="broken install"), "candidate"),
                          listing)
    assert outcomes["tf1_callable"].problem == "error on candidate: broken install"


def test_gpu_benchmarks_skip_with_the_reason_each_package_gives_where_no_version_sees_a_gpu():
    listing = {"tf1_while_loop": {"cpu": None, "gpu": "no GPU visible to TensorFlow"},
               "jax_step": {"cpu": None, "gpu": "no GPU visible to JAX"}}
    workers = {"baseline": FakeWorker(listing), "candidate": FakeWorker(listing, "candidate")}
    outcomes = interleaved(workers, {label: listing for label in workers},
                           [Key("tf1_while_loop", "gpu", 1000), Key("jax_step", "gpu", 1000)], 3, QUICK)
    assert [outcome.problem for outcome in outcomes] == ["skipped: no GPU visible to TensorFlow",
                                                          "skipped: no GPU visible to JAX"]


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
def test_the_worker_says_per_solver_and_device_why_it_cannot_run_and_answers_checked_trials():
    with started([Version("candidate", "the working tree", ROOT, sys.executable)], threads=1) as workers:
        worker = workers["candidate"]
        listing = worker.ask({"op": "solvers"})["solvers"]
        plan = worker.ask({"op": "plan", "solver": "numpy_lean", "device": "cpu", "n": 1000, "most_steps": 100,
                           "round_s": 0.01, "probe_steps": 10, "most_calls": 50})
        trial = worker.ask({"op": "trial", "solver": "numpy_lean", "device": "cpu", "n": 1000, **plan, "rounds": 2})
        missing = worker.ask({"op": "trial", "solver": "nope", "device": "cpu", "n": 1000, **plan, "rounds": 2})
    assert listing["numpy_loop"] == {"cpu": None}
    # Each package answers for its own GPU, so a version where TensorFlow sees one and JAX does not skips jax_step.
    import solvers
    assert listing["jax_step"]["gpu"] == solvers.get("jax_step").unavailable_reason("gpu")
    assert plan["steps"] == 100 and plan["calls"] >= 1
    assert len(trial["trial"]["rounds_s"]) == 2 and trial["trial"]["setup_s"] > 0
    assert missing == {"missing": "no solver nope in this version"}


def test_end_to_end_a_gross_injected_slowdown_fails_the_gate_and_is_named(run_gate):
    # A real 4x slowdown of every timed call of the candidate: far beyond any noise, so this checks the wiring
    # (the slowdown reaches the candidate's worker only, the verdict fails the command), not the machine.
    result, report = run_gate("HEAD", ".", "--solvers", "numpy_lean", "--candidate-slowdown", "*=4")
    assert result.returncode == FAILED, result.stdout + result.stderr
    assert {row["verdict"] for row in report["rows"]} == {"regression"}
    assert "numpy_lean-cpu-n1000" in result.stdout and "gate FAILED: 2 regression" in result.stdout
    assert "slowed by *=4" in report["candidate"] and "HEAD (" in report["baseline"]


def test_end_to_end_identical_versions_compare_every_benchmark_with_a_ratio(run_gate):
    result, report = run_gate(".", ".", "--solvers", "numpy_loop")
    assert result.returncode in (0, FAILED), result.stderr  # the verdict is the noise study's to judge
    assert [row["benchmark"] for row in report["rows"]] == ["numpy_loop-cpu-n1000", "numpy_loop-cpu-n100000"]
    assert all(row["trials"] == DEFAULT_TRIALS and row["low"] <= row["ratio"] <= row["high"] for row in report["rows"])


def test_end_to_end_a_revision_that_does_not_exist_cannot_be_gated(run_gate):
    result, report = run_gate("no-such-revision")
    assert result.returncode == CANNOT_GATE and report is None
    assert "gate: cannot gate: 'no-such-revision' is neither a git revision" in result.stderr


def test_a_solver_no_version_has_cannot_be_gated():
    found = {"baseline": cpu_only("numpy_loop"), "candidate": cpu_only("numpy_loop")}
    with pytest.raises(GateError, match="--solvers: no version has nope; they have numpy_loop"):
        benchmarks_of(found, ["numpy_loop", "nope"], ["cpu"], QUICK)
