"""A worker process and its protocol: one JSON request per line in, one JSON reply per line out.

Worker (below) starts `python -m perf.measure.worker TREE [SOLVER ...]`, so this tree's perf/measure times the solvers
of TREE: another revision's worktree (the gate), this tree under another interpreter (a TensorFlow release), or this
tree itself (the suite). The worker imports the named solvers (all, when none are named) and their packages, on the CPU
IMPORT_CPU_VARIABLE names where set, then pins itself to the CPUs of cpus.AFFINITY_VARIABLE where set, and serves.
Where FRAMEWORK_VARIABLE names its framework (perf/measure/workers.py), every other of FRAMEWORKS is kept out of it.
Requests:

    {"op": "solvers", "only": [names] or null (every solver's, importing every package)}
                       ->  {"solvers": {name: {device: why it cannot run here, or null}}}
    {"op": "names"}    ->  {"names": [every solver of the version's registry]}, importing no package
    {"op": "frameworks"}
                       ->  {"frameworks": [the GPU frameworks this process has imported]}
    {"op": "plan", "solver", "device", "n", "most_steps", "round_s", "probe_steps", "most_calls"}
                       ->  {"steps": …, "calls": …}          (perf.measure.solver_runs.round_plan)
    {"op": "open", "solver", "device", "n", "steps", "calls", "warm_up": true, "reference_steps": null}
                       ->  {"setup_s": …, "first_run_s": …, "placement": …}
                           a trial: a fresh setup, a warm-up at the full count unless warm_up is false (first_run_s
                           null), and, where reference_steps is given, the timing reference's run on the same problem
                           beside it; placement: where TensorFlow placed the ops, the first time this worker opens
                           this benchmark (then checked), else absent
    {"op": "round", "reference": null}
                       ->  {"round_s": …}                     one timed round of the open trial; with "reference":
                           "before" or "after", a round of the timing reference timed then too: "reference_round_s"
    {"op": "count", "steps": [few, many]}
                       ->  {"counts": [[few, instructions], [many, instructions]], "cpu_features": […]}
                           in a counted worker (perf/measure/count.py), the open trial's run at each step count, warmed
                           up first, its instructions counted, every thread's; cpu_features: those valgrind presents,
                           as NumPy sees them
    {"op": "close"}    ->  {"closed": true, "fit": {"w", "b", "loss", "iterations"} or null, "gpu_peak_bytes": …,
                            "gpu_peak_scope": …}
                           its last answer checked, its session freed; on a GPU the most memory its framework held and
                           what that is the peak of (perf/measure/gpu.py)

A trial is held open so that the gate can time its rounds in turn with another version's. Any request may answer
{"missing": why} (no such solver in that version) or {"error": why, "kind": how, "trace": where}, kind being the
exception's class, "wrong answer", "kept out" (a solver whose framework this process keeps out) or "out of memory" (a
GPU trial's, whichever framework's); an out-of-memory error closes the open trial, so that the memory it held is free.
Only the standard library is imported here at module level: the version's solvers must come first.
"""

import contextlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from perf.measure import count, cpus, gpu
from perf.measure.trials import SLOWDOWN_VARIABLE

ROOT = Path(__file__).resolve().parents[2]
# The one CPU a pinned worker imports its packages on, a different one for each worker of a pass, so that they import
# in parallel, and a package that sizes its threads by the CPUs it may use (OpenMP's, at load) sees one, as when timed.
IMPORT_CPU_VARIABLE = "FSSGD_IMPORT_CPU"
# The frameworks with a GPU runtime of their own: never two in one worker process (perf/measure/workers.py). They are
# solvers.packages.GPU_FRAMEWORKS, held here too: the worker serves other revisions' solvers, which may lack it.
FRAMEWORKS = ("tensorflow", "jax", "torch")
# glibc's threshold for serving a large allocation from fresh pages moves with what a process imported or freed, and
# with it every large temporary's cost (docs/measurement.md, "A process per framework"): fixed at its maximum in all.
MALLOC_SETTINGS = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(64 << 20)}
# The framework a worker process is for ("jax", "numpy" for none of them): every other is kept out of it.
FRAMEWORK_VARIABLE = "FSSGD_FRAMEWORK"
# Who hears of every exchange with a worker, as observer(worker, request, reply, seconds), its start as {"op": "spawn"}
# and its end as {"op": "exit"} with reply None: where a pass's time goes (perf/research/anatomy.py).
OBSERVERS: list = []


