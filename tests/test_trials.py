"""Trials on a fake clock: fresh setups, rounds per trial, the paired timing reference, warm-ups and the slowdown tool."""

import time
from contextlib import contextmanager

import pytest

from perf.measure import trials as trials_module
from perf.measure.trials import Trials, slowdown_factors, slowed


class FakeClock:
    """perf_counter for perf.measure.trials: advances only when a fake run says it took time."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(trials_module, "time", fake)
    return fake


def recorder(clock, log, name, seconds):
    """A run that logs its calls and costs seconds(call index) of fake time."""
    calls = []

    def run(iterations):
        calls.append(iterations)
        log.append((name, iterations))
        clock.now += seconds(len(calls) - 1)
        return f"{name} fit after {iterations}"

    return run


def schedule(clock, log, solver_seconds, reference_seconds=None, trials=3, max_rounds=4, steps=100, **options):
    setups = []

    @contextmanager
    def open_run(first_trial):
        setups.append(first_trial)
        log.append(("setup", first_trial))
        yield recorder(clock, log, "solver", solver_seconds), 0.5

    @contextmanager
    def open_reference():
        yield recorder(clock, log, "reference", reference_seconds)

    return Trials(open_run, steps, trials, max_rounds, open_reference if reference_seconds else None,
                  **options), setups


def as_pytest_benchmark_drives(trials):
    """Every round, as benchmark.pedantic(trials.call, setup=..., teardown=..., rounds=...) runs them; the last answer."""
    for _ in range(trials.total_rounds):
        args, _ = trials.setup()
        fit = trials.call(*args)
        trials.teardown(*args)
    return fit


def test_every_trial_sets_up_afresh_and_rounds_fill_the_trial_target(clock):
    log = []
    schedule_, setups = schedule(clock, log, lambda call: 0.3)
    with schedule_ as trials:
        fit = as_pytest_benchmark_drives(trials)
    assert setups == [True, False, False]  # placement and other first-trial checks happen once
    assert trials.rounds_per_trial == int(trials_module.TRIAL_TARGET_S / 0.3)
    assert [len(trial.rounds_s) for trial in trials.trials] == [trials.rounds_per_trial] * 3
    assert all(round_s == pytest.approx(0.3) for trial in trials.trials for round_s in trial.rounds_s)
    assert fit == "solver fit after 100"


def test_rounds_per_trial_stay_within_one_and_the_maximum(clock):
    for seconds, expected in ((10.0, 1), (1e-6, 4)):
        schedule_, _ = schedule(clock, [], lambda call: seconds)
        with schedule_ as trials:
            assert trials.rounds_per_trial == expected


def test_a_slow_first_call_is_not_taken_for_the_round_length(clock):
    # The warm-up holds a compile (XLA): rounds are sized on a second call, not on it.
    schedule_, _ = schedule(clock, [], lambda call: 5.0 if call == 0 else 0.01)
    with schedule_ as trials:
        assert trials.rounds_per_trial == 4


def test_with_one_round_a_trial_nothing_is_spent_on_sizing_rounds(clock):
    log = []
    schedule_, _ = schedule(clock, log, lambda call: 100.0, max_rounds=1)  # the seed profile's rounds take minutes
    with schedule_ as trials:
        assert trials.rounds_per_trial == 1
    assert [entry for entry in log if entry[0] == "solver"] == [("solver", 100)]  # the warm-up alone


def test_reference_rounds_alternate_before_and_after_each_timed_round(clock):
    log = []
    schedule_, _ = schedule(clock, log, lambda call: 0.3, reference_seconds=lambda call: 0.1, trials=2, max_rounds=2)
    with schedule_ as trials:
        as_pytest_benchmark_drives(trials)
    rounds = trials.rounds_per_trial
    assert rounds == 2
    timed = [entry for entry in log if entry[0] != "setup"]
    # Trial 1: solver warm-up, reference warm-up, then reference before round 1 and after round 2.
    assert timed[:6] == [("solver", 100), ("reference", 100), ("reference", 100), ("solver", 100),
                         ("solver", 100), ("reference", 100)]
    assert all(len(trial.reference_rounds_s) == rounds for trial in trials.trials)
    assert all(trial.reference_median_s() == pytest.approx(0.1) for trial in trials.trials)


@pytest.mark.parametrize("first_call_s, warmed_each_trial", [(0.3, False), (3.0, True)])
def test_later_trials_warm_up_at_full_count_only_where_the_first_warm_up_was_slower(clock, first_call_s,
                                                                                    warmed_each_trial):
    log = []
    schedule_, _ = schedule(clock, log, lambda call: first_call_s if call == 0 else 0.3, trials=3, max_rounds=1)
    with schedule_ as trials:
        as_pytest_benchmark_drives(trials)
    assert trials.warm_up_each_trial is warmed_each_trial
    later = trials.trials[1:]
    assert all((trial.first_run_s is not None) is warmed_each_trial for trial in later)
    calls_per_trial = [sum(1 for entry in log[index + 1:] if entry[0] == "solver")
                       for index, entry in enumerate(log) if entry[0] == "setup"]
    # Each later trial's calls: its rounds, plus the warm-up when kept (the sizing call is trial 1's only).
    assert calls_per_trial[-1] == 1 + warmed_each_trial


def test_without_the_full_warm_up_every_call_at_the_full_count_is_a_timed_round(clock):
    # The seed profile: a tf1_feed_dict round is ~25 s, and the setup's one-step call warms it up.
    log = []
    schedule_, _ = schedule(clock, log, lambda call: 25.0, reference_seconds=lambda call: 1.0, max_rounds=1,
                            full_warm_up=False)
    with schedule_ as trials:
        as_pytest_benchmark_drives(trials)
    calls = [entry for entry in log if entry[0] != "setup"]
    # One reference round beside each timed round (before it, after it, before it), and no other call.
    assert calls == [("reference", 100), ("solver", 100), ("solver", 100), ("reference", 100),
                     ("reference", 100), ("solver", 100)]
    assert [trial.first_run_s for trial in trials.trials] == [None] * 3 and trials.warm_up_each_trial is False


def test_without_the_full_warm_up_rounds_are_still_sized_on_a_call(clock):
    schedule_, _ = schedule(clock, [], lambda call: 0.3, full_warm_up=False)
    with schedule_ as trials:
        assert trials.rounds_per_trial == int(trials_module.TRIAL_TARGET_S / 0.3)
        assert trials.trials[0].first_run_s is None


def test_each_round_is_reported_as_it_ends(clock):
    heard = []
    schedule_, _ = schedule(clock, [], lambda call: 2.5 + call, trials=2, max_rounds=1,
                            on_round=lambda *args: heard.append(args))
    with schedule_ as trials:
        as_pytest_benchmark_drives(trials)
    assert heard == [(1, 2, pytest.approx(3.5)), (2, 2, pytest.approx(trials.trials[1].rounds_s[0]))]


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
