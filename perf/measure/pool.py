"""The suite's worker processes: one per trial index, started together before the first timed benchmark, kept for the
session, each importing every selected solver first so that no benchmark is timed in another process state."""

import os
import sys

from perf.measure import TIMING_REFERENCE
from perf.measure.trials import SLOWDOWN_VARIABLE
from perf.measure.worker import ROOT, Version, Worker


class Pool:
    """workers[i]: the process that times trial i of every benchmark, on the CPUs of affinity where given, else free.
    Starting TensorFlow in a process takes seconds, so a worker serves every benchmark's trial i rather than one each
    (docs/measurement.md, "One process per trial index"). They start together, on first use, and every one has imported what it needs before any is
    timed: an import beside a timed round would slow it. A worker that stopped is replaced on the next use."""

    def __init__(self, size: int, threads: int, solvers: list[str], affinity: tuple[int, ...] = ()):
        self.size, self.threads, self.affinity = size, threads, affinity
        self.preload = list(dict.fromkeys([TIMING_REFERENCE[0], *solvers]))
        slowdown = os.environ.get(SLOWDOWN_VARIABLE)
        self.version = Version("suite", "this tree", ROOT, sys.executable,
                               ((SLOWDOWN_VARIABLE, slowdown),) if slowdown else ())
        self.workers: list[Worker | None] = [None] * size

    def __getitem__(self, index: int) -> Worker:
        if self.workers[index] is None or self.workers[index].process.poll() is not None:
            stopped = [slot for slot, worker in enumerate(self.workers) if worker is None or worker.process.poll() is not None]
            for slot in stopped:
                if self.workers[slot] is not None:
                    self.workers[slot].close()
                self.workers[slot] = Worker(self.version, self.threads, self.preload, self.affinity)
            for slot in stopped:  # every new one has imported its solvers before any round is timed
                self.workers[slot].ask({"op": "solvers", "only": []})
        return self.workers[index]

    def close(self):
        for worker in self.workers:
            if worker is not None:
                worker.close()
        self.workers = [None] * self.size

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
