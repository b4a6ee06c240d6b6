"""The gate's worker protocol: a process per version, one JSON request per line in, one JSON reply per line out.

The gate (Worker, below) starts `python -m perf.gate.worker TREE` in this repository, so this tree's perf/measure
times the solvers of TREE: another revision's worktree, or this tree under another interpreter. Requests:

    {"op": "solvers"}  ->  {"solvers": {name: {device: why it cannot run here, or null}}}
    {"op": "plan", "solver", "device", "n", "most_steps", "round_s", "probe_steps", "most_calls"}
                       ->  {"steps": …, "calls": …}          (perf.measure.solver_runs.round_plan)
    {"op": "trial", "solver", "device", "n", "steps", "calls", "rounds"}
                       ->  {"trial": {"setup_s", "first_run_s", "rounds_s", …}}   (perf.measure.trials.Trial)

Any may answer {"missing": why} (no such solver in that version) or {"error": why} (a crash, a wrong answer, ops
placed on another device). A trial is one fresh setup, checked in the first trial of each benchmark for where
TensorFlow placed its ops, a warm-up and its rounds; its answer is checked against the expected one.
Only the standard library is imported here at module level: the version's solvers must come first.
"""

import importlib
import json
import os
import subprocess
import sys
import tempfile
from contextlib import ExitStack, contextmanager
from dataclasses import asdict

from perf.gate.versions import ROOT, GateError, Version
from perf.measure.trials import SLOWDOWN_VARIABLE

# The gate pins TensorFlow to one thread, unlike the benchmarks (TensorFlow's defaults, as the seed ran): in
# A/A runs on this project's machine its intervals were a third narrower pinned, so a real slowdown clears them
# sooner. README "The regression gate".
GATE_THREADS = 1


def serve(tree: str) -> None:
    """Answer requests on stdin with the solvers of tree."""
    sys.path.insert(0, tree)  # before this tree's root: `solvers` is the version's; `perf` is this tree's, imported
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import solvers

    older_names(solvers)
    from perf.measure.solver_runs import answer_mismatch, prepared, round_plan
    from perf.measure.trials import Trials, slowdown_of
    from solvers.problem import seed_problem

    placement_checked = set()

    def plan(solver, request):
        problem = seed_problem(request["n"], iterations=request["most_steps"])
        with prepared(solver, problem, request["device"]) as (run, _):
            planned = round_plan(run, request["most_steps"], request["round_s"], request["probe_steps"],
                                 request["most_calls"])
        return {"steps": planned.steps, "calls": planned.calls}

    def trial(solver, request):
        key, steps = (solver.name, request["device"], request["n"]), request["steps"]
        problem = seed_problem(request["n"], iterations=steps)
        placement = None if key in placement_checked else {}
        placement_checked.add(key)

        def open_run(first_trial):
            return prepared(solver, problem, request["device"], placement, request["calls"])

        with Trials(open_run, steps, trials=1, max_rounds=request["rounds"], slowdown=slowdown_of(solver.name)) as trials:
            fit = trials.measure()
        if error := answer_mismatch(fit, solver, request["n"]):
            return {"error": f"wrong answer: {error}"}
        return {"trial": asdict(trials.trials[0])}

    def answer(request: dict) -> dict:
        if request["op"] == "solvers":
            return {"solvers": {name: {device: solver.unavailable_reason(device) for device in solver.devices}
                                for name, solver in solvers.REGISTRY.items()}}
        solver = solvers.REGISTRY.get(request["solver"])
        if solver is None:
            return {"missing": f"no solver {request['solver']} in this version"}
        return {"plan": plan, "trial": trial}[request["op"]](solver, request)

    for line in sys.stdin:
        try:
            reply = answer(json.loads(line))
        except Exception as error:  # the gate reports it against this benchmark and version
            reply = {"error": f"{type(error).__name__}: {error}"}
        print(json.dumps(reply), flush=True)


def older_names(solvers) -> None:
    """A version from before the expected-answer rename (solvers/reference.py, Solver.reference), under today's names."""
    try:
        importlib.import_module("solvers.answers")
    except ImportError:
        sys.modules["solvers.answers"] = importlib.import_module("solvers.reference")
    for solver in solvers.REGISTRY.values():
        if not hasattr(solver, "expected"):
            object.__setattr__(solver, "expected", solver.reference)  # a frozen dataclass of that version


class Worker:
    """The gate's end of one version's worker process."""

    def __init__(self, version: Version, threads: int):
        self.version = version
        env = {key: value for key, value in os.environ.items() if key != SLOWDOWN_VARIABLE}
        env.update(FSSGD_THREADS=str(threads), TF_CPP_MIN_LOG_LEVEL="3", PYTHONDONTWRITEBYTECODE="1")
        if version.slowdown:
            env[SLOWDOWN_VARIABLE] = version.slowdown
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen([version.python, "-m", "perf.gate.worker", str(version.tree)], cwd=ROOT,
                                        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                        text=True)

    def ask(self, request: dict) -> dict:
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except OSError:
            line = ""
        if not line:
            self.log.seek(0)
            tail = "\n    ".join(self.log.read().strip().splitlines()[-5:])
            raise GateError(f"the worker for the {self.version.label}, {self.version.description}, stopped:\n    {tail}")
        return json.loads(line)

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


@contextmanager
def started(versions: list[Version], threads: int):
    """A worker per version, label -> Worker, closed on the way out."""
    with ExitStack() as stack:
        workers = {}
        for version in versions:
            worker = Worker(version, threads)
            stack.callback(worker.close)
            workers[version.label] = worker
        yield workers


if __name__ == "__main__":
    serve(sys.argv[1])
