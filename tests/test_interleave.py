"""The gate's passes (perf/gate/interleave.py) on fake workers, and a real worker's pinning."""

import math
import sys
from pathlib import Path

import pytest
from gate_fakes import QUICK, FakeWorker, cpu_only, fakes, passes

from perf.gate.interleave import (ROUND_S, ROUNDS_PER_TRIAL, benchmarks_of, listings, prepared_outcomes,
                                  workers_running)
from perf.gate.versions import ROOT, GateUsageError, Version
from perf.measure import Key
from perf.measure.cpus import AFFINITY_VARIABLE
from solvers import packages


def test_every_benchmark_gets_a_trial_on_both_versions_each_pass_at_one_planned_count():
    both = cpu_only("numpy_loop", "numpy_lean")
    workers = fakes(both)
    outcomes = passes(workers, both, count=3)
    for outcome in outcomes.values():
        assert outcome.unjudged is None and len(outcome.log_ratios["candidate"]) == 3
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
    assert outcomes["numpy_loop"].unjudged is None
    assert outcomes["gone"].unjudged == ("missing", "missing") and outcomes["added"].unjudged == ("new", "new")
    assert outcomes["tf1_callable"].unjudged == ("skipped", "skipped: tensorflow is not installed")
    assert outcomes["numpy_lean"].unjudged == ("error", "error on candidate: ValueError: broken")
    assert workers["candidate"].asked[-1]["op"] == "close"  # a trial that failed is closed all the same


def test_the_benchmarks_come_from_both_registries_so_a_lost_solver_is_not_left_out():
    found = {"baseline": cpu_only("numpy_loop", "gone"), "candidate": cpu_only("numpy_loop", "added")}
    names = {key.solver for key in benchmarks_of(found, None, ["cpu"], QUICK)}
    assert names == {"numpy_loop", "gone", "added"}


def test_a_candidate_that_lost_a_package_the_baseline_had_fails_rather_than_skips():
    workers = {"baseline": FakeWorker(cpu_only("numpy_loop", "tf1_callable")),
               "candidate": FakeWorker(cpu_only("numpy_loop", "tf1_callable", tf1_callable="broken install"), "candidate")}
    assert passes(workers, ["tf1_callable"], count=1)["tf1_callable"].unjudged == ("error", "error on candidate: broken install")


def test_gpu_benchmarks_skip_with_the_reason_each_package_gives_where_no_version_sees_a_gpu():
    listing = {"tf1_while_loop": {"cpu": None, "gpu": "no GPU visible to TensorFlow"},
               "jax_step": {"cpu": None, "gpu": "no GPU visible to JAX"}}
    workers = fakes(listing)
    outcomes = prepared_outcomes(workers, [Key("tf1_while_loop", "gpu", 1000), Key("jax_step", "gpu", 1000)], QUICK,
                                 listings(workers, ["jax_step", "tf1_while_loop"]))
    assert [outcome.unjudged.why for outcome in outcomes] == ["skipped: no GPU visible to TensorFlow",
                                                              "skipped: no GPU visible to JAX"]


def test_a_solver_no_version_has_cannot_be_gated():
    found = {"baseline": cpu_only("numpy_loop"), "candidate": cpu_only("numpy_loop")}
    with pytest.raises(GateUsageError, match=r"--solvers: no version has nope \(this tree's solvers: numpy_loop, "):
        benchmarks_of(found, ["numpy_loop", "nope"], ["cpu"], QUICK)


@pytest.mark.e2e
@pytest.mark.skipif(packages.unavailable_reason("tensorflow") is not None, reason="needs TensorFlow")
def test_a_worker_imports_first_then_pins_every_thread_its_sessions_start_to_its_cpu(monkeypatch):
    monkeypatch.setenv(AFFINITY_VARIABLE, "0")  # every machine has a CPU 0
    with workers_running([Version("candidate", "the working tree", ROOT, sys.executable)], 1,
                         ["tf1_callable"]) as workers:
        worker = workers["candidate"]
        worker.ask({"op": "open", "solver": "tf1_callable", "device": "cpu", "n": 1000, "steps": 10, "calls": 1})
        threads = list(Path(f"/proc/{worker.process.pid}/task").iterdir())
        allowed = {(thread / "status").read_text().split("Cpus_allowed_list:")[1].split()[0] for thread in threads}
        worker.ask({"op": "close"})
    assert len(threads) > 1 and allowed == {"0"}  # TensorFlow's pools, started by the session, and the main thread
