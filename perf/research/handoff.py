"""The hand-off between CPUs: the TensorFlow 1 solvers timed free and on one CPU, in the same passes.

    python -m perf.research.handoff --passes 20 --out docs/results/handoff

Two versions of this tree under this interpreter, TensorFlow's default threads (as the suite runs): every worker of
one on a single CPU (the last, as the gate's, or --cpu), every worker of the other free (FSSGD_CPU_AFFINITY=free). The
gate's passes (perf/research/side_by_side.py) start fresh workers for both and time each benchmark's rounds in
turn across them, so both live through the same states of the machine. Per benchmark and size: µs per step each
way, free / one CPU (the mean over passes of the paired log ratio), and the hand-off, free − one CPU in µs per
step (the mean of the per-pass differences); per part of a tf1_feed_dict step, the same difference of that part
(perf/report/analysis.py STEP_PARTS). Every interval is Student's t over the passes, at 95% for each cell alone.

Writes passes.json (every pass's rounds), README.md (the tables) and handoff.json, which the report reads:
`python -m perf.report RUN --handoff DIR` adds the hand-off to a free run's "where a step goes".
"""

import argparse
import json
import math
import random
import subprocess
import sys
import time
from pathlib import Path

from perf import gate
from perf.judge.statistics import t_interval
from perf.measure import Key, cpus
from perf.measure.profiles import PROFILES
from perf.measure.worker import ROOT, Version, WorkerStopped
from perf.report.analysis import REFERENCE_SOLVER, STEP_PARTS, WHOLE_STEP
from perf.report.tables import markdown, with_interval
from perf.research import side_by_side
from perf.research.releases import RELEASE_CONFIDENCE, outcomes_of, parts_of, per_pass_us, save_passes
from solvers import REGISTRY

# Every TensorFlow 1 solver, and numpy_loop as the control: NumPy hands nothing to other threads.
SOLVERS = ("tf1_feed_dict", "tf1_feed_dict_no_loss", "tf1_constant", "tf1_constant_no_loss", "tf1_callable",
           "tf1_while_loop", "tf1_while_loop_standardized", REFERENCE_SOLVER)
ONE_CPU, FREE = "one CPU", cpus.FREE  # the versions' labels
PASSES = 20
DEFAULT_OUT = Path("docs/results/handoff")
TF_DEFAULT_THREADS = 0
# Why free costs more, in words; the report repeats it beside the figure.
MECHANISM = ("Free, TensorFlow hands work to threads on both CPUs (a step's independent ops to its inter-op threads and, "
             "at large n, the pieces of one op to its intra-op threads) and waits while they are woken there; on one "
             "CPU it sizes its thread pools for that CPU and nothing crosses to another. Fewer threads alone do not "
             "explain it: one inter-op thread on both CPUs made the call slower (docs/results/README.md, what pinning "
             "TensorFlow's threads does).")


def versions(cpu: int) -> list[Version]:
    """This tree twice: its workers on the CPU given, and free; the first is the one ratios are to."""
    return [Version(ONE_CPU, f"this tree, every worker on CPU {cpu}", ROOT, sys.executable,
                    ((cpus.AFFINITY_VARIABLE, str(cpu)),)),
            Version(FREE, "this tree, every worker free", ROOT, sys.executable, ((cpus.AFFINITY_VARIABLE, cpus.FREE),))]


