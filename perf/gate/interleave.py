"""Every benchmark's trials on every version, pass by pass: fresh worker processes each pass, rounds paired in turn.

A pass, its trials and rounds, the versions' order and why the pass is the unit: docs/gate.md, "How it measures:
passes"; the figures behind each choice: docs/results/gate-design.md.
"""

import math
import os
import random
import statistics
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

from perf.gate.versions import GateError, GateUsageError
from perf.judge.words import ERROR, MISSING, NEW, SKIPPED
from perf.measure import Key
from perf.measure import cpus
from perf.measure.workers import WorkerSet
from solvers import REGISTRY

# The gate pins TensorFlow to one thread, unlike the benchmarks (TensorFlow's defaults, as the seed ran): in
# A/A runs its intervals were narrower pinned, so a real slowdown lies beyond them sooner (docs/gate.md).
GATE_THREADS = 1

# Short rounds: a pair of them spans well under a tenth of a second, inside one machine state.
ROUND_S = 0.03
MIN_STEPS = 10  # the probe that sizes the rounds, and the fewest steps a round runs
MOST_CALLS = 10_000
ROUNDS_PER_TRIAL = 6


class Unjudged(NamedTuple):
    """Why a benchmark has no passes to judge: the verdict it stands for, and the reason, as the report says it."""

    verdict: str  # missing, new, error or skipped
    why: str


@dataclass
class Outcome:
    """One benchmark's measurements, or why it has none."""
    key: Key
    steps: int = 0
    calls: int = 1  # calls of run(steps) a round
    # version label -> [(pass, opened before the first version, median over the trial's rounds of
    # log(its round / the first version's round beside it))]; the first version has none
    log_ratios: dict = field(default_factory=dict)
    # version label -> [(pass, the median of the trial's rounds in seconds)]; every version has them
    round_s: dict = field(default_factory=dict)
    unjudged: Unjudged | None = None

    def values(self, label: str) -> list[float]:
        """The label's log ratios, pass by pass."""
        return [value for *_, value in self.log_ratios[label]]


def listings(workers: dict, only: list[str] | None = None) -> dict:
    """Version label -> {solver: {device: why it cannot run there, or None}}, for the solvers named in only."""
    found = {}
    for label, worker in workers.items():
        reply = worker.ask({"op": "solvers", "only": only})
        if "solvers" not in reply:
            raise GateError(f"the {label}, {worker.version.description}, cannot list its solvers: {reply.get('error')}")
        found[label] = reply["solvers"]
    return found


def benchmarks_of(found: dict, solvers: list[str] | None, devices: list[str], profile) -> list[Key]:
    """Every benchmark of the named solvers, or of every version's registry: one a version lacks is not left out."""
    known = list(dict.fromkeys(name for listing in found.values() for name in listing))
    if unknown := [name for name in solvers or () if name not in known]:
        # The versions listed only the names asked for (importing no other package), so the hint is this tree's.
        raise GateUsageError(f"--solvers: no version has {', '.join(unknown)} (this tree's solvers: "
                             f"{', '.join(REGISTRY)})")
    names = solvers or known
    return [Key(name, device, n) for name in names for device in devices for n in profile.sizes]


def availability(key: Key, found: dict, labels: list[str]) -> Unjudged | None:
    """Why a benchmark cannot be compared (lost, new, skipped everywhere, or lost by a version), or None."""
    present = [label for label in labels if key.device in found[label].get(key.solver, {})]
    if not present:  # a device the solver does not run on, in either version: nothing to time, not a new benchmark
        return Unjudged(SKIPPED, f"{SKIPPED}: {key.solver} does not run on {key.device}")
    if len(present) < len(labels):
        return Unjudged(NEW, NEW) if labels[0] not in present else Unjudged(MISSING, MISSING)
    reasons = {label: found[label][key.solver][key.device] for label in labels}
    if all(reasons.values()):
        return Unjudged(SKIPPED, f"{SKIPPED}: {reasons[labels[0]]}")
    if reasons[labels[0]]:
        return Unjudged(NEW, f"{NEW}: the baseline cannot run it ({reasons[labels[0]]})")
    if lacking := [label for label in labels if reasons[label]]:
        return Unjudged(ERROR, f"{ERROR} on {lacking[0]}: {reasons[lacking[0]]}")
    return None


def planned(worker, outcome: Outcome, most_steps: int) -> None:
    """The steps and calls of every round of the benchmark, sized on one version so that all time the same work."""
    key = outcome.key
    reply = worker.ask({"op": "plan", "solver": key.solver, "device": key.device, "n": key.n, "most_steps": most_steps,
                        "round_s": ROUND_S, "probe_steps": MIN_STEPS, "most_calls": MOST_CALLS})
    if "steps" in reply:
        outcome.steps, outcome.calls = reply["steps"], reply["calls"]
    else:
        why = reply.get("error") or reply.get("missing")
        outcome.unjudged = Unjudged(ERROR, f"{ERROR} on {worker.version.label} while sizing its rounds: {why}")


