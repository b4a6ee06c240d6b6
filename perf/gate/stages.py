"""The gate's measurement in stages: a screen of every benchmark, more passes for those not yet decided, within a
budget, then a confirmation of each flagged one, alone, on fresh processes, new seed.

A benchmark is decided once its verdict is PASS, REGRESSION or IMPROVEMENT (perf/gate/verdict.py): it stops there,
and the time left goes to the ones still undecided, so the noisiest get the most passes. A flagged benchmark (a
regression, a wrong answer, a crash) fails the gate only if its confirmation flags it again: a real slowdown shows
in both, a passing state of the machine or a flaky crash in one. The screen's false-alarm rate is FALSE_ALARM_RATE
over all its benchmarks (Bonferroni), the confirmation's FALSE_ALARM_RATE for each flagged one; the two are
measured apart, so at most FALSE_ALARM_RATE² of gate runs on identical versions fail.
"""

import random
import time
from dataclasses import dataclass, replace

from perf.gate.interleave import Outcome, benchmarks_of, listings, prepared_outcomes, run_pass, started_for_pass
from perf.gate.verdict import FALSE_ALARM_RATE, judged

MIN_PASSES = 8  # every live benchmark's passes before any may stop
MAX_PASSES = 40
DEFAULT_BUDGET_S = 480  # no new screening pass starts after this; confirmation comes on top. The passes past
# MIN_PASSES cost little: only the benchmarks still undecided are timed.
CONFIRMATION_MIN_PASSES = 6
CONFIRMATION_MAX_PASSES = 24
CONFIRMATION_BUDGET_S = 180


@dataclass(frozen=True)
class Stopping:
    """When a stage stops measuring a benchmark: once decided, past min_passes; or when max_passes or the budget
    (no pass starts after it) is spent. per_run: the false-alarm rate is over all the stage's benchmarks (the
    screen), else per benchmark (the confirmation)."""
    threshold: float
    min_passes: int = MIN_PASSES
    max_passes: int = MAX_PASSES
    budget_s: float = DEFAULT_BUDGET_S
    per_run: bool = True

    def alpha(self, live: int) -> float:
        return FALSE_ALARM_RATE / max(1, live) if self.per_run else FALSE_ALARM_RATE

    def judged(self, values: list[float], live: int) -> dict:
        return judged(values, self.threshold, self.alpha(live))

    def decided(self, values: list[float], live: int) -> bool:
        return len(values) >= self.min_passes and self.judged(values, live)["verdict"] != "inconclusive"

    def stopped(self, values: list[float], live: int) -> list[float]:
        """values up to the pass this stage stops a benchmark at, had it been measured alone: where the noise study
        times several variants in the same passes, each is judged as the gate would have judged it."""
        values = values[:self.max_passes]
        return next((values[:count] for count in range(self.min_passes, len(values) + 1)
                     if self.decided(values[:count], live)), values)

    def still_open(self, outcome: Outcome, pass_index: int, elapsed_s: float, live: int) -> bool:
        return pass_index < self.min_passes or elapsed_s <= self.budget_s and not all(
            self.decided([value for *_, value in values], live) for values in outcome.log_ratios.values())


def fixed(stopping: Stopping, passes: int) -> Stopping:
    """Exactly this many passes, none stopped early."""
    return replace(stopping, min_passes=passes, max_passes=passes)


def screening(threshold: float, budget_s: float = DEFAULT_BUDGET_S, passes: int | None = None) -> Stopping:
    """The screen's stopping: the gate's rule within budget_s, or exactly `passes` passes."""
    screen = Stopping(threshold, budget_s=budget_s)
    return fixed(screen, passes) if passes else screen


def measured(versions: list, threads: int, benchmarks, profile, seed: int, passes: int, progress=print,
             stopping: Stopping | None = None) -> list[Outcome]:
    """Up to `passes` passes of fresh workers over the benchmarks: Keys, or a function of the first pass's workers
    giving them; with stopping, the later passes measure only the benchmarks it keeps open."""
    rng, starts, began = random.Random(seed), {}, time.perf_counter()
    labels = [version.label for version in versions]
    outcomes = []
    for pass_index in range(passes):
        # The budget is a gate's, which times two versions: n versions in the same passes take n/2 times as long.
        elapsed_s = (time.perf_counter() - began) * 2 / len(versions)
        live = sum(outcome.problem is None for outcome in outcomes)
        active = [outcome for outcome in outcomes if outcome.problem is None
                  and (stopping is None or stopping.still_open(outcome, pass_index, elapsed_s, live))]
        if pass_index and not active:
            break
        keys = [outcome.key for outcome in active] if pass_index else benchmarks
        solvers = None if callable(keys) else sorted({key.solver for key in keys})  # None: every solver
        with started_for_pass(versions, threads, pass_index, solvers) as workers:
            if not pass_index:
                outcomes = active = prepared_outcomes(workers, benchmarks(workers) if callable(benchmarks) else benchmarks,
                                                      profile)
            run_pass(workers, labels, active, pass_index, rng, starts)
        progress(f"pass {pass_index + 1}: {sum(outcome.problem is None for outcome in active)} benchmarks, "
                 f"{time.perf_counter() - began:.0f} s")
    return outcomes


