"""perf.measure's one path for a solver's run: setup apart, placement checked, rounds sized, answers checked."""

import json
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

import solvers
from perf.measure import solver_runs
from perf.measure import trials as trials_module
from perf.measure.schedule import budgeted_steps
from perf.measure.profiles import Profile
from perf.measure.solver_runs import (PROBE_CALLS, Misplaced, answer_mismatch, check_placement, one_significant_digit,
                                      prepared, round_plan)
from solvers.problem import Fit, seed_problem


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


def fake_run(monkeypatch, step_s, per_call_s=0.0):
    """A run whose call of K steps takes per_call_s + K·step_s of fake time; it logs the step counts it ran."""
    clock, calls = FakeClock(), []
    monkeypatch.setattr(trials_module, "time", clock)

    def run(steps):
        calls.append(steps)
        clock.now += per_call_s + steps * step_s

    return run, calls


def test_a_round_that_fits_runs_every_step_and_a_longer_one_fewer_with_one_significant_digit(monkeypatch):
    run, calls = fake_run(monkeypatch, step_s=1e-4)
    assert round_plan(run, most_steps=100, round_s=0.03, probe_steps=10) == (100, 1, pytest.approx(0.01))
    assert calls == [10] * (1 + PROBE_CALLS)  # a warm-up, then the probes
    # 3,750 steps would fit; 3,000 read as chosen.
    assert round_plan(run, most_steps=100_000, round_s=0.375, probe_steps=10)[:2] == (3_000, 1)
    # Never fewer steps than the probe ran.
    assert round_plan(run, most_steps=100_000, round_s=1e-6, probe_steps=10)[:2] == (10, 1)


def test_calls_fill_a_round_that_one_call_of_every_step_leaves_short(monkeypatch):
    run, calls = fake_run(monkeypatch, step_s=1e-7, per_call_s=1e-4)
    steps, calls_a_round, round_s = round_plan(run, most_steps=1_000, round_s=0.03, probe_steps=10, most_calls=10_000)
    # The probe of 10 steps holds the per-call cost; the calls are counted on a call of all 1,000 steps (0.2 ms).
    assert (steps, calls_a_round) == (1_000, 150) and round_s == pytest.approx(0.03)
    assert calls[-PROBE_CALLS - 1:] == [1_000] * (PROBE_CALLS + 1)


@pytest.mark.parametrize("count, rounded", [(3_750.0, 3_000), (100_000, 100_000), (99_999.9, 90_000), (7.9, 7),
                                            (0.2, 1)])
def test_a_reduced_step_count_keeps_one_significant_digit(count, rounded):
    assert one_significant_digit(count) == rounded


def test_a_round_budget_runs_fewer_steps_except_for_the_seeds_own_programs_whose_rounds_it_still_estimates():
    # A budget no round of 1,000 numpy_loop steps fits on any machine leaves the probe's 1,000 steps.
    budget = Profile(sizes=(1_000,), steps=100_000, trials=1, rounds_per_trial=1, max_round_s=1e-6, probe_steps=1_000)
    steps, round_s = budgeted_steps(solvers.get("numpy_loop"), "cpu", 1_000, 100_000, budget)
    assert steps == 1_000 and round_s > 0
    exempt = Profile(sizes=(1_000,), steps=100_000, trials=1, rounds_per_trial=1, max_round_s=1e-6, probe_steps=1_000,
                     full_count_solvers=("numpy_loop",))
    steps, round_s = budgeted_steps(solvers.get("numpy_loop"), "cpu", 1_000, 100_000, exempt)
    assert steps == 100_000 and round_s > 0  # said on a terminal before its rounds begin


def test_a_prepared_run_times_its_setup_and_first_call_apart_and_may_make_several_calls_a_call(monkeypatch):
    clock, calls = FakeClock(), []
    monkeypatch.setattr(solver_runs, "time", clock)

    @contextmanager
    def prepare(problem, device):
        clock.now += 2.0  # the session a solver builds on entering

        def run(steps):
            calls.append(steps)
            clock.now += 0.5
            return Fit(0.0, 0.0, 0.0, steps)

        yield run

    solver = SimpleNamespace(name="slow_setup", needs=(), prepare=prepare)
    with prepared(solver, seed_problem(100, iterations=5), "cpu", calls=3) as (run, setup_s):
        assert setup_s == 2.5 and calls == [1]  # the setup and a first call of one step, nothing more
        assert run(5).iterations == 5 and calls == [1, 5, 5, 5]


def test_the_answer_check_names_what_is_wrong():
    solver = solvers.get("numpy_loop")
    with solvers.get("numpy_loop").prepare(seed_problem(1_000, iterations=50), "cpu") as run:
        right = run(50)
    assert answer_mismatch(right, solver, 1_000) is None
    assert answer_mismatch(Fit(right.w * 1.01, right.b, right.loss, 50), solver, 1_000).startswith("w = ")


def test_ops_placed_elsewhere_stop_the_measurement_naming_where():
    with pytest.raises(Misplaced, match="tf1_while_loop on gpu: asked for gpu, but TensorFlow placed float ops "
                                        "elsewhere: 4 on /device:CPU:0"):
        check_placement(solvers.get("tf1_while_loop"), "gpu", {"/device:CPU:0": 4})
    check_placement(solvers.get("tf2_function_xla"), "gpu", {})  # XLA reports nothing, so nothing is checked


def test_pytest_benchmark_keeps_exactly_the_round_times_the_workers_measured(pytester, outside_xdist):
    pytester.makepyfile(test_replayed="""
from perf.measure.benchmark import replayed

def test_rounds(benchmark):
    replayed(benchmark, [0.25, 0.5, 0.125, 1.0])
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--benchmark-json=run.json",
                                           "--benchmark-save-data", "-c", "/dev/null")
    result.assert_outcomes(passed=1)
    (bench,) = json.loads((pytester.path / "run.json").read_text())["benchmarks"]
    assert bench["stats"]["data"] == [0.25, 0.5, 0.125, 1.0] and bench["stats"]["median"] == 0.375
    assert bench["options"]["timer"] == "time.perf_counter, in the worker processes"