def analysed(outcomes) -> dict:
    """{n: {"benchmarks": {solver: {ONE_CPU, FREE, "ratio", "handoff": Interval}}, "parts": {part: {ONE_CPU, FREE,
    "handoff": Interval}}}}: each way's µs per step, free / one CPU, and free − one CPU, pass by pass."""
    found = {}
    for n in sorted({outcome.key.n for outcome in outcomes if outcome.unjudged is None}):
        here = [outcome for outcome in outcomes if outcome.key.n == n and outcome.unjudged is None]
        us = {label: {outcome.key.solver: per_pass_us(outcome, label) for outcome in here} for label in (ONE_CPU, FREE)}
        handoff_us = {solver: {p: free - us[ONE_CPU][solver][p] for p, free in by_pass.items()
                               if p in us[ONE_CPU][solver]} for solver, by_pass in us[FREE].items()}
        benchmarks = {outcome.key.solver: {
            ONE_CPU: t_interval(list(us[ONE_CPU][outcome.key.solver].values()), RELEASE_CONFIDENCE),
            FREE: t_interval(list(us[FREE][outcome.key.solver].values()), RELEASE_CONFIDENCE),
            "ratio": t_interval(outcome.values(FREE), RELEASE_CONFIDENCE, math.exp),
            "handoff": t_interval(list(handoff_us[outcome.key.solver].values()), RELEASE_CONFIDENCE),
        } for outcome in here}
        parts = {label: parts_of(by_solver) for label, by_solver in ((ONE_CPU, us[ONE_CPU]), (FREE, us[FREE]),
                                                                     ("handoff", handoff_us))}
        found[n] = {"benchmarks": {solver: benchmarks[solver] for solver in SOLVERS if solver in benchmarks},
                    "parts": {part: {label: parts[label].get(part) for label in parts} for part in parts[FREE]}}
    return found


def share(part, whole) -> str:
    return f"{part.value / whole.value:.0%}" if part and whole and whole.value > 0 else "—"


def rendered(found: dict, saved: dict) -> str:
    lines = ["# The hand-off between CPUs: TensorFlow 1 free and on one CPU", "", f"`{saved['command']}`", "",
             f"{saved['date']}, CPU {saved['cpu']}, at {saved['commit']}, {saved['passes']} passes, TensorFlow's "
             f"default threads; one CPU: every worker on CPU {saved['one_cpu']}; free: wherever the system puts them. "
             f"Wall time {saved['wall_s'] / 60:.0f} min. Each cell: the mean over passes with its "
             f"{RELEASE_CONFIDENCE:.0%} Student t interval over the passes (fresh processes each), for that cell "
             "alone. free / one CPU: from the rounds paired in turn; hand-off: free − one CPU, pass by pass.", "",
             MECHANISM, ""]
    for n, here in found.items():
        whole = here["benchmarks"].get(WHOLE_STEP, {}).get(FREE)
        lines += [f"## Each benchmark at n = {n:,}: µs per step", ""]
        lines += markdown(["solver", "one CPU", "free", "free / one CPU", "hand-off (free − one CPU)",
                           "of the free step"],
                          [[f"`{solver}`", with_interval(cells[ONE_CPU]), with_interval(cells[FREE]),
                            with_interval(cells["ratio"]), with_interval(cells["handoff"]),
                            share(cells["handoff"], cells[FREE])] for solver, cells in here["benchmarks"].items()])
        if here["parts"]:
            lines += [f"## The parts of a `{WHOLE_STEP}` step at n = {n:,}: µs per step", ""]
            lines += markdown(["part", "one CPU", "free", "hand-off in it (free − one CPU)",
                               f"of the free `{WHOLE_STEP}`"],
                              [[part, with_interval(cells[ONE_CPU]), with_interval(cells[FREE]),
                                with_interval(cells["handoff"]), share(cells["handoff"], whole)]
                               for part, cells in here["parts"].items()])
    return "\n".join(lines)


def report_figures(found: dict, saved: dict, folder: Path) -> dict:
    """handoff.json: what the report needs of the study, per size: the whole step's hand-off and the free step."""
    def kept(interval):
        return interval and list(interval)

    return {"study": "perf.research.handoff", "folder": str(folder),
            **{key: saved[key] for key in ("command", "date", "cpu", "commit", "one_cpu")},
            "confidence": RELEASE_CONFIDENCE, "mechanism": MECHANISM,
            "sizes": {str(n): {"solver": WHOLE_STEP, "handoff_us": kept(here["benchmarks"][WHOLE_STEP]["handoff"]),
                               "free_us": kept(here["benchmarks"][WHOLE_STEP][FREE]),
                               "one_cpu_us": kept(here["benchmarks"][WHOLE_STEP][ONE_CPU])}
                      for n, here in found.items() if WHOLE_STEP in here["benchmarks"]}}