class WorkerStopped(RuntimeError):
    """A worker process ended before it answered; the message ends with the last lines it wrote."""


@dataclass(frozen=True)
class Version:
    """What a worker runs: the solvers of a tree, under an interpreter, with environment variables of its own."""
    label: str  # "baseline", "candidate", or a noise-study variant: unique within a session
    description: str  # what it is: a revision and its commit, the working tree, an interpreter
    tree: Path  # where its solvers are
    python: str
    # Environment variables for this version's workers only, (name, value) pairs: TF_ENABLE_ONEDNN_OPTS,
    # FSSGD_CPU_AFFINITY (a CPU list, or "free"), FSSGD_SLOWDOWN (test tooling).
    env: tuple[tuple[str, str], ...] = ()

    def with_env(self, **variables) -> "Version":
        settings = ", ".join(f"{name}={value}" for name, value in variables.items())
        return Version(self.label, f"{self.description}, with {settings}", self.tree, self.python,
                       self.env + tuple(variables.items()))


def serve(tree: str, preload: list[str]) -> None:
    """Answer requests on stdin with the solvers of tree, those named in preload (default: all) imported first."""
    affinity = os.environ.get(cpus.AFFINITY_VARIABLE)
    if affinity:  # before any package loads
        os.sched_setaffinity(0, cpus.parsed(os.environ.get(IMPORT_CPU_VARIABLE, affinity)))
    sys.path.insert(0, tree)  # before this tree's root: `solvers` is the version's; `perf` is this tree's, imported
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import solvers

    kept_out = keep_out_others(os.environ.get(FRAMEWORK_VARIABLE))
    imported(solvers, preload or list(solvers.REGISTRY))
    if affinity:
        pinned(cpus.parsed(affinity))
    from perf.measure import TIMING_REFERENCE
    from perf.measure.solver_runs import answer_mismatch, prepared, round_plan
    from perf.measure.trials import slowed, slowdown_of, timed
    from solvers.problem import seed_problem

    counter = count.Counter(dumps) if (dumps := os.environ.get(count.DUMPS_VARIABLE)) else None
    placement_checked = set()
    trial = {}  # the open trial: its session, its run, what the answer check needs

    def plan(solver, request):
        problem = seed_problem(request["n"], iterations=request["most_steps"])
        with prepared(solver, problem, request["device"]) as (run, _):
            planned = round_plan(run, request["most_steps"], request["round_s"], request["probe_steps"],
                                 request["most_calls"])
        return {"steps": planned.steps, "calls": planned.calls}

    def open_trial(solver, request):
        close_trial()
        key, steps, n = (solver.name, request["device"], request["n"]), request["steps"], request["n"]
        placement = None if key in placement_checked else {}
        placement_checked.add(key)
        session = ExitStack()
        trial.update(session=session, solver=solver, n=n, steps=steps, device=request["device"],
                     peaks_at_open={package: gpu.peak_at_open(package) for package in getattr(solver, "needs", ())
                                    if request["device"] == "gpu"})
        run, setup_s = session.enter_context(prepared(solver, seed_problem(n, iterations=steps), request["device"],
                                                      placement, request["calls"]))
        trial["run"] = slowed(run, slowdown_of(solver.name))
        reply = {"setup_s": setup_s, "first_run_s": None}
        if request.get("warm_up", True):  # XLA compiles per step count
            reply["first_run_s"] = timed(trial["run"], steps)
        if reference_steps := request.get("reference_steps"):
            reference, device = TIMING_REFERENCE
            reference_run = session.enter_context(
                solvers.REGISTRY[reference].prepare(seed_problem(n, iterations=reference_steps), device))
            trial["reference"] = lambda: reference_run(reference_steps)
            if request.get("warm_up", True):
                trial["reference"]()  # its own warm-up, untimed
        if placement is not None:
            reply["placement"] = placement.get("devices")
        return reply

    def timed_round(request):
        reference = request.get("reference") and trial.get("reference")
        reply = {"reference_round_s": timed(reference)} if reference and request["reference"] == "before" else {}
        started = time.perf_counter()
        trial["fit"] = trial["run"](trial["steps"])
        reply["round_s"] = time.perf_counter() - started
        if reference and request["reference"] == "after":
            reply["reference_round_s"] = timed(reference)
        return reply

    def counted_runs(request):
        if counter is None:
            return {"error": "this worker does not run under valgrind: only a counted worker counts", "kind": "usage"}
        for steps in request["steps"]:  # each count warmed up: XLA compiles once per step count
            trial["run"](steps)
        counts = [[steps, counter.counted(lambda: trial.update(fit=trial["run"](steps)))] for steps in request["steps"]]
        return {"counts": counts, "cpu_features": count.cpu_features()}

    def close_trial(request=None):
        if not trial:
            return {"closed": False}
        session, fit, solver, n, device = (trial.pop("session"), trial.pop("fit", None), trial["solver"], trial["n"],
                                           trial["device"])
        peaks_at_open = trial.get("peaks_at_open", {})
        trial.clear()
        session.close()
        peaks = [given_back(package, peaks_at_open.get(package))  # given back before the next trial opens
                 for package in (getattr(solver, "needs", ()) if device == "gpu" else ())]
        held, scope = next((peak for peak in peaks if peak[0] is not None), (None, None))
        if fit is not None and (error := answer_mismatch(fit, solver, n)):
            return {"error": f"wrong answer: {error}", "kind": "wrong answer"}
        return {"closed": True, "fit": fit and {"w": float(fit.w), "b": float(fit.b), "loss": float(fit.loss),
                                                "iterations": int(fit.iterations)}, "gpu_peak_bytes": held,
                "gpu_peak_scope": scope}

    def answer(request: dict) -> dict:
        if request["op"] == "solvers":  # "only": the names asked for, so that no other package is imported
            return {"solvers": {name: {device: kept_out_of(solver, kept_out) or solver.unavailable_reason(device)
                                       for device in solver.devices}
                                for name, solver in solvers.REGISTRY.items()
                                if request.get("only") is None or name in request["only"]}}
        if request["op"] == "names":
            return {"names": list(solvers.REGISTRY)}
        if request["op"] == "frameworks":
            return {"frameworks": [name for name in FRAMEWORKS if sys.modules.get(name)]}
        if request["op"] in ("round", "count", "close"):
            return {"round": timed_round, "count": counted_runs, "close": close_trial}[request["op"]](request)
        solver = solvers.REGISTRY.get(request["solver"])
        if solver is None:
            return {"missing": f"no solver {request['solver']} in this version"}
        if why := kept_out_of(solver, kept_out):
            return {"error": why, "kind": "kept out"}
        return {"plan": plan, "open": open_trial}[request["op"]](solver, request)

    for line in sys.stdin:
        request = json.loads(line)
        device = request.get("device", trial.get("device"))  # taken before close_trial clears it
        try:
            reply = answer(request)
        except Exception as error:  # reported against this benchmark and version
            if (out_of_memory := gpu.out_of_memory(error, device)) is not None:
                reply = {"error": out_of_memory, "kind": gpu.OUT_OF_MEMORY}
            else:
                reply = {"error": f"{type(error).__name__}: {error}", "kind": type(error).__name__,
                         "trace": traceback.format_exc()}
        if reply.get("kind") == gpu.OUT_OF_MEMORY:  # outside the except block, so the error's frames are gone first
            close_trial()
        print(json.dumps(reply), flush=True)


