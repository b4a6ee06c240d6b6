"""Several versions timed in the same passes as the gate times two, each judged on the passes its own gate gave it.

The noise study compares a control with many variants (identical copies, slowed copies, code regressions) and the
release study many releases; timing them in the same passes makes them live through the same states of the
machine. The gate (perf/gate/stages.py) speaks of two versions; what more versions need is here: each candidate
keeps the clock of its own gate, which would time it beside the first version alone, and a benchmark is timed in a
pass while some candidate's gate would time it.
"""

import random
import time
from dataclasses import dataclass, field, replace

from perf.gate import stages
from perf.gate.interleave import Outcome, prepared_outcomes, run_pass, started_for_pass
from perf.gate.verdict import Row


@dataclass
class SideBySide:
    """The outcomes of passes over several versions, and how many of them each candidate's own gate would have
    timed: (label, Key) -> passes."""
    outcomes: list[Outcome]
    gate_passes: dict = field(default_factory=dict)

    def seen_by(self, label: str, outcome: Outcome) -> list[float]:
        """label's log ratios of the outcome, cut to the passes its own gate gave it."""
        return outcome.values(label)[:self.gate_passes.get((label, outcome.key))]

    def as_its_gate_saw(self, label: str) -> list[Outcome]:
        """The outcomes with label's log ratios cut to the passes its own gate gave each benchmark."""
        return [replace(outcome, log_ratios={**outcome.log_ratios, label: outcome.log_ratios[label][
            :self.gate_passes.get((label, outcome.key))]}) if outcome.problem is None else outcome
                for outcome in self.outcomes]

    def verdicts(self, label: str, stopping: stages.Stopping) -> list[Row]:
        return stages.verdicts(self.as_its_gate_saw(label), label, stopping)


def measured(versions: list, threads: int, benchmarks, profile, seed: int, stopping: stages.Stopping, progress=print,
             flagged: dict | None = None, preload: list[str] | None = None) -> SideBySide:
    """Passes of fresh workers over the benchmarks (a function of the first pass's workers, which import the solvers
    in preload, default all, giving their Keys), each pass timing those that stopping keeps open for some candidate:
    every version but the first, each measured on its flagged benchmarks (label -> [Key]; default: all). A pass
    starts the first version and the candidates whose gates still time something. Each candidate's clock counts what its own gate would have spent: a pass's fixed cost and
    the trials of the benchmarks open for it, at 2/n of what they took in a pass of n versions."""
    rng, starts = random.Random(seed), {}
    labels = [version.label for version in versions]
    spent = dict.fromkeys(labels[1:], 0.0)
    found = SideBySide([])

    def wanted(label: str) -> list[Outcome]:
        return [outcome for outcome in found.outcomes if outcome.problem is None
                and (flagged is None or outcome.key in flagged[label])]

    for pass_index in range(stopping.max_passes):
        live = sum(outcome.problem is None for outcome in found.outcomes)
        open_for = {}
        for label in labels[1:]:
            mine = wanted(label)
            # Judged on the passes its own gate gave it: those timed later for other candidates' sake are not its.
            open_for[label] = [outcome for outcome in mine if stopping.keeps(
                found.seen_by(label, outcome), pass_index, spent[label], len(mine), live)]
        active = list({id(outcome): outcome for mine in open_for.values() for outcome in mine}.values())
        if pass_index and not active:
            break
        # The workers import the solvers they will time; the first pass's, the flagged ones' or preload.
        solvers = sorted({outcome.key.solver for outcome in active}) if pass_index else (
            sorted({key.solver for keys in flagged.values() for key in keys}) if flagged else preload)
        # A candidate whose gate has ended runs no pass: starting its worker and timing its trials would cost the
        # others' passes time and tell nothing.
        present = versions[:1] + [version for version in versions[1:] if not pass_index or open_for[version.label]]
        began = time.perf_counter()
        with started_for_pass(present, threads, pass_index, solvers) as workers:
            if not pass_index:
                found.outcomes = active = prepared_outcomes(workers, benchmarks(workers), profile)
                open_for = {label: wanted(label) for label in labels[1:]}
            trial_s = run_pass(workers, [version.label for version in present], active, pass_index, rng, starts)
        fixed_s = time.perf_counter() - began - sum(trial_s.values())
        for label, mine in open_for.items():
            if mine:
                spent[label] += (fixed_s + sum(trial_s.get(outcome.key, 0.0) for outcome in mine)) * 2 / len(present)
            for outcome in mine:
                found.gate_passes[label, outcome.key] = found.gate_passes.get((label, outcome.key), 0) + 1
        timed = sum(outcome.problem is None for outcome in active)
        progress(f"pass {pass_index + 1}: {timed} benchmark{'s' * (timed != 1)}, "
                 f"{time.perf_counter() - began:.0f} s, " + ", ".join(f"{label} {spent_s:.0f} s"
                                                                     for label, spent_s in spent.items()))
    return found


def confirmation(versions: list, threads: int, flagged: dict, profile, stopping: stages.Stopping, seed: int,
                 progress=print) -> dict:
    """Each version's flagged benchmarks (label -> [Key]) measured again alone, as the gate confirms, in the same
    fresh passes beside the first version: label -> {benchmark: its verdict row}."""
    confirming = [versions[0]] + [version for version in versions[1:] if flagged.get(version.label)]
    if len(confirming) == 1:
        return {}
    keys = list(dict.fromkeys(key for version in confirming[1:] for key in flagged[version.label]))
    again = measured(confirming, threads, lambda workers: keys, profile, seed, stopping,
                     lambda text: progress(f"confirmation {text}"),
                     {version.label: flagged[version.label] for version in confirming[1:]})
    found = {}
    for version in confirming[1:]:
        names = {key.name for key in flagged[version.label]}
        found[version.label] = {row.benchmark: row for row in again.verdicts(version.label, stopping)
                                if row.benchmark in names}
    return found
