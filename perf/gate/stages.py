"""The gate's measurement in stages: a screen of every benchmark, more passes for those not yet decided, within a
budget, then a confirmation of each flagged one, alone, on fresh processes, new seed. The rule, and why at most
FALSE_ALARM_RATE² of gate runs on identical versions fail: docs/gate.md, "How it decides".
"""

import random
import time
from dataclasses import dataclass, replace

from perf.gate.interleave import (Outcome, alternated, benchmarks_of, listings, prepared_outcomes, run_pass,
                                  workers_for_pass)
from perf.judge.outcome import DEFAULT_THRESHOLD
from perf.judge.rules import FALSE_ALARM_RATE, Verdict, judged
from perf.judge.words import ERROR, INCONCLUSIVE, REGRESSION, UNCONFIRMED
from perf.measure.schedule import MAX_TRIALS

# Every live benchmark's passes before any may stop. Few: the t interval at so few degrees of freedom is wide, so a
# benchmark decided this soon is decided by a wide margin, and the trials the steady ones save go to the undecided
# (chosen by replaying the noise study's recorded passes: docs/results/gate-design.md section 9).
MIN_PASSES = 5
DEFAULT_BUDGET_S = 480  # no new screening pass starts after this; confirmation comes on top. The passes past
# MIN_PASSES cost little: only the benchmarks still undecided are timed.
CONFIRMATION_MIN_PASSES = 6
CONFIRMATION_MAX_PASSES = 24
# The confirmation's budget grows with its flags, so that many flags at once (a slowdown of everything) get about
# as many passes each as one alone does: a pass costs a fixed start-up plus a trial per benchmark in it.
CONFIRMATION_BUDGET_S = 150
CONFIRMATION_BUDGET_S_PER_FLAG = 4


@dataclass(frozen=True)
class Stopping:
    """When a stage stops measuring a benchmark: once decided, past min_passes; or when max_passes or the budget
    (no pass starts after it) is spent. per_run: the false-alarm rate is over all the stage's benchmarks (the
    screen), else per benchmark (the confirmation)."""
    threshold: float = DEFAULT_THRESHOLD
    min_passes: int = MIN_PASSES
    max_passes: int = MAX_TRIALS  # a benchmark's most passes are its most trials
    budget_s: float = DEFAULT_BUDGET_S
    per_run: bool = True
    budget_s_per_benchmark: float = 0.0

    def alpha(self, live: int) -> float:
        return FALSE_ALARM_RATE / max(1, live) if self.per_run else FALSE_ALARM_RATE

    def judged(self, values: list[float], live: int) -> Verdict:
        return judged(values, self.threshold, self.alpha(live))

    def decided(self, values: list[float], live: int) -> bool:
        return len(values) >= self.min_passes and self.judged(values, live).verdict != INCONCLUSIVE

    def keeps(self, values: list[float], pass_index: int, spent_s: float, benchmarks: int, live: int) -> bool:
        """Whether a gate that has spent spent_s on its passes of `benchmarks` times one with these values again."""
        return pass_index < self.min_passes or (
            pass_index < self.max_passes and spent_s <= self.budget_s + self.budget_s_per_benchmark * benchmarks
            and not self.decided(values, live))


def fixed(stopping: Stopping, passes: int) -> Stopping:
    """Exactly this many passes, none stopped early."""
    return replace(stopping, min_passes=passes, max_passes=passes)


def screening(threshold: float, budget_s: float = DEFAULT_BUDGET_S, passes: int | None = None) -> Stopping:
    """The screen's stopping: the gate's rule within budget_s, or exactly `passes` passes."""
    screen = Stopping(threshold, budget_s=budget_s)
    return fixed(screen, passes) if passes else screen


@dataclass
class Policy:
    """The gate's, for measured: what stopping keeps open for the candidate, on one clock of wall time; A B, B A."""
    stopping: Stopping
    candidate: str
    spent_s: float = 0.0
    round_order = staticmethod(alternated)

    def open_for(self, outcomes: list[Outcome], pass_index: int) -> dict[str, list[Outcome]]:
        live = [outcome for outcome in outcomes if outcome.unjudged is None]
        return {self.candidate: [outcome for outcome in live if self.stopping.keeps(
            outcome.values(self.candidate), pass_index, self.spent_s, len(live), len(live))]}

    def passed(self, open_for: dict, trial_s: dict, pass_s: float, versions: int) -> str:
        self.spent_s += pass_s
        return f"{self.spent_s:.0f} s in all"


