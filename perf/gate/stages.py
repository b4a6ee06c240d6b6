"""The gate's measurement in stages: a screen of every benchmark, more passes for those a threshold slowdown is not
yet ruled out for, within a budget, then a confirmation of each flagged one, alone, on fresh processes, new seed.

A flagged benchmark (a regression, a wrong answer, a crash) fails the gate only if its confirmation flags it
again: a real slowdown shows in both, a passing state of the machine or a flaky crash in one. The confirmation's
own false-alarm rate is FALSE_ALARM_RATE over the flagged benchmarks, so at most FALSE_ALARM_RATE² of gate runs
on identical versions fail.
"""

import random
import time

from perf.gate.interleave import Outcome, benchmarks_of, listings, prepared_outcomes, run_pass, started_for_pass
from perf.gate.verdict import FALSE_ALARM_RATE, judged, ruled_out

MIN_PASSES = 8  # every live benchmark's passes before any may stop
MAX_PASSES = 24
CONFIRMATION_PASSES = 10
DEFAULT_BUDGET_S = 480  # no new screening pass starts after this; confirmation comes on top. With room past
# MIN_PASSES on a slow runner, the benchmarks still open get more passes, which cost little: only they are timed.


def measured(versions: list, threads: int, benchmarks, profile, seed: int, passes: int, progress=print,
             still_open=None) -> list[Outcome]:
    """Up to `passes` passes of fresh workers over the benchmarks: Keys, or a function of the first pass's workers
    giving them. still_open(outcome, pass_index, elapsed_s), when given, says which the later passes measure."""
    rng, starts, began = random.Random(seed), {}, time.perf_counter()
    labels = [version.label for version in versions]
    outcomes = []
    for pass_index in range(passes):
        active = [outcome for outcome in outcomes if outcome.problem is None
                  and (still_open is None or still_open(outcome, pass_index, time.perf_counter() - began))]
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


def screened(versions: list, threads: int, solvers: list[str] | None, devices: list[str], profile, threshold: float,
             seed: int, budget_s: float = DEFAULT_BUDGET_S, progress=print, min_passes: int = MIN_PASSES,
             max_passes: int = MAX_PASSES) -> list[Outcome]:
    """Every benchmark of the named solvers (default: either version's) in min_passes passes; then passes of those
    a threshold slowdown is not yet ruled out for, until budget_s or max_passes."""
    def chosen(workers):
        return benchmarks_of(listings(workers, solvers), solvers, devices, profile)

    def still_open(outcome, pass_index, elapsed_s):
        return pass_index < min_passes or elapsed_s <= budget_s and not settled(outcome, threshold, min_passes)

    return measured(versions, threads, chosen, profile, seed, max_passes, progress, still_open)


def settled(outcome: Outcome, threshold: float, min_passes: int = MIN_PASSES) -> bool:
    """Measured enough: past min_passes, with a slowdown of threshold ruled out on every version."""
    return all(len(values) >= min_passes and ruled_out([value for *_, value in values], threshold)
               for values in outcome.log_ratios.values())


def screen_verdicts(outcomes: list[Outcome], candidate: str, threshold: float) -> list[dict]:
    """The screen's verdicts, at FALSE_ALARM_RATE over its live benchmarks (Bonferroni)."""
    live = max(1, sum(outcome.problem is None for outcome in outcomes))
    return verdicts(outcomes, candidate, threshold, FALSE_ALARM_RATE / live)


def verdicts(outcomes: list[Outcome], candidate: str, threshold: float, alpha: float) -> list[dict]:
    rows = []
    for outcome in outcomes:
        row = {"benchmark": outcome.key.name, "steps": outcome.steps, "calls": outcome.calls}
        if outcome.problem:
            rows.append({**row, "verdict": outcome.problem.split(":")[0].split(" ")[0], "why": outcome.problem})
        else:
            rows.append({**row, **judged([value for *_, value in outcome.log_ratios[candidate]], threshold, alpha)})
    return rows


def confirmation(versions: list, threads: int, flagged: dict, profile, threshold: float, seed: int,
                 progress=print) -> dict:
    """Each version's flagged benchmarks (label -> [Key]) measured again alone, sized afresh, in CONFIRMATION_PASSES
    fresh passes with a new seed, beside the baseline (versions[0]): label -> {benchmark: its verdict row}, each
    version's at FALSE_ALARM_RATE over its own flagged ones."""
    confirming = [versions[0]] + [version for version in versions[1:] if flagged.get(version.label)]
    keys = list(dict.fromkeys(key for version in confirming[1:] for key in flagged[version.label]))
    if not keys:
        return {}
    again = measured(confirming, threads, keys, profile, seed, CONFIRMATION_PASSES,
                     lambda text: progress(f"confirmation {text}"))
    found = {}
    for version in confirming[1:]:
        names = {key.name for key in flagged[version.label]}
        rows = verdicts(again, version.label, threshold, FALSE_ALARM_RATE / len(names))
        found[version.label] = {row["benchmark"]: row for row in rows if row["benchmark"] in names}
    return found


def flagged_keys(outcomes: list[Outcome], rows: list[dict]) -> list:
    return [outcome.key for outcome, row in zip(outcomes, rows) if row["verdict"] in ("regression", "error")]


def confirmed(versions: list, threads: int, outcomes: list[Outcome], rows: list[dict], profile, threshold: float,
              seed: int, progress=print) -> list[dict]:
    """rows with each flagged benchmark measured again alone (confirmation): confirmed, it keeps its verdict;
    unconfirmed, it is reported as such and does not fail."""
    candidate = versions[-1].label
    second = confirmation(versions, threads, {candidate: flagged_keys(outcomes, rows)}, profile, threshold, seed,
                          progress).get(candidate, {})
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
