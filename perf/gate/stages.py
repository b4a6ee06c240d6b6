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
from perf.gate.verdict import DEFAULT_THRESHOLD, FALSE_ALARM_RATE, judged

# Every live benchmark's passes before any may stop. Few: the t interval at so few degrees of freedom is wide, so a
# benchmark decided this soon is decided by a clear margin, and the trials the steady ones save go to the undecided
# (chosen by replaying the noise study's recorded passes: docs/results/gate-design.md section 9).
MIN_PASSES = 5
MAX_PASSES = 40
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
    screen), else per benchmark (the confirmation). The budget is budget_s, and budget_s_per_benchmark more for
    each benchmark the stage measures."""
    threshold: float = DEFAULT_THRESHOLD
    min_passes: int = MIN_PASSES
    max_passes: int = MAX_PASSES
    budget_s: float = DEFAULT_BUDGET_S
    per_run: bool = True
    budget_s_per_benchmark: float = 0.0

    def alpha(self, live: int) -> float:
        return FALSE_ALARM_RATE / max(1, live) if self.per_run else FALSE_ALARM_RATE

    def judged(self, values: list[float], live: int) -> dict:
        return judged(values, self.threshold, self.alpha(live))

    def decided(self, values: list[float], live: int) -> bool:
        return len(values) >= self.min_passes and self.judged(values, live)["verdict"] != "inconclusive"

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


def measured(versions: list, threads: int, benchmarks, profile, seed: int, stopping: Stopping, progress=print,
             flagged: dict | None = None) -> list[Outcome]:
    """Passes of fresh workers over the benchmarks (Keys, or a function of the first pass's workers giving them), each
    pass timing those that stopping keeps open for some candidate: every version but the first, each measured on its
    flagged benchmarks (label -> [Key]; default: all). A pass starts the first version and the candidates whose gates
    still time something. Each candidate keeps the clock of its own gate, which would time it beside the first
    version alone: a pass's fixed cost and the trials of the benchmarks open for it, at 2/n of what they took in a
    pass of n versions; outcome.gate_passes says how many passes that gate gave the benchmark."""
    rng, starts = random.Random(seed), {}
    labels = [version.label for version in versions]
    spent = dict.fromkeys(labels[1:], 0.0)
    outcomes = []

    def wanted(label: str) -> list[Outcome]:
        return [outcome for outcome in outcomes if outcome.problem is None
                and (flagged is None or outcome.key in flagged[label])]

    for pass_index in range(stopping.max_passes):
        live = sum(outcome.problem is None for outcome in outcomes)
        open_for = {}
        for label in labels[1:]:
            mine = wanted(label)
            open_for[label] = [outcome for outcome in mine
                               if stopping.keeps(outcome.values(label), pass_index, spent[label], len(mine), live)]
        active = list({id(outcome): outcome for mine in open_for.values() for outcome in mine}.values())
        if pass_index and not active:
            break
        keys = [outcome.key for outcome in active] if pass_index else benchmarks
        solvers = None if callable(keys) else sorted({key.solver for key in keys})  # None: every solver
        # A candidate whose gate has ended runs no pass: starting its worker and timing its trials would cost the
        # others' passes time and tell nothing.
        present = versions[:1] + [version for version in versions[1:] if not pass_index or open_for[version.label]]
        began = time.perf_counter()
        with started_for_pass(present, threads, pass_index, solvers) as workers:
            if not pass_index:
                outcomes = active = prepared_outcomes(workers, benchmarks(workers) if callable(benchmarks) else benchmarks,
                                                      profile)
                open_for = {label: wanted(label) for label in labels[1:]}
            trial_s = run_pass(workers, [version.label for version in present], active, pass_index, rng, starts)
        fixed_s = time.perf_counter() - began - sum(trial_s.values())
        for label, mine in open_for.items():
            if mine:
                spent[label] += (fixed_s + sum(trial_s.get(outcome.key, 0.0) for outcome in mine)) * 2 / len(present)
            for outcome in mine:
                outcome.gate_passes[label] = outcome.gate_passes.get(label, 0) + 1
        progress(f"pass {pass_index + 1}: {sum(outcome.problem is None for outcome in active)} benchmarks, "
                 f"{time.perf_counter() - began:.0f} s, " + ", ".join(f"{label} {spent_s:.0f} s" for label, spent_s in spent.items()))
    return outcomes


def screened(versions: list, threads: int, solvers: list[str] | None, devices: list[str], profile, stopping: Stopping,
             seed: int, progress=print) -> list[Outcome]:
    """Every benchmark of the named solvers (default: either version's) in passes, as long as stopping keeps it open."""
    def chosen(workers):
        return benchmarks_of(listings(workers, solvers), solvers, devices, profile)

    return measured(versions, threads, chosen, profile, seed, stopping, progress)


def verdicts(outcomes: list[Outcome], candidate: str, stopping: Stopping) -> list[dict]:
    """Each benchmark's verdict on the candidate, from its passes up to where stopping stops it."""
    live = sum(outcome.problem is None for outcome in outcomes)
    rows = []
    for outcome in outcomes:
        row = {"benchmark": outcome.key.name, "steps": outcome.steps, "calls": outcome.calls}
        if outcome.problem:
            rows.append({**row, "verdict": outcome.problem.verdict, "why": outcome.problem.why})
        else:
            rows.append({**row, **stopping.judged(outcome.values(candidate), live)})
    return rows


def confirming(threshold: float) -> Stopping:
    """The confirmation's stopping: fewer passes before any stops, a budget of its own that grows with the flags,
    FALSE_ALARM_RATE per benchmark."""
    return Stopping(threshold, CONFIRMATION_MIN_PASSES, CONFIRMATION_MAX_PASSES, CONFIRMATION_BUDGET_S, per_run=False,
                    budget_s_per_benchmark=CONFIRMATION_BUDGET_S_PER_FLAG)


def confirmation(versions: list, threads: int, flagged: dict, profile, stopping: Stopping, seed: int,
                 progress=print) -> dict:
    """Each version's flagged benchmarks (label -> [Key]) measured again alone, sized afresh, in fresh passes with a
    new seed, beside the baseline (versions[0]), as long as stopping keeps them open: label -> {benchmark: its
    verdict row}."""
    confirming = [versions[0]] + [version for version in versions[1:] if flagged.get(version.label)]
    keys = list(dict.fromkeys(key for version in confirming[1:] for key in flagged[version.label]))
    if not keys:
        return {}
    again = measured(confirming, threads, keys, profile, seed, stopping, lambda text: progress(f"confirmation {text}"),
                     {version.label: flagged[version.label] for version in confirming[1:]})
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
