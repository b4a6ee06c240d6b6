"""Trials in worker processes, on fake workers that answer as perf/measure/worker.py does: a process per trial, rounds
per trial, the paired timing reference, warm-ups, failures, and the slowdown tool."""

import time
from types import SimpleNamespace

import pytest

from perf.measure import trials as trials_module
from perf.measure.trials import TRIAL_TARGET_S, Measured, TrialError, slowdown_factors, slowed

BENCHMARK = {"solver": "tf1_while_loop", "device": "cpu", "n": 1_000, "steps": 100, "calls": 1}


class FakeWorker:
    """A worker whose solver's call k of a trial (the warm-up is call 0) takes seconds(k) and whose timing reference
    takes reference_s; log gets ("open", pid, warm_up), ("solver", pid) and ("reference", pid) as they happen."""

    def __init__(self, pid, log, seconds, reference_s=0.1, failing=None):
        self.process = SimpleNamespace(pid=pid)
        self.log, self.seconds, self.reference_s, self.failing = log, seconds, reference_s, failing
        self.opened = set()

    def call(self):
        self.log.append(("solver", self.process.pid))
        self.calls += 1
        return self.seconds(self.calls - 1)

    def reference(self):
        self.log.append(("reference", self.process.pid))
        return self.reference_s

    def ask(self, request):
        op = request["op"]
        if op == self.failing:
            return {"error": "DivergenceError: it diverged", "kind": "DivergenceError", "trace": "Traceback ..."}
        if op == "open":
            self.calls, self.with_reference = 0, bool(request["reference_steps"])
            self.log.append(("open", self.process.pid, request["warm_up"]))
            reply = {"setup_s": 0.5, "first_run_s": self.call() if request["warm_up"] else None}
            if self.with_reference and request["warm_up"]:
                self.reference()
            if request["solver"] not in self.opened:
                self.opened.add(request["solver"])
                reply["placement"] = {"/device:CPU:0": 12}
            return reply
        if op == "round":
            side = request.get("reference") if self.with_reference else None
            reply = {"reference_round_s": self.reference()} if side == "before" else {}
            reply["round_s"] = self.call()
            if side == "after":
                reply["reference_round_s"] = self.reference()
            return reply
        self.log.append(("close", self.process.pid))
        return {"closed": True, "fit": {"w": 1.0, "b": 2.0, "loss": 3.0, "iterations": 100}}


def workers(log, seconds, count=3, **options):
    return [FakeWorker(100 + index, log, seconds, **options) for index in range(count)]


def measured(log, seconds, trials=3, max_rounds=4, reference_steps=None, failing=None, **options) -> Measured:
    """The benchmark's trials one after another, trial i on worker i, as the suite's schedule takes them."""
    found = Measured(BENCHMARK, trials, max_rounds, reference_steps, **options)
    for worker in workers(log, seconds, trials, failing=failing):
        found.trial(worker)
    return found


def test_every_trial_runs_in_a_process_of_its_own_and_its_rounds_fill_the_trial_target():
    log = []
    found = measured(log, lambda call: 0.3)
    assert [trial.process for trial in found.trials] == [100, 101, 102]
    assert [entry for entry in log if entry[0] == "open"] == [("open", 100, True), ("open", 101, False),
                                                              ("open", 102, False)]
    assert found.rounds_per_trial == int(TRIAL_TARGET_S / 0.3)
    assert [len(trial.rounds_s) for trial in found.trials] == [found.rounds_per_trial] * 3
    assert found.rounds_s == [0.3] * 3 * found.rounds_per_trial
    # The first trial's placement, the last round's answer (its worker checked it), every trial closed.
    assert found.placement == {"/device:CPU:0": 12} and found.fit["iterations"] == 100
    assert [entry for entry in log if entry[0] == "close"] == [("close", 100), ("close", 101), ("close", 102)]


def test_rounds_per_trial_stay_within_one_and_the_maximum():
    for seconds, expected in ((10.0, 1), (1e-6, 4)):
        assert measured([], lambda call: seconds).rounds_per_trial == expected


def test_a_slow_first_call_is_not_taken_for_the_round_length():
    # The warm-up holds a compile (XLA): rounds are sized on a second call, not on it.
    assert measured([], lambda call: 5.0 if call == 0 else 0.01).rounds_per_trial == 4


def test_with_one_round_a_trial_nothing_is_spent_on_sizing_rounds():
    log = []
    found = measured(log, lambda call: 100.0, trials=1, max_rounds=1)  # the seed profile's rounds take minutes
    assert found.rounds_per_trial == 1
    assert log.count(("solver", 100)) == 2  # the warm-up and the round