def written(folder: Path) -> list[Path]:
    """README.md and handoff.json of a study, from the passes.json it saved in folder."""
    saved = json.loads((folder / "passes.json").read_text())
    found = analysed(outcomes_of(saved))
    (folder / "README.md").write_text(rendered(found, saved) + "\n")
    (folder / "handoff.json").write_text(json.dumps(report_figures(found, saved, folder), indent=1) + "\n")
    return [folder / "README.md", folder / "handoff.json", folder / "passes.json"]


def commit() -> str:
    """HEAD's short hash, marked dirty where a tracked file differs from it; '?' outside a git checkout."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no")
    return (git("rev-parse", "--short", "HEAD") or "?") + (" (dirty)" if dirty else "")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.research.handoff", description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=PASSES, help="passes (default: %(default)s)")
    parser.add_argument("--cpu", type=cpus.affinity_argument, metavar="CPU",
                        help="the one CPU (default: the last this process may use, as the gate's)")
    parser.add_argument("--solvers", default=",".join(SOLVERS), help="comma-separated (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, help="default: a new one, recorded")
    parser.add_argument("--analyze-only", action="store_true",
                        help="write --out's tables again from its passes.json, and time nothing")
    options = parser.parse_args(argv)
    if options.analyze_only:
        if not (options.out / "passes.json").is_file():
            parser.error(f"--analyze-only: no passes.json in {options.out}")
        print(f"handoff: {', '.join(str(path) for path in written(options.out))}")
        return 0
    if options.passes < 2:
        parser.error("--passes must be at least 2: the intervals are over passes")
    if options.cpu and len(options.cpu) != 1:
        parser.error(f"--cpu: one CPU, not {cpus.compact(options.cpu)}")
    try:
        may_use = cpus.allowed()
    except ValueError as error:
        parser.error(str(error))
    if len(may_use) < 2:
        parser.error(f"this process may use one CPU only ({cpus.compact(may_use)}): free and one CPU are the same here")
    cpu = (options.cpu or may_use)[-1]
    seed = random.SystemRandom().randrange(2**32) if options.seed is None else options.seed
    profile, began = PROFILES["quick"], time.perf_counter()
    names = [name for name in options.solvers.split(",") if name]
    if not names:
        parser.error("--solvers: name at least one solver")
    if unknown := [name for name in names if name not in REGISTRY]:
        parser.error(f"--solvers: no solver {', '.join(unknown)}; the solvers: {', '.join(REGISTRY)}")
    keys = [Key(name, "cpu", n) for name in names for n in profile.sizes]
    print(f"handoff: {len(keys)} benchmarks on CPU {cpu} and free, {options.passes} passes, seed {seed}", flush=True)
    try:
        outcomes = side_by_side.measured(versions(cpu), TF_DEFAULT_THREADS, lambda workers: keys, profile, seed,
                                         gate.fixed(gate.Stopping(), options.passes),
                                         lambda text: print(f"handoff: {text}", flush=True), preload=names).outcomes
    except (gate.GateError, WorkerStopped) as error:
        print(f"handoff: cannot run: {error}", file=sys.stderr)
        return 2
    unjudged = [outcome for outcome in outcomes if outcome.unjudged]
    for outcome in unjudged:
        print(f"handoff: {outcome.key.name}: {outcome.unjudged.why}", file=sys.stderr)
    if len(unjudged) == len(outcomes):
        print("handoff: NOT MEASURED: no benchmark was timed both ways", file=sys.stderr)
        return 10
    save_passes(options.out, outcomes, began,
                command=f"python -m perf.research.handoff --passes {options.passes} --cpu {cpu} --seed {seed}"
                        + ("" if names == list(SOLVERS) else f" --solvers {','.join(names)}"),
                commit=commit(), seed=seed, passes=options.passes, one_cpu=cpu, threads=TF_DEFAULT_THREADS,
                versions=[{"label": version.label, "env": dict(version.env)} for version in versions(cpu)])
    print(f"handoff: {', '.join(str(path) for path in written(options.out))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
