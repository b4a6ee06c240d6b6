"""The suite's workers: a worker set (a process per framework, perf/measure/workers.py) per trial index, started
together before the first timed benchmark and kept for the session, each importing the selected solvers first so that
no benchmark is timed in another process state; past the profile's trials, a fresh one a pass."""

import os
import sys

from perf.measure import TIMING_REFERENCE, cpus
from perf.measure.trials import SLOWDOWN_VARIABLE
from perf.measure.worker import ROOT, Version
from perf.measure.workers import WorkerSet


def imported(worker_sets) -> None:
    """Once these fresh sets have all imported their solvers: an import beside a timed round would slow it."""
    for fresh in worker_sets:
        fresh.ask({"op": "solvers", "only": []})


def kept(pair: tuple[int, WorkerSet] | None, index: int) -> WorkerSet | None:
    """pair's worker set where it is pass index's and still running; else None, the set closed."""
    if pair is None:
        return None
    if pair[0] == index and not pair[1].stopped():
        return pair[1]
    pair[1].close()
    return None


class Pool:
    """workers[i]: the worker set that times trial i of every benchmark, for the session (why: docs/measurement.md,
    "A process per trial"), on the CPUs of affinity where given, else free. They start together on first use, and all
    have imported before any is timed; one that stopped is replaced on the next use."""

    def __init__(self, size: int, threads: int, solvers: list[str], affinity: tuple[int, ...] = ()):
        self.size, self.threads, self.affinity, self.solvers = size, threads, affinity, solvers
        slowdown = os.environ.get(SLOWDOWN_VARIABLE)
        self.version = Version("suite", "this tree", ROOT, sys.executable,
                               ((SLOWDOWN_VARIABLE, slowdown),) if slowdown else ())
        self.workers: list[WorkerSet | None] = [None] * size
        self.extra_worker: tuple[int, WorkerSet] | None = None  # (pass index, its set), past the profile's trials
        self.next_worker: tuple[int, WorkerSet] | None = None  # the next such pass's, importing while this one times

    def new_worker_set(self, slot: int, eager: list[str] | None = None,
                       import_cpus: tuple[int, ...] | None = None) -> WorkerSet:
        # The timing reference is timed beside each benchmark, in its process: every process imports it. Pinned, the
        # workers import on import_cpus, by default every CPU this process may use, in turn (as the gate's): on the
        # one CPU they are timed on, the pool's start took twice as long (docs/results/anatomy/README.md).
        if import_cpus is None:
            may_use = tuple(cpus.allowed()) if self.affinity else ()
            turn = slot % len(may_use) if may_use else 0
            import_cpus = may_use[turn:] + may_use[:turn]
        return WorkerSet(self.version, self.threads, self.solvers, self.affinity, import_cpus,
                         alongside=(TIMING_REFERENCE[0],), eager=eager)

    def __getitem__(self, index: int) -> WorkerSet:
        if index >= self.size:
            return self.extra(index)
        if self.workers[index] is None or self.workers[index].stopped():
            stopped = [slot for slot, worker_set in enumerate(self.workers)
                       if worker_set is None or worker_set.stopped()]
            for slot in stopped:
                if self.workers[slot] is not None:
                    self.workers[slot].close()
                self.workers[slot] = self.new_worker_set(slot)
            imported(self.workers[slot] for slot in stopped)  # all started first, so that they import in parallel
        return self.workers[index]

    def extra(self, index: int, solvers: list[str] | None = None) -> WorkerSet:
        """The set of a pass past the profile's trials (perf/measure/schedule.py): a fresh one for that pass alone, the
        previous extra pass's closed first. Only the processes of the frameworks of `solvers`, the pass's (default:
        every selected one's), start, each importing every selected solver of its framework as the first sets' did:
        a pass left with NumPy benchmarks alone starts no TensorFlow."""
        if kept(self.extra_worker, index) is None:
            ready, self.next_worker = kept(self.next_worker, index), None
            self.extra_worker = (index, ready or self.new_worker_set(index, solvers))
            imported([self.extra_worker[1]])
            self.next_worker = self.prestarted(index + 1, solvers)
        return self.extra_worker[1]

    def prestarted(self, index: int, solvers: list[str] | None) -> tuple[int, WorkerSet] | None:
        """Pinned, where a CPU is left that the workers are not timed on: the next extra pass's set, started now with
        this pass's frameworks (the next pass's benchmarks are some of this one's), importing on that CPU while this
        pass times on its own; else None. A framework the next pass needs that this one did not starts on first use."""
        spare = tuple(cpu for cpu in cpus.allowed() if cpu not in self.affinity) if self.affinity else ()
        return (index, self.new_worker_set(index, solvers, spare)) if spare else None

    def close(self):
        for worker_set in [*self.workers, *(pair[1] for pair in (self.extra_worker, self.next_worker) if pair)]:
            if worker_set is not None:
                worker_set.close()
        self.workers, self.extra_worker, self.next_worker = [None] * self.size, None, None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