def screened(versions: list, threads: int, solvers: list[str] | None, devices: list[str], profile, stopping: Stopping,
             seed: int, progress=print) -> list[Outcome]:
    """Every benchmark of the named solvers (default: either version's) in passes, as long as stopping keeps it open."""
    def chosen(workers):
        return benchmarks_of(listings(workers, solvers), solvers, devices, profile)

    return measured(versions, threads, chosen, profile, seed, stopping.max_passes, progress, stopping)


def verdicts(outcomes: list[Outcome], candidate: str, stopping: Stopping) -> list[dict]:
    """Each benchmark's verdict on the candidate, from its passes up to where stopping stops it."""
    live = sum(outcome.problem is None for outcome in outcomes)
    rows = []
    for outcome in outcomes:
        row = {"benchmark": outcome.key.name, "steps": outcome.steps, "calls": outcome.calls}
        if outcome.problem:
            rows.append({**row, "verdict": outcome.problem.split(":")[0].split(" ")[0], "why": outcome.problem})
        else:
            values = stopping.stopped([value for *_, value in outcome.log_ratios[candidate]], live)
            rows.append({**row, **stopping.judged(values, live)})
    return rows


def confirming(threshold: float) -> Stopping:
    """The confirmation's stopping: fewer passes before any stops, a budget of its own, FALSE_ALARM_RATE per benchmark."""
    return Stopping(threshold, CONFIRMATION_MIN_PASSES, CONFIRMATION_MAX_PASSES, CONFIRMATION_BUDGET_S, per_run=False)


def confirmation(versions: list, threads: int, flagged: dict, profile, stopping: Stopping, seed: int,
                 progress=print) -> dict:
    """Each version's flagged benchmarks (label -> [Key]) measured again alone, sized afresh, in fresh passes with a
    new seed, beside the baseline (versions[0]), as long as stopping keeps them open: label -> {benchmark: its
    verdict row}."""
    confirming = [versions[0]] + [version for version in versions[1:] if flagged.get(version.label)]
    keys = list(dict.fromkeys(key for version in confirming[1:] for key in flagged[version.label]))
    if not keys:
        return {}
    again = measured(confirming, threads, keys, profile, seed, stopping.max_passes,
                     lambda text: progress(f"confirmation {text}"), stopping)
    found = {}
    for version in confirming[1:]:
        names = {key.name for key in flagged[version.label]}
        rows = verdicts(again, version.label, stopping)
        found[version.label] = {row["benchmark"]: row for row in rows if row["benchmark"] in names}
    return found


def flagged_keys(outcomes: list[Outcome], rows: list[dict]) -> list:
    return [outcome.key for outcome, row in zip(outcomes, rows) if row["verdict"] in ("regression", "error")]


def confirmed(versions: list, threads: int, outcomes: list[Outcome], rows: list[dict], profile, threshold: float,
              seed: int, progress=print) -> list[dict]:
    """rows with each flagged benchmark measured again alone (confirmation): confirmed, it keeps its verdict;
    unconfirmed, it is reported as such and does not fail."""
    candidate = versions[-1].label
    second = confirmation(versions, threads, {candidate: flagged_keys(outcomes, rows)}, profile,
                          confirming(threshold), seed, progress).get(candidate, {})
    final = []
    for row in rows:
        if (check := second.get(row["benchmark"])) is None:
            final.append(row)
        elif check["verdict"] == row["verdict"]:
            final.append({**check, "screening": row, "why": f"confirmed: {row.get('why') or 'flagged again, alone'}"})
        else:
            final.append({**row, "verdict": "unconfirmed", "confirmation": check,
                          "why": f"{row['verdict']} in the screen, {check['verdict']} measured again alone"
                                 + (f" ({row['why']})" if row.get("why") else "")})
    return final
