"""Several versions timed in the same passes as the gate times two, each judged on the passes its own gate gave it.

The noise study compares a control with many variants (identical copies, slowed copies, code regressions) and the
release study many releases; timing them in the same passes makes them live through the same states of the
machine. The gate's loop (perf/gate/stages.py, measured) times them, on a policy of this module's: each candidate
keeps the clock of its own gate, which would time it beside the first version alone, and a benchmark is timed in a
pass while some candidate's gate would time it.
"""

from dataclasses import dataclass, field, replace

from perf import gate
from perf.judge.rules import Verdict


@dataclass
class SideBySide:
    """The passes' policy over several versions, the first the baseline of every other (the candidates), each
    measured on its flagged benchmarks (label -> [Key]; None: all); and what they gave: the outcomes, and how many
    passes each candidate's own gate would have timed, (label, Key) -> passes."""
    stopping: gate.Stopping
    candidates: list[str]
    flagged: dict | None = None
    outcomes: list[gate.Outcome] = field(default_factory=list)
    gate_passes: dict = field(default_factory=dict)
    spent_s: dict = field(init=False)  # label -> the seconds its own gate would have spent

    def __post_init__(self):
        self.spent_s = dict.fromkeys(self.candidates, 0.0)

    def seen_by(self, label: str, outcome: gate.Outcome) -> list[float]:
        """label's log ratios of the outcome, cut to the passes its own gate gave it."""
        return outcome.values(label)[:self.gate_passes.get((label, outcome.key))]

    def as_its_gate_saw(self, label: str) -> list[gate.Outcome]:
        """The outcomes with label's log ratios cut to the passes its own gate gave each benchmark."""
        return [replace(outcome, log_ratios={**outcome.log_ratios, label: outcome.log_ratios[label][
            :self.gate_passes.get((label, outcome.key))]}) if outcome.unjudged is None else outcome
                for outcome in self.outcomes]

    def verdicts(self, label: str, stopping: gate.Stopping) -> list[Verdict]:
        return gate.verdicts(self.as_its_gate_saw(label), label, stopping)

    def open_for(self, outcomes: list[gate.Outcome], pass_index: int) -> dict[str, list[gate.Outcome]]:
        """label -> the outcomes its own gate would time in this pass."""
        live = sum(outcome.unjudged is None for outcome in outcomes)
        found = {}
        for label in self.candidates:
            mine = [outcome for outcome in outcomes if outcome.unjudged is None
                    and (self.flagged is None or outcome.key in self.flagged[label])]
            # Judged on the passes its own gate gave it: those timed later for other candidates' sake are not its.
            found[label] = [outcome for outcome in mine if self.stopping.keeps(
                self.seen_by(label, outcome), pass_index, self.spent_s[label], len(mine), live)]
        return found

    @staticmethod
    def round_order(order: list, index: int) -> list:
        """The versions' order in round `index` of a trial: row index of a Williams design over order (0, 1, n-1, 2,
        n-2, ..., each row the one before shifted by one, then the rows reversed where n is odd), so that over its
        rows each version comes right after every other equally often. A version that disturbs the round after its
        own (its timing, its caches) then disturbs every other alike, where turning a fixed cycle would disturb one
        always. Two versions: A B, B A, as the gate times them."""
        n = len(order)
        first = [0] + [(step + 1) // 2 if step % 2 else n - step // 2 for step in range(1, n)]
        row = [order[(position + index) % n] for position in first]
        return row[::-1] if n % 2 and index // n % 2 else row

    def passed(self, open_for: dict, trial_s: dict, pass_s: float, versions: int) -> str:
        """Each candidate's clock charged what its own gate would have spent on the pass: its fixed cost and the
        trials of the benchmarks open for it, at 2/n of what they took in a pass of n versions."""
        fixed_s = pass_s - sum(trial_s.values())
        for label, mine in open_for.items():
            if mine:
                self.spent_s[label] += (fixed_s + sum(trial_s.get(outcome.key, 0.0) for outcome in mine)) * 2 / versions
            for outcome in mine:
                self.gate_passes[label, outcome.key] = self.gate_passes.get((label, outcome.key), 0) + 1
        return ", ".join(f"{label} {spent_s:.0f} s" for label, spent_s in self.spent_s.items())


def measured(versions: list, threads: int, benchmarks, profile, seed: int, stopping: gate.Stopping, progress=print,
             flagged: dict | None = None, preload: list[str] | None = None) -> SideBySide:
    """The gate's passes over the benchmarks (a function of the first pass's listings of the solvers in preload,
    default all, which its workers import, giving their Keys), each timing those that stopping keeps open for some
    candidate (every version but the first, each measured on its flagged benchmarks, label -> [Key]; default: all). A
    pass starts the first version and the candidates whose gates still time something."""
    found = SideBySide(stopping, [version.label for version in versions[1:]], flagged)
    found.outcomes = gate.measured(versions, threads, benchmarks, profile, seed, found, progress, preload)
    return found


def confirmation(versions: list, threads: int, flagged: dict, profile, stopping: gate.Stopping, seed: int,
                 progress=print) -> dict:
    """Each version's flagged benchmarks (label -> [Key]) measured again alone, as the gate confirms, in the same
    fresh passes beside the first version: label -> {benchmark: its verdict row}."""
    confirming = [versions[0]] + [version for version in versions[1:] if flagged.get(version.label)]
    if len(confirming) == 1:
        return {}
    keys = list(dict.fromkeys(key for version in confirming[1:] for key in flagged[version.label]))
    again = measured(confirming, threads, lambda workers: keys, profile, seed, stopping,
                     lambda text: progress(f"confirmation {text}"),
                     {version.label: flagged[version.label] for version in confirming[1:]},
                     sorted({key.solver for key in keys}))
    found = {}
    for version in confirming[1:]:
        names = {key.name for key in flagged[version.label]}
        found[version.label] = {row.benchmark: row for row in again.verdicts(version.label, stopping)
                                if row.benchmark in names}
    return found
