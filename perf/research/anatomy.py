"""python -m perf.research.anatomy: where the wall time of a run of the suite or of the gate goes, phase by phase.

A verdict's precision is bought in processes (docs/measurement.md), so every second of a pass that is not timing is
precision lost. This runs the suite (`pytest perf/ ...`) or the gate (`python -m perf.gate ...`) as it is, in this
process, and hears every exchange with every worker process (perf.measure.worker.OBSERVERS): each request, its reply
and how long the reply took. Each exchange's seconds go to the phases its reply accounts for, the rest of it to the
pipe and the worker's own bookkeeping; the time between exchanges is the parent's own (pytest, scheduling, judging,
git worktrees):

    start and imports   a process's start until it first answered (its imports), and its spawn
    setup               a trial's setup: prepare and a call of one step (graph, session, compile), setup_s
    warm-up             the untimed call at the full count, first_run_s
    open, the rest      the rest of opening a trial: the timing reference's setup and warm-up, placement, the pipe
    round sizing        the gate's plan, and the suite's untimed round that sizes a benchmark's rounds
    timed rounds        the rounds of what is measured, round_s
    reference rounds    the timing reference's rounds beside them, reference_round_s
    round hand-over     the rest of every round's exchange: the pipe, JSON, the answer kept
    close               closing a trial: its answer checked, its session freed
    listing             asking a process which solvers can run (past its first answer)
    exit                ending a process once the run is done with it (Worker.close)

    python -m perf.research.anatomy --out docs/results/anatomy/suite -- suite perf/ --cpu-affinity quiet
    python -m perf.research.anatomy --out docs/results/anatomy/gate -- gate HEAD HEAD --passes 5 --no-confirm

Writes anatomy.json (every exchange, the totals) and anatomy.md (the table) under --out.
"""

import argparse
import collections
import json
import runpy
import sys
import time
from pathlib import Path

from perf.measure import worker as worker_module
from perf.measure.environment import cpu_model
from perf.measure.workers import framework_of

PHASES = ("start and imports", "setup", "warm-up", "open, the rest", "round sizing", "timed rounds",
          "reference rounds", "round hand-over", "close", "listing", "exit")
PARENT = "the parent's own"


class Recorder:
    """Every exchange with every worker as a row: when, which process and framework, the op, its solver, its seconds
    and the timing fields of its reply."""

    def __init__(self):
        self.began = time.perf_counter()
        self.rows: list[dict] = []
        self.answered: set[int] = set()  # processes that have answered once
        self.open_solver: dict[int, str] = {}

    def __call__(self, worker, request: dict, reply: dict | None, seconds: float) -> None:
        pid = worker.process.pid
        if request["op"] == "open":
            self.open_solver[pid] = request["solver"]
        row = {"at_s": time.perf_counter() - self.began - seconds, "pid": pid, "version": worker.version.label,
               "framework": worker.framework or "every", "op": request["op"], "seconds": seconds,
               "solver": request.get("solver") or self.open_solver.get(pid),
               "first": request["op"] not in ("spawn", "exit") and pid not in self.answered,
               "sizing": request["op"] == "round" and "reference" not in request}
        for key in ("setup_s", "first_run_s", "round_s", "reference_round_s"):
            if reply and reply.get(key) is not None:
                row[key] = reply[key]
        if request["op"] == "close" and reply and reply.get("closed") and reply.get("fit"):
            row["trial"] = True
        if request["op"] not in ("spawn", "exit"):
            self.answered.add(pid)
        self.rows.append(row)


def phases_of(row: dict, suite: bool) -> dict[str, float]:
    """The seconds of one exchange, by phase. A process's first answer waited on its imports: what the reply does not
    account for goes to its start."""
    op, seconds = row["op"], row["seconds"]
    if op == "spawn":
        return {"start and imports": seconds}
    if op == "exit":
        return {"exit": seconds}
    if op in ("solvers", "names", "frameworks"):
        return {"start and imports" if row["first"] else "listing": seconds}
    if op == "plan" or (op == "round" and suite and row["sizing"]):
        return {"round sizing": seconds}
    if op == "close":
        return {"close": seconds}
    accounted = {}
    if op == "open":
        accounted = {"setup": row.get("setup_s", 0.0), "warm-up": row.get("first_run_s") or 0.0}
        rest = "open, the rest"
    else:
        accounted = {"timed rounds": row.get("round_s", 0.0), "reference rounds": row.get("reference_round_s", 0.0)}
        rest = "round hand-over"
    accounted["start and imports" if row["first"] else rest] = max(0.0, seconds - sum(accounted.values()))
    return accounted


def family(row: dict) -> str:
    """The framework of the process an exchange was with, as perf/measure/workers.py names its processes."""
    if row["framework"] != "every":
        return row["framework"]
    return framework_of(row["solver"]) if row.get("solver") else "every"


