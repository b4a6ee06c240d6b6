"""The run's trials in passes, on fake workers: pass i gives every benchmark its trial i on worker i, in a shuffled
order, so that each benchmark's trials spread over the whole run; a benchmark that fails stops, the others go on;
past the profile's passes, fresh workers take more trials of the benchmarks not yet precise enough, within a budget."""

import itertools
from types import SimpleNamespace

import pytest

import solvers
from perf.judge.rules import precise_enough
from perf.measure import progress, schedule as schedule_module
from perf.measure.profiles import Profile
from perf.measure.schedule import BUDGET_SPENT, MAX_TRIALS, MOST_TRIALS, OUT_OF_REACH, PRECISE, Plan, Schedule
from perf.measure.worker import WorkerStopped

PROFILE = Profile(sizes=(1_000,), steps=100, trials=4, rounds_per_trial=2)


class FakeWorker:
    """Answers like perf/measure/worker.py, every round 0.01 s; log gets (worker, solver) for each trial opened."""

    def __init__(self, index, log, failing=(), stopping=(), noisy=None):
        self.index, self.log, self.failing, self.stopping = index, log, failing, stopping
        self.noisy = noisy or {}  # solver -> its round time in worker index, where it is not 0.01 s
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
            round_s = self.noisy[self.solver](self.index) if self.solver in self.noisy else 0.01
            return {"round_s": round_s, "reference_round_s": 0.02} if request.get("reference") else {"round_s": round_s}
        return {"closed": True, "fit": {"w": 1.0, "b": 2.0, "loss": 3.0, "iterations": 100}}


class FakePool:
    """Worker index on first use, as perf/measure/pool.py gives them: past the profile's trials, a fresh one a pass."""

    def __init__(self, log, **options):
        self.log, self.options, self.workers, self.extra_started = log, options, {}, []

    def __getitem__(self, index):
        return self.workers.setdefault(index, FakeWorker(index, self.log, **self.options))

    def extra(self, index, solvers):
        self.extra_started.append((index, solvers))


def scheduled(log, names, seed=3, budget_s=0.0, **options):
    schedule = Schedule(FakePool(log, **options), PROFILE, seed, budget_s=budget_s)
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
    schedule = Schedule(FakePool([]), budget, 0)
    schedule.add("study", solvers.get("numpy_lean"), "cpu", Plan(1_000, 100_000, study={"figure": "sweep"}))
    schedule.add("fssgd", solvers.get("numpy_lean"), "cpu", Plan(1_000, 100_000, paired=True))
    schedule.run()
    assert schedule.benchmarks["study"].steps == 100_000
    assert schedule.benchmarks["fssgd"].steps == budget.probe_steps  # no round of more fits the budget


# Worker index's round: 0.01 s to 60% more, ten levels in turn; trials this scattered are not precise enough to call
# 10% within MAX_TRIALS.
SCATTERED = lambda index: 0.01 * (1 + 0.6 * (index * 7 % 10) / 9)  # noqa: E731
# 0.01 s to 15% more: precise enough to call 10% after a dozen trials or so, so within reach.
MILD = lambda index: 0.01 * (1 + 0.15 * (index * 7 % 10) / 9)  # noqa: E731
# Mild over the profile's four trials, then steady: precise once enough steady trials outweigh the first ones.
SETTLING = lambda index: MILD(index) if index < PROFILE.trials else 0.01  # noqa: E731


def trials_of(schedule, name):
    return schedule.benchmarks[f"test_fssgd[{name}]"]


def test_past_the_profiles_trials_only_the_imprecise_benchmarks_get_more_each_on_a_fresh_worker():
    log = []
    schedule = scheduled(log, ["numpy_loop", "numpy_lean", "numpy_affine_limit"], budget_s=3600,
                         noisy={"numpy_lean": SETTLING})
    schedule.run()
    lean, steady, reference = (trials_of(schedule, name) for name in ("numpy_lean", "numpy_affine_limit", "numpy_loop"))
    assert len(steady.measured.trials) == len(reference.measured.trials) == PROFILE.trials
    assert steady.stopped == PRECISE and reference.stopped is None  # the reference is not judged: no ratio to it
    assert PROFILE.trials < len(lean.measured.trials) < MAX_TRIALS and lean.stopped == PRECISE
    assert precise_enough(lean.measured.trial_ratios(), schedule.threshold)
    assert not precise_enough(lean.measured.trial_ratios()[:-1], schedule.threshold)  # it stopped at the first
    # Each trial past the profile's in a worker of its own, which timed nothing else.
    extra = [(worker, solver) for worker, solver in log if worker >= PROFILE.trials]
    assert extra == [(index, "numpy_lean") for index in range(PROFILE.trials, len(lean.measured.trials))]
    assert len(set(trial.process for trial in lean.measured.trials)) == len(lean.measured.trials)
    # Each such pass's worker started for that pass's benchmarks alone, before its first trial.
    assert schedule.pool.extra_started == [(index, ["numpy_lean"]) for index, _ in extra]


def test_a_budget_of_zero_takes_the_profiles_trials_and_says_which_were_not_precise_enough():
    heard, log = [], []
    schedule = scheduled(log, ["numpy_loop", "numpy_lean", "numpy_affine_limit"], noisy={"numpy_lean": SCATTERED})
    with progress.reporting(heard.append):
        schedule.run()
    assert all(worker < PROFILE.trials for worker, _ in log)
    assert trials_of(schedule, "numpy_lean").stopped == BUDGET_SPENT
    assert trials_of(schedule, "numpy_affine_limit").stopped == PRECISE
    assert heard[-1] == ("1 benchmark still not precise enough to call 10% when the 0 s budget ended "
                         "(numpy_lean cpu n=1,000)")


