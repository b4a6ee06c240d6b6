"""The gate on instructions (--count): both versions counted under callgrind in fresh processes, a pair a pass, each
benchmark judged by the gate's rule on the log ratio of the candidate's instructions a step to the baseline's.

A count needs no quiet CPU (perf/measure/count.py), so both versions' processes of a pass run at once, on every CPU.
Its stages are the timed gate's: a screen, more passes for the undecided within a budget, a confirmation of each
flag in fresh passes; what differs is the measure, the threshold and the passes a stage takes (docs/gate.md,
"Counted")."""

import math
import random
import time

from perf.gate.interleave import Outcome, Unjudged, availability, benchmarks_of, listings, workers_running
from perf.gate.stages import Stopping, fixed, flagged_keys, verdicts, with_confirmation
from perf.judge.words import ERROR, SKIPPED
from perf.measure import counting

# Each pass costs a TensorFlow import and every open benchmark's counts under valgrind, a minute or more: few passes
# before any benchmark may stop, and a budget in proportion.
COUNTED_MIN_PASSES = 3
COUNTED_MAX_PASSES = 10
COUNTED_BUDGET_S = 600
CONFIRMATION_MIN_PASSES = 3
CONFIRMATION_MAX_PASSES = 6
CONFIRMATION_BUDGET_S = 300
NOT_COUNTED = "a GPU's work is not instructions of the worker process: the counted gate counts CPU benchmarks alone"


def screening(threshold: float, budget_s: float = COUNTED_BUDGET_S, passes: int | None = None) -> Stopping:
    stopping = Stopping(threshold, COUNTED_MIN_PASSES, COUNTED_MAX_PASSES, budget_s)
    return fixed(stopping, passes) if passes else stopping


def confirming(threshold: float) -> Stopping:
    return Stopping(threshold, CONFIRMATION_MIN_PASSES, CONFIRMATION_MAX_PASSES, CONFIRMATION_BUDGET_S, per_run=False)


def listed(versions: list, threads: int, solvers: list[str] | None, devices: list[str], profile,
           only=None) -> list[Outcome]:
    """An Outcome per benchmark, with why it cannot be compared where it cannot, from uncounted workers' listings."""
    with workers_running(versions, threads, solvers) as workers:
        found = listings(workers, solvers)
    keys = [key for key in benchmarks_of(found, solvers, devices, profile) if only is None or key in only]
    outcomes = []
    for key in keys:
        outcome = Outcome(key, unjudged=availability(key, found, [version.label for version in versions]))
        if outcome.unjudged is None and key.device != "cpu":
            outcome.unjudged = Unjudged(SKIPPED, f"{SKIPPED}: {NOT_COUNTED}")
        outcome.log_ratios = {version.label: [] for version in versions[1:]}
        outcomes.append(outcome)
    return outcomes


def measured(versions: list, threads: int, outcomes: list[Outcome], stopping: Stopping, seed: int,
             progress=print) -> None:
    """Passes of fresh counted processes, the versions' at once, for the outcomes stopping keeps open: each pass adds
    the candidate's log ratio to the baseline's instructions a step, or marks the outcome ERROR with why. Both
    versions of a pass see their trees at paths of one length, drawn anew each pass: the passes sample memory
    layouts, which move a count (counting.LAYOUTS), and the interval over them holds that."""
    baseline, candidate = versions[0].label, versions[-1].label
    rng, spent_s = random.Random(seed), 0.0
    for pass_index in range(stopping.max_passes):
        live = [outcome for outcome in outcomes if outcome.unjudged is None]
        open_now = [outcome for outcome in live if stopping.keeps(outcome.values(candidate), pass_index, spent_s,
                                                                   len(live), len(live))]
        if not open_now:
            break
        began = time.perf_counter()
        keys = [outcome.key for outcome in open_now]
        layout = rng.randrange(counting.LAYOUTS)
        counts = dict(zip((version.label for version in versions),
                          counting.counted_processes([(version, keys, layout) for version in versions], threads)))
        for outcome in open_now:
            mine, theirs = counts[candidate][outcome.key], counts[baseline][outcome.key]
            if why := next((found for found in (theirs, mine) if isinstance(found, str)), None):
                label = baseline if isinstance(theirs, str) else candidate
                outcome.unjudged = Unjudged(ERROR, f"{ERROR} on {label}: {why}")
                continue
            outcome.log_ratios[candidate].append((pass_index, False,
                                                  math.log(mine["per_step"] / theirs["per_step"])))
            outcome.steps = mine["counts"][1][0] - mine["counts"][0][0]
        pass_s = time.perf_counter() - began
        spent_s += pass_s
        progress(f"counted pass {pass_index + 1}: {len(open_now)} benchmark{'s' * (len(open_now) != 1)}, "
                 f"{pass_s:.0f} s, {spent_s:.0f} s in all")


def screened(versions: list, threads: int, solvers, devices, profile, stopping: Stopping, seed: int, progress=print,
             only=None) -> list[Outcome]:
    outcomes = listed(versions, threads, solvers, devices, profile, only)
    measured(versions, threads, outcomes, stopping, seed, progress)
    return outcomes


def confirmed(versions: list, threads: int, outcomes: list[Outcome], rows: list, threshold: float, seed: int,
              progress=print) -> list:
    """rows with each flagged benchmark counted again alone in fresh passes, as the timed gate's stages.confirmed."""
    keys = flagged_keys(outcomes, rows)
    if not keys:
        return rows
    again = [Outcome(key, log_ratios={version.label: [] for version in versions[1:]}) for key in keys]
    stopping = confirming(threshold)
    measured(versions, threads, again, stopping, seed, lambda text: progress(f"confirmation {text}"))
    return with_confirmation(rows, {row.benchmark: row for row in verdicts(again, versions[-1].label, stopping)})
