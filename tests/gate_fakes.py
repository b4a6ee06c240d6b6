"""Fake gate workers that answer as perf/measure/worker.py does, for the gate's tests."""

import random
import sys
from contextlib import contextmanager

from perf.gate import stages
from perf.gate.interleave import ROUND_S, alternated, listings, prepared_outcomes, run_pass
from perf.gate.versions import ROOT, Version
from perf.measure import Key
from perf.measure.profiles import PROFILES

QUICK = PROFILES["quick"]


class FakeWorker:
    """Answers like perf/measure/worker.py, from a listing {solver: {device: why not, or None}}: each round of solver
    takes seconds(solver, label, round index); remembers every request."""

    def __init__(self, listing, label="baseline", broken=(), seconds=None, log=None):
        self.listing, self.broken, self.label = listing, broken, label
        self.seconds = seconds or (lambda solver, label, index: 1e-4)
        self.version = Version(label, f"the fake {label}", ROOT, sys.executable)
        self.asked, self.log, self.open = [], log if log is not None else [], None

    def ask(self, request):
        self.asked.append(request)
        self.log.append((self.label, request["op"], request.get("solver")))
        if request["op"] == "solvers":
            return {"solvers": self.listing}
        if request["op"] == "round":
            self.open[1] += 1
            return {"round_s": self.seconds(self.open[0], self.label, self.open[1])}
        if request["op"] == "close":
            return {"closed": True}
        if request["solver"] in self.broken:
            return {"error": "ValueError: broken"}
        if request["op"] == "plan":
            return {"steps": min(request["most_steps"], int(ROUND_S / 1e-4)), "calls": 1}
        self.open = [request["solver"], 0]
        return {"setup_s": 0.01, "first_run_s": 1e-4}


def cpu_only(*names, **reasons):
    return {name: {"cpu": reasons.get(name)} for name in names}


def fakes(listing, **options):
    log = []
    return {label: FakeWorker(listing, label, log=log, **options.get(label, {})) for label in ("baseline", "candidate")}


def passes(workers, names, count=4, seed=7):
    """count passes of the fake workers over these cpu benchmarks at n = 1000; the outcomes by solver."""
    outcomes = prepared_outcomes(workers, [Key(name, "cpu", 1000) for name in names], QUICK,
                                 listings(workers, sorted(names)))
    rng, starts = random.Random(seed), {}
    for pass_index in range(count):
        run_pass(workers, list(workers), outcomes, pass_index, rng, starts, alternated)
    return {outcome.key.solver: outcome for outcome in outcomes}


VERSIONS = [Version("baseline", "a", ROOT, sys.executable), Version("candidate", "b", ROOT, sys.executable)]


def fake_workers_for_every_version(monkeypatch, listing, seconds):
    """The gate's passes (its own, or the research's side by side) on fake workers, a fresh one per version whatever
    its label, answering with these round times. Returns the (labels, solvers) each pass started its workers with."""
    started = []

    @contextmanager
    def workers_for_pass(versions, threads, pass_index, solvers=None):
        started.append(([version.label for version in versions], solvers))
        log = []
        yield {version.label: FakeWorker(listing, version.label, seconds=seconds, log=log) for version in versions}

    monkeypatch.setattr(stages, "workers_for_pass", workers_for_pass)
    return started