@pytest.fixture
def within_reach(monkeypatch):
    """Every benchmark within reach, however scattered: the paths where the budget or MAX_TRIALS stops one."""
    monkeypatch.setattr(schedule_module, "trials_needed", lambda ratios, threshold: 0.0)


def test_no_pass_starts_once_the_budget_is_spent(monkeypatch, within_reach):
    clock = itertools.count(step=10.0)  # every reading of the clock 10 s after the one before
    monkeypatch.setattr(schedule_module.time, "perf_counter", lambda: next(clock))
    heard, log = [], []
    schedule = scheduled(log, ["numpy_loop", "numpy_lean"], budget_s=200, noisy={"numpy_lean": SCATTERED})
    with progress.reporting(heard.append):
        schedule.run()
    lean = trials_of(schedule, "numpy_lean")
    assert PROFILE.trials < len(lean.measured.trials) < MAX_TRIALS and lean.stopped == BUDGET_SPENT
    assert any(line.startswith(f"pass {PROFILE.trials + 1}: a trial more of 1 benchmark not yet precise enough to "
                               f"call 10% (numpy_lean cpu n=1,000); ") for line in heard)
    assert "when the 200 s budget ended" in heard[-1]
    # The budget is the passes' past the profile's trials: each pass here read the clock 6 times (its worker's start,
    # the trial, the pass), so 4 passes spent 200 s.
    assert schedule.spent == schedule_module.Spent(200, passes=4, seconds=200.0, trials=4, start_s=10.0)
    assert len(lean.measured.trials) == PROFILE.trials + 4


def test_a_benchmark_whose_spread_needs_more_than_max_trials_takes_none_past_the_profiles():
    log = []
    schedule = scheduled(log, ["numpy_loop", "numpy_lean", "numpy_affine_limit"], budget_s=3600,
                         noisy={"numpy_lean": SCATTERED, "numpy_affine_limit": MILD})
    schedule.run()
    lean, mild = trials_of(schedule, "numpy_lean"), trials_of(schedule, "numpy_affine_limit")
    assert schedule_module.trials_needed(lean.measured.trial_ratios(), schedule.threshold) > MAX_TRIALS
    assert lean.stopped == OUT_OF_REACH and len(lean.measured.trials) == PROFILE.trials
    assert mild.stopped == PRECISE and len(mild.measured.trials) > PROFILE.trials  # the budget went to it
    assert all(solver == "numpy_affine_limit" for worker, solver in log if worker >= PROFILE.trials)


def test_a_benchmark_needing_more_passes_than_the_budget_left_buys_gives_its_trials_to_the_others(monkeypatch):
    # numpy_lean needs 10 more trials, numpy_affine_limit 2; a pass costs the worker's start and each trial's seconds.
    monkeypatch.setattr(schedule_module, "trials_needed",
                        lambda ratios, threshold: len(ratios) + (10 if abs(ratios[0] - 0.65) < 1e-9 else 2))
    schedule = scheduled([], ["numpy_loop", "numpy_lean", "numpy_affine_limit"], budget_s=60.0,
                         noisy={"numpy_lean": lambda index: 0.013, "numpy_affine_limit": MILD})
    lean, mild = trials_of(schedule, "numpy_lean"), trials_of(schedule, "numpy_affine_limit")
    schedule.run()  # the profile's trials, then the budget's
    # As measured: a worker's start 4 s and a trial 3 s, so a pass of both costs 10 s, and 60 s buy 6 of them.
    schedule.spent.start_s, lean.trials_s, mild.trials_s = 4.0, [3.0], [3.0]
    lean.stopped, mild.stopped = None, None
    assert schedule.within_reach([lean, mild], 60.0) == [mild] and lean.stopped == OUT_OF_REACH
    # Alone, the one left costs 7 s a pass: its 2 passes fit in 14 s, not in 13.
    assert schedule.within_reach([mild], 14.0) == [mild]
    assert schedule.within_reach([mild], 13.0) == [] and mild.stopped == OUT_OF_REACH


def test_a_benchmark_never_precise_enough_stops_at_the_most_trials(within_reach):
    log = []
    schedule = scheduled(log, ["numpy_loop", "numpy_lean"], budget_s=3600, noisy={"numpy_lean": SCATTERED})
    schedule.run()
    lean = trials_of(schedule, "numpy_lean")
    assert len(lean.measured.trials) == MAX_TRIALS and lean.stopped == MOST_TRIALS


def test_a_benchmark_that_fails_in_a_pass_past_the_profiles_stops_there(within_reach):
    log = []

    def failing_late(index):
        if index >= PROFILE.trials + 1:
            raise WorkerStopped("the worker process of the suite, this tree, stopped:\n    Killed")
        return SCATTERED(index)

    schedule = scheduled(log, ["numpy_loop", "numpy_lean"], budget_s=3600, noisy={"numpy_lean": failing_late})
    schedule.run()
    lean = trials_of(schedule, "numpy_lean")
    assert isinstance(lean.failure, WorkerStopped) and len(lean.measured.trials) == PROFILE.trials + 1


@pytest.fixture(autouse=True)
def no_reporter_left_behind():
    yield
    assert progress._write is None
