"""A solver's run as every measurement takes it, the benchmarks' and the gate worker's alike: set up apart, placement
checked, rounds sized, and its answer checked."""

import math
import time
from contextlib import ExitStack, contextmanager, nullcontext
from functools import cache
from typing import NamedTuple

from perf.measure import placement as op_placement
from perf.measure.trials import timed
from solvers.answers import mismatch
from solvers.problem import seed_problem

# TensorFlow reports no per-op placement for these; strict placement (no soft placement) still guards them.
PLACEMENT_UNRECORDED = {"tf2_function_xla": "XLA runs the whole loop as one compiled cluster and reports no op placement"}
# A round's length is estimated from the fastest of this many untimed calls, after a warm-up call.
PROBE_CALLS = 3


class Misplaced(RuntimeError):
    """TensorFlow ran float ops on another device than the one asked for; the message says where."""


@contextmanager
def prepared(solver, problem, device, placement: dict | None = None, calls: int = 1):
    """(run, setup_s): prepare plus a first call of one step, kept out of every timed round. placement, when given a
    dict, gets where TensorFlow placed the ops, checked (Misplaced). With calls > 1 each call of run makes that many
    calls: a round of a solver whose whole run takes microseconds then lasts long enough to time."""
    started = time.perf_counter()
    watching = placement is not None and "tensorflow" in solver.needs
    recording = op_placement.recording_placement() if watching else nullcontext(None)
    with ExitStack() as session:  # open until the caller is done; closes the session however it ends
        with recording as placed:  # around setup only: recording slows every op it watches
            run = session.enter_context(solver.prepare(problem, device))
            run(1)  # the first call builds executors and allocates: setup, not steady state
            setup_s = time.perf_counter() - started  # the placement record, taken on the way out, is not setup
        if placed is not None:
            placement["devices"] = PLACEMENT_UNRECORDED.get(solver.name, dict(placed))
            check_placement(solver, device, dict(placed))
        yield (run if calls == 1 else repeated(run, calls)), setup_s


def repeated(run, calls: int):
    def calls_of_run(iterations):
        for _ in range(calls):
            fit = run(iterations)
        return fit

    return calls_of_run


def check_placement(solver, device, placement):
    """Misplaced before any timing."""
    if solver.name in PLACEMENT_UNRECORDED:
        return
    if reason := op_placement.misplaced(placement, device):
        raise Misplaced(f"{solver.name} on {device}: {reason}")


@cache
def expected_answer(expected, n: int, iterations: int):
    """The float64 answer on the seed data, computed once for every solver that shares the computation."""
    return expected(seed_problem(n, iterations))


def answer_mismatch(fit, solver, n: int) -> str | None:
    """Why fit is not solver's expected answer on the seed data at n (a fast wrong answer is a failure), or None."""
    return mismatch(fit, expected_answer(solver.expected, n, fit.iterations), solver.dtype)


class RoundPlan(NamedTuple):
    steps: int  # run(steps) a call
    calls: int  # calls a round
    round_s: float  # what a round is estimated to take


def round_plan(run, most_steps: int, round_s: float, probe_steps: int, most_calls: int = 1) -> RoundPlan:
    """Rounds of about round_s: most_steps where a round of them fits, else fewer (one significant digit, at least
    the probe's); then, up to most_calls, as many calls of run(most_steps) as fill the round. Estimated from untimed
    calls of probe_steps: for in-graph loops a short probe errs long, as it holds the per-call cost."""
    probe = min(most_steps, probe_steps)
    step_s = fastest_call_s(run, probe) / probe
    if step_s * most_steps > round_s:
        steps = max(probe, one_significant_digit(round_s / step_s))
        return RoundPlan(steps, 1, step_s * steps)
    if most_calls == 1:
        return RoundPlan(most_steps, 1, step_s * most_steps)
    call_s = fastest_call_s(run, most_steps) if most_steps > probe else step_s * probe
    calls = max(1, min(most_calls, round(round_s / call_s)))
    return RoundPlan(most_steps, calls, call_s * calls)


def fastest_call_s(run, steps: int) -> float:
    run(steps)  # a warm-up: XLA compiles anew for every step count
    return min(timed(run, steps) for _ in range(PROBE_CALLS))


def one_significant_digit(count: float) -> int:
    """count rounded down to one significant digit (3,750 → 3,000): step counts that read as chosen, not computed."""
    if count < 1:
        return 1
    scale = 10 ** math.floor(math.log10(count))
    return int(count // scale * scale)