def test_reference_rounds_alternate_before_and_after_over_the_whole_benchmark():
    log = []
    found = measured(log, lambda call: 0.3, trials=2, max_rounds=3, reference_steps=100)
    assert found.rounds_per_trial == 3
    calls = [entry[0] for entry in log if entry[0] in ("solver", "reference")]
    # Trial 1: the solver's warm-up, the reference's, then reference before round 1, after round 2, before round 3;
    # trial 2 goes on from there (after its round 1), and warms neither up again.
    assert calls == ["solver", "reference", "reference", "solver", "solver", "reference", "reference", "solver",
                     "solver", "reference", "reference", "solver", "solver", "reference"]
    assert all(trial.reference_rounds_s == [0.1] * 3 for trial in found.trials)


# A first call 30% slower than the rounds is within a run's noise; 60% slower, or ten times (a compile), is not.
@pytest.mark.parametrize("first_call_s, warmed_each_trial", [(0.3, False), (0.39, False), (0.48, True), (3.0, True)])
def test_later_trials_warm_up_at_full_count_only_where_the_first_warm_up_was_slower(first_call_s, warmed_each_trial):
    log = []
    found = measured(log, lambda call: first_call_s if call == 0 else 0.3, max_rounds=1)
    assert found.warm_up_each_trial is warmed_each_trial
    assert all((trial.first_run_s is not None) is warmed_each_trial for trial in found.trials[1:])
    # Each later trial's calls: its round, plus the warm-up when kept.
    assert log.count(("solver", 102)) == 1 + warmed_each_trial


def test_without_the_full_warm_up_every_call_at_the_full_count_is_a_timed_round():
    # The seed profile: a tf1_feed_dict round is long, and the setup's one-step call warms it up.
    log = []
    found = measured(log, lambda call: 25.0, max_rounds=1, reference_steps=100, full_warm_up=False)
    calls = [entry[0] for entry in log if entry[0] in ("solver", "reference")]
    # One reference round beside each timed round (before it, after it, before it), and no other call.
    assert calls == ["reference", "solver", "solver", "reference", "reference", "solver"]
    assert [trial.first_run_s for trial in found.trials] == [None] * 3 and found.warm_up_each_trial is False


def test_without_the_full_warm_up_rounds_are_still_sized_on_a_call():
    found = measured([], lambda call: 0.3, full_warm_up=False)
    assert found.rounds_per_trial == int(TRIAL_TARGET_S / 0.3) and found.trials[0].first_run_s is None


def test_each_round_is_reported_as_it_ends():
    heard = []
    found = measured([], lambda call: 2.5 + call, trials=2, max_rounds=1, on_round=lambda *args: heard.append(args))
    assert heard == [(1, 2, 3.5), (2, 2, found.trials[1].rounds_s[0])]
    # A trial past the planned ones (perf/measure/schedule.py) counts its rounds into the total, never past it.
    found.trial(workers([], lambda call: 2.5, 3)[2])
    assert heard[-1][:2] == (3, 3)


@pytest.mark.parametrize("failing", ["open", "round", "close"])
def test_a_trial_that_fails_in_its_worker_says_how_and_where_and_ends_the_benchmark(failing):
    log = []
    with pytest.raises(TrialError, match="DivergenceError: it diverged") as raised:
        measured(log, lambda call: 0.3, failing=failing)
    assert (raised.value.kind, raised.value.trace) == ("DivergenceError", "Traceback ...")
    assert [entry for entry in log if entry[0] == "open"] == ([] if failing == "open" else [("open", 100, True)])
    if failing == "round":
        assert log[-1] == ("close", 100)  # a trial that opened is closed, whatever failed in it


def test_slowdown_factors_read_names_and_a_wildcard():
    assert slowdown_factors("") == {}
    assert slowdown_factors("tf1_while_loop=1.25, *=1.1") == {"tf1_while_loop": 1.25, "*": 1.1}


@pytest.mark.parametrize("text, message", [("tf1_while_loop", "is not NAME=FACTOR"), ("x=0.5", "at least 1")])
def test_bad_slowdowns_are_refused_with_the_reason(text, message):
    with pytest.raises(ValueError, match=message):
        slowdown_factors(text)


def test_slowdown_reads_the_environment_and_never_applies_by_default(monkeypatch):
    monkeypatch.delenv(trials_module.SLOWDOWN_VARIABLE, raising=False)
    assert trials_module.slowdown_of("numpy_loop") == 1.0
    monkeypatch.setenv(trials_module.SLOWDOWN_VARIABLE, "numpy_loop=2,*=1.5")
    assert trials_module.slowdown_of("numpy_loop") == 2.0 and trials_module.slowdown_of("tf1_callable") == 1.5


def test_a_slowed_call_lasts_at_least_factor_times_its_own_work():
    def run(iterations):
        time.sleep(0.01)
        return iterations

    assert slowed(run, 1.0) is run
    started = time.perf_counter()
    assert slowed(run, 3.0)(7) == 7
    # A lower bound by construction (it waits until then), so no machine is too slow for it.
    assert time.perf_counter() - started >= 0.03