def measured(versions: list, threads: int, benchmarks, profile, seed: int, policy, progress=print,
             preload: list[str] | None = None) -> list[Outcome]:
    """Passes of fresh workers for the versions, the baseline first, over the benchmarks (a function of the first
    pass's listings of the solvers in preload, default all, which its workers import, giving their Keys). The policy
    says which outcomes each candidate keeps open (open_for), the rounds' order (round_order), its clock after a pass
    (passed)."""
    rng, starts, outcomes = random.Random(seed), {}, []
    for pass_index in range(policy.stopping.max_passes):
        open_for = policy.open_for(outcomes, pass_index)
        active = list({id(outcome): outcome for mine in open_for.values() for outcome in mine}.values())
        if pass_index and not active:
            break
        solvers = sorted({outcome.key.solver for outcome in active}) if pass_index else preload
        # A candidate with nothing open is not started: its worker and trials would cost the others time for nothing.
        present = versions[:1] + [version for version in versions[1:] if not pass_index or open_for[version.label]]
        began = time.perf_counter()
        with workers_for_pass(present, threads, pass_index, solvers) as workers:
            if not pass_index:
                found = listings(workers, preload)
                outcomes = active = prepared_outcomes(workers, benchmarks(found), profile, found)
                open_for = policy.open_for(outcomes, pass_index)
            trial_s = run_pass(workers, [version.label for version in present], active, pass_index, rng, starts,
                               policy.round_order)
        pass_s = time.perf_counter() - began
        timed = sum(outcome.unjudged is None for outcome in active)
        progress(f"pass {pass_index + 1}: {timed} benchmark{'s' * (timed != 1)}, {pass_s:.0f} s, "
                 + policy.passed(open_for, trial_s, pass_s, len(present)))
    return outcomes


def benchmarks_named(solvers: list[str] | None, devices: list[str], profile, only=None):
    """The named solvers' benchmarks (default: either version's) on devices, as a function of the versions' listings
    of them; those in only alone where it is given."""
    return lambda found: [key for key in benchmarks_of(found, solvers, devices, profile) if only is None or key in only]


def screened(versions: list, threads: int, solvers: list[str] | None, devices: list[str], profile, stopping: Stopping,
             seed: int, progress=print, only=None) -> list[Outcome]:
    """Every benchmark of the named solvers (default: either version's) in passes, as long as stopping keeps it open;
    only the Keys in only where it is given (a comparison's undecided rows, not the product of their solvers, sizes)."""
    # The first pass's workers import only the named solvers: every package's import is seconds a pass.
    return measured(versions, threads, benchmarks_named(solvers, devices, profile, only), profile, seed,
                    Policy(stopping, versions[-1].label), progress, solvers)


def verdicts(outcomes: list[Outcome], candidate: str, stopping: Stopping) -> list[Verdict]:
    """Each benchmark's verdict on the candidate, from its passes up to where stopping stops it."""
    live = sum(outcome.unjudged is None for outcome in outcomes)
    return [replace(Verdict(outcome.unjudged.verdict, why=outcome.unjudged.why) if outcome.unjudged
                    else stopping.judged(outcome.values(candidate), live),
                    benchmark=outcome.key.name, steps=outcome.steps, calls=outcome.calls) for outcome in outcomes]


def confirming(threshold: float) -> Stopping:
    """The confirmation's stopping: its own passes and budget, which grows with the flags, at FALSE_ALARM_RATE each."""
    return Stopping(threshold, CONFIRMATION_MIN_PASSES, CONFIRMATION_MAX_PASSES, CONFIRMATION_BUDGET_S, per_run=False,
                    budget_s_per_benchmark=CONFIRMATION_BUDGET_S_PER_FLAG)


def confirmation(versions: list, threads: int, keys: list, profile, stopping: Stopping, seed: int,
                 progress=print) -> dict:
    """The flagged benchmarks (keys) measured again alone, sized afresh, in fresh passes with a new seed, as long as
    stopping keeps them open: benchmark name -> its verdict row."""
    if not keys:
        return {}
    again = measured(versions, threads, lambda found: keys, profile, seed, Policy(stopping, versions[-1].label),
                     lambda text: progress(f"confirmation {text}"), sorted({key.solver for key in keys}))
    return {row.benchmark: row for row in verdicts(again, versions[-1].label, stopping)}


def flagged_keys(outcomes: list[Outcome], rows: list[Verdict]) -> list:
    return [outcome.key for outcome, row in zip(outcomes, rows) if row.verdict in (REGRESSION, ERROR)]


def confirmed(versions: list, threads: int, outcomes: list[Outcome], rows: list[Verdict], profile, threshold: float,
              seed: int, progress=print) -> list[Verdict]:
    """rows with each flagged benchmark measured again alone (confirmation): confirmed, it keeps its verdict;
    unconfirmed, it is reported as such and does not fail."""
    second = confirmation(versions, threads, flagged_keys(outcomes, rows), profile, confirming(threshold), seed,
                          progress)
    return with_confirmation(rows, second)


def with_confirmation(rows: list[Verdict], second: dict) -> list[Verdict]:
    """rows, each flagged one measured again alone (second: benchmark name -> its verdict row) confirmed or not."""
    final = []
    for row in rows:
        if (check := second.get(row.benchmark)) is None:
            final.append(row)
        elif check.verdict == row.verdict:
            final.append(replace(check, screening=row, why=f"confirmed: {row.why or 'flagged again, alone'}"))
        else:
            final.append(replace(row, verdict=UNCONFIRMED, confirmation=check,
                                 why=f"{row.verdict} in the screen, {check.verdict} measured again alone"
                                     + (f" ({row.why})" if row.why else "")))
    return final