def anatomy(rows: list[dict], wall_s: float, suite: bool) -> dict:
    """Seconds by phase, in all and by family; the parent's own is the wall time no exchange accounts for."""
    by_phase, by_family = collections.Counter(), collections.defaultdict(collections.Counter)
    for row in rows:
        for phase, seconds in phases_of(row, suite).items():
            by_phase[phase] += seconds
            by_family[family(row)][phase] += seconds
    by_phase[PARENT] = wall_s - sum(by_phase.values())
    trials = sum(1 for row in rows if row.get("trial"))
    processes = sum(1 for row in rows if row["op"] == "spawn")
    setups = collections.defaultdict(list)
    for row in rows:
        if row["op"] == "open" and "setup_s" in row:
            setups[row["solver"]].append((row["setup_s"], row.get("first_run_s")))
    return {"wall_s": wall_s, "trials": trials, "processes": processes,
            "trials_a_minute": trials / wall_s * 60 if wall_s else 0.0,
            "phases": {phase: by_phase[phase] for phase in (*PHASES, PARENT)},
            "families": {name: dict(counter) for name, counter in sorted(by_family.items())},
            "per_solver": {name: per_solver(values) for name, values in sorted(setups.items())}}


def per_solver(values: list[tuple[float, float | None]]) -> dict:
    """A solver's trials: how many opened, and their setup and warm-up in seconds, summed."""
    return {"opened": len(values), "setup_s": sum(setup for setup, _ in values),
            "warm_up_s": sum(first or 0.0 for _, first in values),
            "warm_ups": sum(first is not None for _, first in values)}


def table(found: dict, what: str, command: str) -> str:
    """anatomy.md: the phases as shares of the wall time, by family, then each solver's setup and warm-up."""
    wall, families = found["wall_s"], found["families"]
    lines = [f"# Where the time of {what} goes", "",
             f"`{command}` on {cpu_model()}: {wall:.0f} s of wall time, {found['processes']} worker processes, "
             f"{found['trials']} trials closed with an answer ({found['trials_a_minute']:.1f} a minute). Written by "
             "`python -m perf.research.anatomy`.", "",
             "| phase | seconds | share | " + " | ".join(families) + " |",
             "|---|---|---|" + "---|" * len(families)]
    for phase, seconds in found["phases"].items():
        cells = " | ".join(f"{families[name].get(phase, 0.0):.1f}" for name in families)
        lines.append(f"| {phase} | {seconds:.1f} | {seconds / wall:.1%} | {cells if phase != PARENT else ''} |")
    lines += ["", "| solver | trials opened | setup s | warm-ups | warm-up s |", "|---|---|---|---|---|"]
    for name, solver in found["per_solver"].items():
        lines.append(f"| {name} | {solver['opened']} | {solver['setup_s']:.1f} | {solver['warm_ups']} | "
                     f"{solver['warm_up_s']:.1f} |")
    return "\n".join(lines) + "\n"


def ran(what: str, arguments: list[str]) -> int:
    """The suite or the gate, run in this process as a user runs it (`pytest ...`, `python -m perf.gate ...`): its
    exit status."""
    if what == "suite":
        import pytest

        return int(pytest.main(list(arguments)))  # a copy: pytest adds its ini options to the list it is given
    argv, sys.argv = sys.argv, ["python -m perf.gate", *arguments]
    try:
        runpy.run_module("perf.gate", run_name="__main__", alter_sys=True)
    except SystemExit as ending:
        return ending.code if isinstance(ending.code, int) else 1
    finally:
        sys.argv = argv
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.research.anatomy", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the folder for anatomy.json and anatomy.md")
    parser.add_argument("what", choices=("suite", "gate"), help="pytest's arguments follow suite, the gate's gate")
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="as the command itself takes them")
    options = parser.parse_args(argv)
    recorder = Recorder()
    worker_module.OBSERVERS.append(recorder)
    try:
        began = time.perf_counter()
        status = ran(options.what, options.arguments)
        wall_s = time.perf_counter() - began
    finally:
        worker_module.OBSERVERS.remove(recorder)
    command = ("pytest " if options.what == "suite" else "python -m perf.gate ") + " ".join(options.arguments)
    found = {"command": command, "exit_status": status, "machine": cpu_model(),
             **anatomy(recorder.rows, wall_s, options.what == "suite")}
    options.out.mkdir(parents=True, exist_ok=True)
    exchanges = [{key: round(value, 6) if isinstance(value, float) else value for key, value in row.items()}
                 for row in recorder.rows]  # to the microsecond, compact: thousands of them
    (options.out / "anatomy.json").write_text(json.dumps({**found, "exchanges": exchanges}))
    (options.out / "anatomy.md").write_text(table(found, f"a run of the {options.what}", command))
    print((options.out / "anatomy.md").read_text())
    return status


if __name__ == "__main__":
    sys.exit(main())