def prepared_outcomes(workers: dict, benchmarks: list[Key], profile, found: dict) -> list[Outcome]:
    """An Outcome per benchmark: why it cannot be compared, or its rounds sized on the first version; found: the
    workers' listings of the benchmarks' solvers (listings())."""
    labels = list(workers)
    outcomes = [Outcome(key) for key in benchmarks]
    for outcome in outcomes:
        outcome.unjudged = availability(outcome.key, found, labels)
        if outcome.unjudged is None:
            planned(workers[labels[0]], outcome, profile.steps_at(outcome.key.n))
            outcome.log_ratios = {label: [] for label in labels[1:]}
    return outcomes


def run_pass(workers: dict, labels: list[str], outcomes: list[Outcome], pass_index: int, rng: random.Random,
             starts: dict, round_order) -> dict:
    """One pass on freshly started workers: one trial of every live outcome on every version (labels, the baseline
    first), its rounds in round_order (of the versions and the round's index); Key -> the seconds each took. starts:
    benchmark -> the offset of its first opener, drawn once a run, so that over the passes each version opens it
    first as often as the others (one apart when the count is odd)."""
    live = [outcome for outcome in outcomes if outcome.unjudged is None]
    seconds = {}
    for outcome in rng.sample(live, len(live)):
        first = (starts.setdefault(outcome.key, rng.randrange(len(labels))) + pass_index) % len(labels)
        began = time.perf_counter()
        trial(workers, labels[first:] + labels[:first], labels[0], outcome, pass_index, round_order)
        seconds[outcome.key] = time.perf_counter() - began
    return seconds


@contextmanager
def workers_running(versions: list, threads: int, preload: list[str] | None = None):
    """A worker per version, label -> WorkerSet (a process per framework), each with the solvers in preload imported
    (default: all); closed on the way out. Each is timed on the gate's CPUs (gate_affinity(); why: docs/gate.md) and
    imports first on the CPUs this process may use, each version from another, so that they start in parallel."""
    affinity, may_use = gate_affinity(), cpus.allowed()
    with ExitStack() as stack:
        workers = {}
        for index, version in enumerate(versions):
            turn = index % len(may_use)
            worker = WorkerSet(version, threads, preload, affinity, tuple(may_use[turn:] + may_use[:turn]))
            stack.callback(worker.close)
            workers[version.label] = worker
        yield workers


def gate_affinity() -> tuple[int, ...]:
    """The CPUs the gate's workers are timed on: the list cpus.AFFINITY_VARIABLE holds (python -m perf.gate
    --cpu-affinity sets it), else the run's quiet CPU, the same at every pass (cpus.chosen_quiet_cpu)."""
    return cpus.cpu_list(os.environ.get(cpus.AFFINITY_VARIABLE) or cpus.QUIET)


def workers_for_pass(versions: list, threads: int, pass_index: int, solvers: list[str] | None = None):
    """Fresh workers with these solvers imported (default: all), started in an order that turns from pass to pass."""
    turn = pass_index % len(versions)
    return workers_running(versions[turn:] + versions[:turn], threads, solvers)


def alternated(order: list, index: int) -> list:
    """The versions' order in round `index` of a trial: A B, B A, ..., each first in half the rounds."""
    return order if index % 2 == 0 else order[::-1]


def trial(workers: dict, order: list[str], baseline: str, outcome: Outcome, pass_index: int, round_order) -> None:
    """A trial on every version, opened in order, its rounds timed in turn; each version's log ratios recorded."""
    key = outcome.key
    opened = []
    try:
        for label in order:
            reply = workers[label].ask({"op": "open", "solver": key.solver, "device": key.device, "n": key.n,
                                        "steps": outcome.steps, "calls": outcome.calls})
            opened.append(label)
            if "setup_s" not in reply:
                outcome.unjudged = Unjudged(ERROR, f"{ERROR} on {label}: {reply.get('error') or reply.get('missing')}")
                return
        rounds = {label: [] for label in order}
        for index in range(ROUNDS_PER_TRIAL):
            for label in round_order(order, pass_index * ROUNDS_PER_TRIAL + index):  # rows go on from pass to pass
                reply = workers[label].ask({"op": "round"})
                if "round_s" not in reply:
                    outcome.unjudged = Unjudged(ERROR, f"{ERROR} on {label}: {reply.get('error')}")
                    return
                rounds[label].append(reply["round_s"])
    finally:
        for label in opened:
            reply = workers[label].ask({"op": "close"})
            if "error" in reply and outcome.unjudged is None:
                outcome.unjudged = Unjudged(ERROR, f"{ERROR} on {label}: {reply['error']}")
    if outcome.unjudged:
        return
    for label in order:
        outcome.round_s.setdefault(label, []).append((pass_index, statistics.median(rounds[label])))
        if label != baseline:
            value = statistics.median(math.log(mine / theirs) for mine, theirs in zip(rounds[label], rounds[baseline]))
            outcome.log_ratios[label].append((pass_index, order.index(label) < order.index(baseline), value))