def given_back(package: str, at_open: int | None = None) -> tuple[int | None, str | None]:
    """gpu.trial_peak of a closed trial, its memory released: bookkeeping, never a reason to fail a trial."""
    held = None
    with contextlib.suppress(Exception):
        held = gpu.peak_bytes(package)
    with contextlib.suppress(Exception):
        gpu.released(package)
    return gpu.trial_peak(package, at_open, held)


def keep_out_others(framework: str | None) -> tuple[str, ...]:
    """The frameworks of FRAMEWORKS but those framework names ("jax", "tensorflow+jax"), made unimportable in this
    process (TensorFlow imports JAX wherever it can: tensorflow/lite/python/util.py); None: none."""
    if framework is None:
        return ()
    kept_out = tuple(name for name in FRAMEWORKS if name not in framework.split("+"))
    for name in kept_out:
        sys.modules.setdefault(name, None)  # `import` then raises ImportError, and find_spec answers None
    return kept_out


def kept_out_of(solver, kept_out: tuple[str, ...]) -> str | None:
    """Why solver cannot run in this process, where a framework it needs is kept out of it; else None."""
    if needed := [package for package in solver.needs if package in kept_out]:
        return (f"{solver.name} needs {', '.join(needed)}, kept out of this worker process: each framework's solvers "
                f"run in a process of their own (perf/measure/workers.py)")
    return None


