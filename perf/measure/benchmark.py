"""Every benchmark's report under pytest-benchmark: its trials, taken in the run's passes (perf/measure/schedule.py),
handed to pytest-benchmark as its own round times, the answer checked, what was measured recorded in extra_info
(docs/extra-info.md); under --benchmark-disable, one untimed call here checks the answer."""

import dataclasses

import pytest

from perf.measure import TIMING_REFERENCE, environment, gpu
from perf.measure.schedule import Plan, Schedule, Scheduled, label, steps_within_budget
from perf.measure.solver_runs import Misplaced, answer_mismatch, prepared
from perf.measure.trials import TrialError, slowdown_of
from solvers.problem import Fit, seed_problem

__all__ = ["Measurement", "Plan"]  # what a benchmark module uses

# Failures the message says all of; any other carries the worker's traceback.
EXPECTED_FAILURES = ("wrong answer", Misplaced.__name__, gpu.OUT_OF_MEMORY)


class Measurement:
    """One benchmark test's measurement: its module's plan, its trials from the run's passes."""

    def __init__(self, schedule: Schedule | None, nodeid: str, solver, device: str, plan: Plan, profile):
        self.schedule, self.nodeid, self.solver, self.device, self.plan = schedule, nodeid, solver, device, plan
        self.profile = profile

    def reported(self, benchmark) -> Fit:
        """The fit of the last timed round, its answer checked, its rounds in pytest-benchmark and its extra_info
        recorded; a failed trial fails the test, without a traceback of ours."""
        if benchmark.disabled:
            fit, scheduled = self.checked_here(benchmark), None
        else:
            self.schedule.run()  # the first test of the run waits for every pass
            scheduled = self.schedule.benchmarks[self.nodeid]
            if scheduled.failure is not None:
                failed(scheduled)
            fit = Fit(**scheduled.measured.fit)
            replayed(benchmark, scheduled.measured.rounds_s)
        record(benchmark, self.solver, self.device, self.plan, fit, scheduled)
        if scheduled is not None:
            benchmark.extra_info["budget"] = dataclasses.asdict(self.schedule.spent)  # the run's, what it bought
        if self.profile.shrink != 1:
            benchmark.extra_info["shrink"] = self.profile.shrink
        return fit

    def checked_here(self, benchmark) -> Fit:
        """One setup and one call in this process, its placement and answer checked: nothing is timed."""
        n, steps = self.plan.n, steps_within_budget(self.solver, self.device, self.plan, self.profile)
        placement, out_of_memory = {}, None
        try:
            with prepared(self.solver, seed_problem(n, iterations=steps), self.device, placement) as (run, _):
                fit = benchmark.pedantic(run, args=(steps,))
        except Misplaced as error:
            pytest.fail(str(error), pytrace=False)
        except Exception as error:
            if (out_of_memory := gpu.out_of_memory(error, self.device)) is None:
                raise
        if out_of_memory is not None:  # outside the except block, so the error's frames are gone first
            pytest.fail(f"{label(self.solver, self.device, n)}: {out_of_memory}", pytrace=False)
        if mismatch := answer_mismatch(fit, self.solver, n):
            pytest.fail(f"{label(self.solver, self.device, n)}: wrong answer: {mismatch}", pytrace=False)
        benchmark.extra_info["placement"] = placement.get("devices")
        return fit


def failed(scheduled: Scheduled):
    error = scheduled.failure
    details = f"\n{error.trace or ''}" if isinstance(error, TrialError) and error.kind not in EXPECTED_FAILURES else ""
    pytest.fail(f"{scheduled.label}: {error}{details}", pytrace=False)


class ReplayedClock:
    """pytest-benchmark's timer for rounds the workers timed: each call of advance() moves it on by the next one."""
    __name__ = "time.perf_counter, in the worker processes"

    def __init__(self, rounds_s: list[float]):
        self.now, self.rounds_s = 0.0, iter(rounds_s)

    def __call__(self) -> float:
        return self.now

    def advance(self):
        self.now += next(self.rounds_s)


def replayed(benchmark, rounds_s: list[float]) -> None:
    """pytest-benchmark's stats, tables and JSON made of exactly these round times: no pipe inside a timed round."""
    clock = ReplayedClock(rounds_s)
    benchmark._timer = clock  # its timer is chosen once per session (--benchmark-timer); this one is per benchmark
    benchmark.pedantic(clock.advance, rounds=len(rounds_s))


def record(benchmark, solver, device, plan: Plan, fit: Fit, scheduled: Scheduled | None):
    """What was measured, as docs/extra-info.md lists it; what is derived from it is the analysis layer's."""
    info = benchmark.extra_info
    info.update(solver=solver.name, device=device, device_name=environment.device_name(solver, device), n=plan.n,
                iterations=fit.iterations, dtype=solver.dtype, w=fit.w, b=fit.b, loss=fit.loss,
                **environment.versions(), **plan.study)
    info.setdefault("placement", None)
    if (slowdown := slowdown_of(solver.name)) != 1:
        info["slowdown"] = slowdown
    if fit.iterations != plan.steps:
        info["steps_reduced_from"] = plan.steps
    if scheduled is None:  # --benchmark-disable: nothing was timed
        return
    measured, first = scheduled.measured, scheduled.measured.trials[0]
    info.update(placement=measured.placement, trials=len(measured.trials), rounds_per_trial=measured.rounds_per_trial,
                trial_medians_s=[trial.median_s() for trial in measured.trials], setup_s=first.setup_s,
                first_run_s=first.first_run_s, warm_up_each_trial=measured.warm_up_each_trial,
                trial_setup_s=[trial.setup_s + (trial.first_run_s or 0) for trial in measured.trials],
                trial_processes=[trial.process for trial in measured.trials], trials_stopped=scheduled.stopped)
    if device == "gpu":
        info["gpu_peak_bytes"] = [trial.gpu_peak_bytes for trial in measured.trials]
        info["gpu_peak_scope"] = [trial.gpu_peak_scope for trial in measured.trials]
    if measured.reference_steps:
        info.update(reference="-".join(TIMING_REFERENCE), reference_iterations=measured.reference_steps,
                    reference_trial_medians_s=[trial.reference_median_s() for trial in measured.trials])
    if counted := scheduled.counted:
        info["instructions"] = ({"not_counted": counted.failure} if counted.failure else
                                {"per_step": counted.per_step, "reference_per_step": counted.reference_per_step,
                                 **counted.settings})
