"""One version's workers, a process per framework, answering as one worker: no two GPU runtimes share a process.

Each GPU framework loads CUDA libraries of its own into the process that imports it, and whichever loads first wins
(jax-ml/jax issues 18032 and 19004); a benchmark's process is also then the same whatever else a run selected
(docs/measurement.md, "A process per framework"). Which framework a solver needs is this tree's registry's to say; a
solver it lacks (one only another version has) gets a process of its own.
"""

import functools

from perf.measure.worker import FRAMEWORKS, Worker

NO_FRAMEWORK = "numpy"  # the process of the solvers that need none of them
# What a saved run records of its worker processes (machine_info.fssgd.worker_processes), and what a run saved before
# this module says by lacking it: every solver timed in a process that had imported every selected framework.
WORKER_PROCESSES = "one framework each"
EARLIER_WORKER_PROCESSES = "every selected framework in each"


def framework_of(name: str) -> str:
    """The process a solver is timed in, named by the frameworks it needs ('jax'; NO_FRAMEWORK where none)."""
    from solvers import REGISTRY  # this tree's: worker.py, beside it, must import no solver at module level

    if (solver := REGISTRY.get(name)) is None:
        return name
    return "+".join(package for package in solver.needs if package in FRAMEWORKS) or NO_FRAMEWORK


class WorkerSet:
    """The `ask` and `close` of one Worker, over one worker process per framework: a request about a solver goes to its
    framework's process, started on first use; a round or close to the process holding the open trial. Each process
    imports its own solvers, and those in `alongside` (the timing reference). The processes of the solvers in `eager`
    (default: every one's) start at once; pinned (affinity), each imports on the next CPU of import_cpus in turn;
    counted, each runs under callgrind (perf/measure/count.py)."""

    def __init__(self, version, threads: int, solvers: list[str] | None = None, affinity: tuple[int, ...] = (),
                 import_cpus: tuple[int, ...] = (), alongside: tuple[str, ...] = (), eager: list[str] | None = None,
                 counted: bool = False):
        from solvers import REGISTRY

        self.version = version
        self.solvers: dict[str, list[str]] = {}  # framework -> the solvers its process imports first
        for name in solvers or REGISTRY:
            self.solvers.setdefault(framework_of(name), []).append(name)
        self.alongside = alongside
        self.new_worker = functools.partial(Worker, version, threads, affinity=affinity, counted=counted)
        self.import_cpus = import_cpus
        self.processes: dict[str, Worker] = {}
        self.open_framework: str | None = None
        starting = self.solvers if eager is None else dict.fromkeys(framework_of(name) for name in eager)
        for framework in starting:  # all at once, so that they import in parallel with the other workers
            self.worker(framework)

    def worker(self, framework: str, solver: str | None = None) -> Worker:
        """framework's process, started with solver among those it imports where it was not yet."""
        if framework not in self.processes:
            names = self.solvers.setdefault(framework, [])
            names += [solver] if solver and solver not in names else []
            # A solver this tree's registry lacks has a process of its own, which keeps no framework out: its needs
            # are its version's to say.
            known = framework == NO_FRAMEWORK or framework.split("+")[0] in FRAMEWORKS
            import_cpu = self.import_cpus[len(self.processes) % len(self.import_cpus)] if self.import_cpus else None
            self.processes[framework] = self.new_worker(preload=list(dict.fromkeys([*names, *self.alongside])),
                                                     framework=framework if known else None, import_cpu=import_cpu)
        return self.processes[framework]

    @property
    def process(self):
        """The process of the open trial (else the first started): its pid is recorded with the trial."""
        return self.worker(self.open_framework or next(iter(self.solvers))).process

    def stopped(self) -> bool:
        return any(worker.process.poll() is not None for worker in self.processes.values())

    def ask(self, request: dict) -> dict:
        if request["op"] == "solvers":
            return self.listing(request.get("only"))
        if request["op"] in ("plan", "open"):
            framework = framework_of(request["solver"])
            if request["op"] == "open":
                self.open_framework = framework
            return self.worker(framework, request["solver"]).ask(request)
        # A round or close with no trial opened gets the first process's own answer.
        return self.worker(self.open_framework or next(iter(self.solvers))).ask(request)

    def listing(self, only: list[str] | None) -> dict:
        """The "solvers" reply, each solver's reasons asked in its framework's process, which imports no other; only
        None: every solver of the version's registry; only []: none, from every started process, once all have
        imported their solvers."""
        names = self.worker(next(iter(self.solvers))).ask({"op": "names"})["names"] if only is None else only
        asked = {framework: [] for framework in (self.processes if only == [] else ())}
        for name in names:
            asked.setdefault(framework_of(name), []).append(name)
        found = {}
        for framework, mine in asked.items():
            reply = self.worker(framework, mine[0] if mine else None).ask({"op": "solvers", "only": mine})
            if "solvers" not in reply:
                return reply
            found.update(reply["solvers"])
        return {"solvers": {name: found[name] for name in names if name in found}}  # in the order asked

    def close(self):
        for worker in self.processes.values():
            worker.close()