def imported(solvers, names: list[str]) -> None:
    """The modules of the named solvers that can run here, and the packages they need, imported."""
    for name in names:
        solver = solvers.REGISTRY.get(name)
        # A broken solver module fails its own trials, with the error, not the whole worker.
        with contextlib.suppress(Exception):
            if solver is not None and not solver.unavailable_reason("cpu"):
                for module in (*solver.needs, f"solvers.{name}"):
                    importlib.import_module(module)


def pinned(cpu_list: tuple[int, ...]) -> None:
    """Every thread of this process on these CPUs, those the imports started too; later threads inherit it."""
    for thread in os.listdir("/proc/self/task"):
        os.sched_setaffinity(int(thread), cpu_list)


def malloc_settings(environ=os.environ) -> dict[str, str]:
    """MALLOC_SETTINGS, where environ does not set them otherwise."""
    return {name: environ.get(name, default) for name, default in MALLOC_SETTINGS.items()}


class Worker:
    """Our end of one version's worker process, started with the variables the module's docstring names."""

    def __init__(self, version: Version, threads: int, preload: list[str] | None = None,
                 affinity: tuple[int, ...] = (), import_cpu: int | None = None, framework: str | None = None,
                 counted: bool = False):
        self.version = version
        env = {key: value for key, value in os.environ.items()
               if key not in (SLOWDOWN_VARIABLE, cpus.AFFINITY_VARIABLE, IMPORT_CPU_VARIABLE, FRAMEWORK_VARIABLE)}
        env.update(FSSGD_THREADS=str(threads), PYTHONDONTWRITEBYTECODE="1")
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # quiet, unless the user asked for TensorFlow's log
        env.update(gpu.memory_settings(env))  # several workers share one GPU
        env.update(malloc_settings(env))
        if affinity:
            env[cpus.AFFINITY_VARIABLE] = cpus.compact(affinity)
            if import_cpu is not None:
                env[IMPORT_CPU_VARIABLE] = str(import_cpu)
        if framework is not None:
            env[FRAMEWORK_VARIABLE] = framework
        env.update(version.env)
        if env.get(cpus.AFFINITY_VARIABLE) == cpus.FREE:  # a version of its own free: a study's free variant
            del env[cpus.AFFINITY_VARIABLE]
            env.pop(IMPORT_CPU_VARIABLE, None)
        self.preload, self.framework = preload, framework
        self.log = tempfile.TemporaryFile(mode="w+")
        command = [version.python, "-m", "perf.measure.worker", str(version.tree), *(preload or ())]
        self.dumps = tempfile.TemporaryDirectory(prefix="fssgd-count-") if counted else None
        if self.dumps:  # under callgrind (perf/measure/count.py)
            dumps = Path(self.dumps.name) / "callgrind"
            command = count.command(dumps) + command
            env.update(count.COUNTED_ENVIRONMENT)
            env[count.DUMPS_VARIABLE] = str(dumps)
        started = time.perf_counter()
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.log, text=True)
        self.observed({"op": "spawn"}, None, started)

    def observed(self, request: dict, reply: dict | None, started: float) -> None:
        for observer in OBSERVERS:
            observer(self, request, reply, time.perf_counter() - started)

    def ask(self, request: dict) -> dict:
        started = time.perf_counter()
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except OSError:
            line = ""
        if not line:
            self.log.seek(0)
            tail = "\n    ".join(self.log.read().strip().splitlines()[-5:])
            raise WorkerStopped(f"the worker process of the {self.version.label}, {self.version.description}, "
                                f"stopped:\n    {tail}")
        reply = json.loads(line)
        self.observed(request, reply, started)
        return reply

    def close(self):
        """The process killed: TensorFlow's own exit took about a second of CPU (docs/results/anatomy/README.md), and a
        worker holds nothing to save once its trials are closed; the system frees its memory, the GPU's too."""
        started = time.perf_counter()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):  # a request it never read: nothing to flush it to
                stream.close()
        self.log.close()
        if self.dumps:
            self.dumps.cleanup()
        self.observed({"op": "exit"}, None, started)


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2:])
