"""Every benchmark's trials on every version, interleaved: shuffled pass by pass, each pair back to back.

A slow state of the machine then hits both trials of a pair, or another benchmark each time
(randomized interleaved trials: Abedi & Brecht, ICPE 2017; asv's `continuous`). A trial is a fresh
setup, a warm-up and a few rounds of `steps` steps (times `calls` calls, for solvers whose run
takes microseconds), sized once per benchmark on the first version so that a round takes about ROUND_S.
"""

import random
from dataclasses import dataclass, field

from perf.gate.versions import GateError
from perf.report.rows import Key

# Short rounds: a pair of trials then spans well under a second, inside one machine state.
ROUND_S = 0.03
MIN_STEPS = 10  # the probe that sizes the rounds, and the fewest steps a round runs
MOST_CALLS = 10_000
ROUNDS_PER_TRIAL = 3
# Eight: the fewest whose 90% interval of the median drops the lowest and the highest trial, so one trial in
# a slow state (or a TF1 session in its slower mode) cannot decide a verdict alone.
DEFAULT_TRIALS = 8
SEED = 20261130  # the shuffles are seeded, so a rerun replays the same order


@dataclass
class Outcome:
    """One benchmark's trials on each version, or why it has none."""
    key: Key
    steps: int = 0
    calls: int = 1  # calls of run(steps) a round
    trials: dict = field(default_factory=dict)  # version label -> [trial dicts]
    problem: str | None = None  # "missing", "new", "error: ...", "skipped: ..."


def listings(workers: dict) -> dict:
    """Version label -> {solver: {device: why it cannot run there, or None}}."""
    found = {}
    for label, worker in workers.items():
        reply = worker.ask({"op": "solvers"})
        if "solvers" not in reply:
            raise GateError(f"the {label}, {worker.version.description}, cannot list its solvers: {reply.get('error')}")
        found[label] = reply["solvers"]
    return found


def benchmarks_of(found: dict, solvers: list[str] | None, devices: list[str], profile) -> list[Key]:
    """Every benchmark of the named solvers, or of every version's registry: one a version lacks is not left out."""
    known = list(dict.fromkeys(name for listing in found.values() for name in listing))
    if unknown := [name for name in solvers or () if name not in known]:
        raise GateError(f"--solvers: no version has {', '.join(unknown)}; they have {', '.join(known)}")
    names = solvers or known
    return [Key(name, device, n) for name in names for device in devices for n in profile.sizes]


def interleaved(workers: dict, found: dict, benchmarks: list[Key], trials: int, profile, seed: int = SEED,
                progress=None) -> list[Outcome]:
    """Every benchmark's trials on every version, shuffled pass by pass; workers: version label -> Worker, found:
    their listings()."""
    labels = list(workers)
    outcomes = [Outcome(key) for key in benchmarks]
    for outcome in outcomes:
        outcome.problem = availability_problem(outcome.key, found, labels)
        if outcome.problem is None:
            planned(workers[labels[0]], outcome, profile.steps_at(outcome.key.n))
            outcome.trials = {label: [] for label in labels}
    rng = random.Random(seed)
    live = [outcome for outcome in outcomes if outcome.problem is None]
    for trial in range(trials):
        for outcome in rng.sample(live, len(live)):
            for label in rng.sample(labels, len(labels)):
                if outcome.problem:
                    break
                key = outcome.key
                reply = workers[label].ask({"op": "trial", "solver": key.solver, "device": key.device, "n": key.n,
                                            "steps": outcome.steps, "calls": outcome.calls, "rounds": ROUNDS_PER_TRIAL})
                if "trial" in reply:
                    outcome.trials[label].append(reply["trial"])
                else:
                    outcome.problem = f"error on {label}: {reply.get('error') or reply.get('missing')}"
        if progress:
            progress(f"pass {trial + 1}/{trials} done")
    return outcomes


def availability_problem(key: Key, found: dict, labels: list[str]) -> str | None:
    """Why a benchmark cannot be compared (lost, new, skipped everywhere, or lost by a version), or None."""
    present = [label for label in labels if key.device in found[label].get(key.solver, {})]
    if len(present) < len(labels):
        return "new" if labels[0] not in present else "missing"
    reasons = {label: found[label][key.solver][key.device] for label in labels}
    if all(reasons.values()):
        return f"skipped: {reasons[labels[0]]}"
    if reasons[labels[0]]:
        return f"new: the baseline cannot run it ({reasons[labels[0]]})"
    if lacking := [label for label in labels if reasons[label]]:
        return f"error on {lacking[0]}: {reasons[lacking[0]]}"
    return None


def planned(worker, outcome: Outcome, most_steps: int) -> None:
    """The steps and calls of every round of the benchmark, sized on one version so that all time the same work."""
    key = outcome.key
    reply = worker.ask({"op": "plan", "solver": key.solver, "device": key.device, "n": key.n, "most_steps": most_steps,
                        "round_s": ROUND_S, "probe_steps": MIN_STEPS, "most_calls": MOST_CALLS})
    if "steps" in reply:
        outcome.steps, outcome.calls = reply["steps"], reply["calls"]
    else:
        outcome.problem = f"error on {worker.version.label} while sizing its rounds: {reply.get('error') or reply.get('missing')}"
