"""The run's trials in passes, on fake workers: pass i gives every benchmark its trial i on worker i, in a shuffled
order, so that each benchmark's trials spread over the whole run; a benchmark that fails stops, the others go on."""

from types import SimpleNamespace

import pytest

import solvers
from perf.measure import progress
from perf.measure.profiles import Profile
from perf.measure.schedule import Plan, Schedule
from perf.measure.worker import WorkerStopped

PROFILE = Profile(sizes=(1_000,), steps=100, trials=4, rounds_per_trial=2)


class FakeWorker:
    """Answers like perf/measure/worker.py, every round 0.01 s; log gets (worker, solver) for each trial opened."""

    def __init__(self, index, log, failing=(), stopping=()):
        self.index, self.log, self.failing, self.stopping = index, log, failing, stopping
        self.process = SimpleNamespace(pid=1000 + index)

    def ask(self, request):
        if request["op"] == "open":
            self.solver = request["solver"]
            self.log.append((self.index, self.solver))
            if self.solver in self.stopping:
                raise WorkerStopped("the worker process of the suite, this tree, stopped:\n    Segmentation fault")
            if self.solver in self.failing:
                return {"error": "wrong answer: w = 2 (expected 1)", "kind": "wrong answer"}
            return {"setup_s": 0.1, "first_run_s": 0.01}
        if request["op"] == "round":
            return {"round_s": 0.01, "reference_round_s": 0.02} if request.get("reference") else {"round_s": 0.01}
        return {"closed": True, "fit": {"w": 1.0, "b": 2.0, "loss": 3.0, "iterations": 100}}


def scheduled(log, names, seed=3, **options):
    pool = [FakeWorker(index, log, **options) for index in range(PROFILE.trials)]
    schedule = Schedule(pool, PROFILE, seed)
    for name in names:
        schedule.add(f"test_fssgd[{name}]", solvers.get(name), "cpu", Plan(1_000, 100, paired=True))
    return schedule


NAMES = ["numpy_loop", "numpy_lean", "numpy_standardized", "numpy_affine_limit", "numpy_affine_power"]


def test_pass_i_gives_every_benchmark_its_trial_i_on_worker_i_in_an_order_shuffled_each_pass():
    log = []
    schedule = scheduled(log, NAMES)
    schedule.run()
    passes = [[solver for worker, solver in log if worker == index] for index in range(PROFILE.trials)]
    assert [entry[0] for entry in log] == sorted(entry[0] for entry in log)  # pass after pass
    assert all(sorted(order) == sorted(NAMES) for order in passes)
    assert len({tuple(order) for order in passes}) > 1  # shuffled anew
    for name in NAMES:
        measured = schedule.benchmarks[f"test_fssgd[{name}]"].measured
        assert [trial.process for trial in measured.trials] == [1000, 1001, 1002, 1003]
    # The timing reference itself is not paired with itself; every other benchmark is.
    assert schedule.benchmarks["test_fssgd[numpy_loop]"].measured.reference_steps is None
    assert schedule.benchmarks["test_fssgd[numpy_lean]"].measured.reference_steps == 100


def test_the_order_is_the_seeds_so_a_run_can_be_replayed():
    first, second, other = [], [], []
    for log, seed in ((first, 3), (second, 3), (other, 4)):
        scheduled(log, NAMES, seed=seed).run()
    assert first == second != other


def test_a_benchmark_that_fails_stops_there_and_the_others_go_on():
    log = []
    schedule = scheduled(log, NAMES, failing=("numpy_lean",), stopping=("numpy_affine_power",))
    schedule.run()
    assert [solver for _, solver in log].count("numpy_lean") == 1  # its first trial, then no more
    assert "wrong answer" in str(schedule.benchmarks["test_fssgd[numpy_lean]"].failure)
    assert isinstance(schedule.benchmarks["test_fssgd[numpy_affine_power]"].failure, WorkerStopped)
    assert len(schedule.benchmarks["test_fssgd[numpy_loop]"].measured.trials) == PROFILE.trials


def test_it_runs_once_and_a_terminal_hears_of_each_pass():
    heard, log = [], []
    schedule = scheduled(log, NAMES[:2])
    with progress.reporting(heard.append):
        schedule.run()
        schedule.run()
    assert len(log) == 2 * PROFILE.trials
    assert [line.split(" in ")[0] for line in heard] == [f"pass {index} of 4: a trial of each of 2 benchmarks"
                                                         for index in range(1, 5)]


def test_a_study_keeps_its_step_count_under_a_round_budget():
    budget = Profile(sizes=(1_000,), steps=100_000, trials=1, rounds_per_trial=1, max_round_s=1e-6)
    schedule = Schedule([FakeWorker(0, [])], budget, 0)
    schedule.add("study", solvers.get("numpy_lean"), "cpu", Plan(1_000, 100_000, study={"figure": "sweep"}))
    schedule.add("fssgd", solvers.get("numpy_lean"), "cpu", Plan(1_000, 100_000, paired=True))
    schedule.run()
    assert schedule.benchmarks["study"].steps == 100_000
    assert schedule.benchmarks["fssgd"].steps == budget.probe_steps  # no round of more fits the budget


@pytest.fixture(autouse=True)
def no_reporter_left_behind():
    yield
    assert progress._write is None
