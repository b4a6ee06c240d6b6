"""The suite's worker processes: one per trial index, started together before the first timed benchmark, kept for the
session, each importing the selected solvers first so that no benchmark is timed in another process state; past the
profile's trials, one fresh worker a pass. Each is a process per framework (perf/measure/workers.py)."""

import os
import sys

from perf.measure import TIMING_REFERENCE, cpus
from perf.measure.trials import SLOWDOWN_VARIABLE
from perf.measure.worker import ROOT, Version
from perf.measure.workers import Workers


def imported(workers) -> None:
    """Once these fresh workers have all imported their solvers: an import beside a timed round would slow it."""
    for fresh in workers:
        fresh.ask({"op": "solvers", "only": []})


class Pool:
    """workers[i]: the processes that time trial i of every benchmark, on the CPUs of affinity where given, else free.
    Starting TensorFlow in a process takes seconds, so a worker serves every benchmark's trial i rather than one each
    (docs/measurement.md, "One process per trial index"). They start together, on first use, and every one has
    imported what it needs before any is timed: an import beside a timed round on its CPU would slow it (pinned, the
    next extra pass's worker imports meanwhile on a CPU the run does not time on: prestarted). A worker that stopped
    is replaced on the next use."""

    def __init__(self, size: int, threads: int, solvers: list[str], affinity: tuple[int, ...] = ()):
        self.size, self.threads, self.affinity, self.solvers = size, threads, affinity, solvers
        slowdown = os.environ.get(SLOWDOWN_VARIABLE)
        self.version = Version("suite", "this tree", ROOT, sys.executable,
                               ((SLOWDOWN_VARIABLE, slowdown),) if slowdown else ())
        self.workers: list[Workers | None] = [None] * size
        self.extra_worker: tuple[int, Workers] | None = None  # (pass index, its worker), past the profile's trials
        self.next_worker: tuple[int, Workers] | None = None  # the next such pass's, importing while this one times

    def started(self, slot: int, eager: list[str] | None = None, import_cpus: tuple[int, ...] | None = None) -> Workers:
        # The timing reference is timed beside each benchmark, in its process: every process imports it. Pinned, the
        # workers import on import_cpus, by default every CPU this process may use, in turn (as the gate's): on the
        # one CPU they are timed on, the pool's start took twice as long (docs/results/anatomy/README.md).
        if import_cpus is None:
            may_use = tuple(cpus.allowed()) if self.affinity else ()
            turn = slot % len(may_use) if may_use else 0
            import_cpus = may_use[turn:] + may_use[:turn]
        return Workers(self.version, self.threads, self.solvers, self.affinity, import_cpus,
                       alongside=(TIMING_REFERENCE[0],), eager=eager)

    def __getitem__(self, index: int) -> Workers:
        if index >= self.size:
            return self.extra(index)
        if self.workers[index] is None or self.workers[index].stopped():
            stopped = [slot for slot, worker in enumerate(self.workers) if worker is None or worker.stopped()]
            for slot in stopped:
                if self.workers[slot] is not None:
                    self.workers[slot].close()
                self.workers[slot] = self.started(slot)
            imported(self.workers[slot] for slot in stopped)  # all started first, so that they import in parallel
        return self.workers[index]

    def extra(self, index: int, solvers: list[str] | None = None) -> Workers:
        """The worker of a pass past the profile's trials (perf/measure/schedule.py): a fresh one for that pass
        alone, the previous extra pass's closed first. Only the processes of the frameworks of `solvers`, the pass's
        (default: every selected one's), start, each importing every selected solver of its framework as the first
        workers' did, and all have imported before any round is timed: a pass left with NumPy benchmarks alone starts
        no TensorFlow."""
        if self.extra_worker is None or self.extra_worker[0] != index or self.extra_worker[1].stopped():
            if self.extra_worker is not None:
                self.extra_worker[1].close()
            ready, self.next_worker = self.next_worker, None
            if ready is not None and (ready[0] != index or ready[1].stopped()):
                ready[1].close()
                ready = None
            self.extra_worker = ready or (index, self.started(index, solvers))
            imported([self.extra_worker[1]])
            self.next_worker = self.prestarted(index + 1, solvers)
        return self.extra_worker[1]

    def prestarted(self, index: int, solvers: list[str] | None) -> tuple[int, Workers] | None:
        """Pinned, where a CPU is left that the workers are not timed on: the next extra pass's worker, started now
        with this pass's frameworks (the next pass's benchmarks are some of this one's), importing on that CPU while
        this pass times on its own, so that the next pass need not wait seconds for TensorFlow's import; else None.
        A framework the next pass needs that this one did not starts on first use, as any."""
        spare = tuple(cpu for cpu in cpus.allowed() if cpu not in self.affinity) if self.affinity else ()
        return (index, self.started(index, solvers, spare)) if spare else None

    def close(self):
        for worker in [*self.workers, *(pair[1] for pair in (self.extra_worker, self.next_worker) if pair)]:
            if worker is not None:
                worker.close()
        self.workers, self.extra_worker, self.next_worker = [None] * self.size, None, None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
