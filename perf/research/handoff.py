"""Why free costs more than one CPU: the TensorFlow 1 solvers timed free and on one CPU, each with three thread counts.

    python -m perf.research.handoff --passes 20 --out docs/results/handoff

Six versions of this tree under this interpreter, in the same passes: {one CPU, free} x {TensorFlow's default thread
pools, inter = intra = 1, inter = intra = the count of CPUs free may use}. TensorFlow sizes its default pools from the
CPUs a process may use, so pinning a process changes its pools as well as its CPUs; each version's inter-op pool is
counted in a worker of its own and recorded. The controls split the cost of running free (free − one CPU, both with
TensorFlow's default threads), pass by pass:
- pools: one CPU with free's thread count − one CPU with its default: free's larger pools, without a second CPU;
- crossing: free − one CPU, both with free's thread count: a second CPU, with the same pools.
The gate's passes (perf/research/side_by_side.py) start fresh workers for every version and time each benchmark's
rounds in turn across them, so all live through the same states of the machine. Per benchmark and size: µs per step
each way, and each difference as the mean of the per-pass differences; per part of a tf1_feed_dict step
(perf/report/analysis.py STEP_PARTS), the same differences of that part. Every interval is Student's t over the passes,
at 95% for each cell alone. What the controls show is said in words from them (perf/report/handoff.py attribution).

Writes passes.json (every pass's rounds), README.md (the tables) and handoff.json, which the report reads:
`python -m perf.report RUN --handoff DIR` adds free − one CPU to a free run's "where a step goes".
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from perf import gate
from perf.judge.statistics import t_interval
from perf.measure import Key, cpus
from perf.measure.profiles import PROFILES
from perf.measure.worker import ROOT, Version, WorkerStopped, malloc_settings
from perf.measure.workers import WORKER_PROCESSES
from perf.report.analysis import REFERENCE_SOLVER, STEP_PARTS, WHOLE_STEP
from perf.report.handoff import attribution
from perf.report.tables import markdown, with_interval
from perf.research import side_by_side
from perf.research.releases import RELEASE_CONFIDENCE, outcomes_of, parts_of, per_pass_us, save_passes
from solvers import REGISTRY
from solvers.tensorflow_support import THREADS_VARIABLE

# The TensorFlow 1 step solvers and tf1_while_loop (the parts of a step need them all), and numpy_loop as the control:
# NumPy hands nothing to other threads.
SOLVERS = ("tf1_feed_dict", "tf1_feed_dict_no_loss", "tf1_constant", "tf1_constant_no_loss", "tf1_callable",
           "tf1_while_loop", REFERENCE_SOLVER)
ONE_CPU, FREE = "one CPU", cpus.FREE  # the placements
DEFAULT_THREADS = 0  # TensorFlow's own pools, as the seed program and the suite run
PASSES = 20
DEFAULT_OUT = Path("docs/results/handoff")
# The differences the study takes, pass by pass: (name, minuend, subtrahend), each a version's (placement, threads);
# FREE_COUNT stands for free's thread count. "gap" is what running free costs; the controls split it in two.
FREE_COUNT = "free's count"
DIFFERENCES = (
    ("gap", (FREE, DEFAULT_THREADS), (ONE_CPU, DEFAULT_THREADS)),
    ("pools", (ONE_CPU, FREE_COUNT), (ONE_CPU, DEFAULT_THREADS)),
    ("crossing", (FREE, FREE_COUNT), (ONE_CPU, FREE_COUNT)),
    ("crossing at 1 thread", (FREE, 1), (ONE_CPU, 1)),
)
EXPLAINED = {"gap": "free − one CPU, TensorFlow's default threads each",
             "pools": "one CPU: free's thread count − its default",
             "crossing": "free's thread count: free − one CPU",
             "crossing at 1 thread": "1 thread: free − one CPU"}
# Run in a version's own environment: its affinity applied as a worker applies it, then TensorFlow's inter-op pool
# (the threads it names tf_Compute) counted after a Session.run. The intra-op pool's threads carry no name of theirs.
POOL_PROBE = """
import json, os
from perf.measure import cpus
from solvers import tensorflow_support
if os.environ.get(cpus.AFFINITY_VARIABLE, cpus.FREE) != cpus.FREE:
    os.sched_setaffinity(0, cpus.parsed(os.environ[cpus.AFFINITY_VARIABLE]))
tf = tensorflow_support.import_tensorflow().compat.v1
tf.disable_eager_execution()
x = tf.placeholder(tf.float64, [8])
with tf.Session(config=tensorflow_support.session_config()) as session:
    session.run(tf.reduce_sum(x * x) + tf.reduce_mean(x), {x: [1.0] * 8})
    names = [open(f"/proc/self/task/{task}/comm").read().strip() for task in os.listdir("/proc/self/task")]
print(json.dumps({"cpus": len(os.sched_getaffinity(0)), "inter_op_threads": names.count("tf_Compute")}))
"""


def threads_label(threads) -> str:
    return {DEFAULT_THREADS: "TF default", 1: "1 thread"}.get(threads, f"{threads} threads")


def label(placement: str, threads) -> str:
    return f"{placement} ({threads_label(threads)})"


def settings(free_count: int) -> list[tuple[str, int]]:
    """(placement, threads) of every version, the first the one ratios are to."""
    return [(placement, threads) for placement in (ONE_CPU, FREE) for threads in (DEFAULT_THREADS, 1, free_count)]


def labels(free_count: int) -> list[str]:
    """Every version's label, in settings() order."""
    return [label(*setting) for setting in settings(free_count)]


def versions(cpu: int, free_count: int) -> list[Version]:
    """This tree six times: on the CPU given or free, each with a thread count of settings()."""
    return [Version(label(placement, threads), f"this tree, every worker {'free' if placement == FREE else f'on CPU {cpu}'}"
                    f", {threads_label(threads)}", ROOT, sys.executable,
                    ((cpus.AFFINITY_VARIABLE, cpus.FREE if placement == FREE else str(cpu)),
                     (THREADS_VARIABLE, str(threads))))
            for placement, threads in settings(free_count)]


def counted_pools(chosen: list[Version]) -> dict[str, dict]:
    """label -> the CPUs its worker may use and the inter-op threads TensorFlow starts there, each counted in a
    process of the version's own environment."""
    found = {}
    for version in chosen:
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **dict(version.env)}
        done = subprocess.run([version.python, "-c", POOL_PROBE], cwd=ROOT, env=env, capture_output=True, text=True)
        found[version.label] = (json.loads(done.stdout.splitlines()[-1]) if done.returncode == 0 and done.stdout
                                else {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]})
    return found


def analysed(outcomes, free_count: int) -> dict:
    """{n: {"benchmarks": {solver: {label: Interval, difference: Interval}}, "parts": {part: {...the same}}}}: each
    version's µs per step, and each of DIFFERENCES, pass by pass."""
    names = labels(free_count)

    def named(setting):
        placement, threads = setting
        return label(placement, free_count if threads == FREE_COUNT else threads)

    found = {}
    for n in sorted({outcome.key.n for outcome in outcomes if outcome.unjudged is None}):
        here = [outcome for outcome in outcomes if outcome.key.n == n and outcome.unjudged is None]
        us = {name: {outcome.key.solver: per_pass_us(outcome, name) for outcome in here} for name in names}
        for difference, minuend, subtrahend in DIFFERENCES:
            first, second = us[named(minuend)], us[named(subtrahend)]
            us[difference] = {solver: {p: value - second[solver][p] for p, value in by_pass.items()
                                       if p in second[solver]} for solver, by_pass in first.items()}
        columns = names + [difference for difference, _, _ in DIFFERENCES]
        benchmarks = {solver: {column: t_interval(list(us[column][solver].values()), RELEASE_CONFIDENCE)
                               for column in columns} for solver in SOLVERS if solver in us[names[0]]}
        parts = {column: parts_of(us[column]) for column in columns}
        found[n] = {"benchmarks": benchmarks,
                    "parts": {part: {column: parts[column].get(part) for column in columns} for part in parts[names[0]]}}
    return found


def share(part, whole) -> str:
    return f"{part.value / whole.value:.0%}" if part and whole and whole.value > 0 else "—"


def rendered(found: dict, saved: dict) -> str:
    free_count, names = saved["free_threads"], labels(saved["free_threads"])
    differences = [difference for difference, _, _ in DIFFERENCES]
    pools = "; ".join(f"{name}: {pool.get('inter_op_threads', pool.get('error'))}"
                      for name, pool in saved["pools"].items())
    lines = ["# Free against one CPU: what the difference is", "", f"`{saved['command']}`", "",
             f"{saved['date']}, CPU {saved['cpu']} ({saved['cpus']} CPUs free), at {saved['commit']}, "
             f"{saved['passes']} passes; one CPU: every worker on CPU {saved['one_cpu']}; free: wherever the system "
             f"puts them; each with TensorFlow's default threads, 1, and {free_count} (free's count: inter = intra). "
             f"Wall time {saved['wall_s'] / 60:.0f} min. Each cell: the mean over passes with its "
             f"{RELEASE_CONFIDENCE:.0%} Student t interval over the passes (fresh processes each), for that cell alone; "
             "each difference is taken pass by pass.", "",
             f"TensorFlow's inter-op threads, counted in each version's environment: {pools}.", ""]
    lines += [f"- {difference}: {EXPLAINED[difference]}" for difference in differences] + [""]
    for n, here in found.items():
        if (whole := here["benchmarks"].get(WHOLE_STEP)) and (said := attribution(
                whole["gap"], whole["pools"], whole["crossing"], free_count)):
            lines += [f"At n = {n:,}, `{WHOLE_STEP}`: {said}", ""]
    for n, here in found.items():
        lines += [f"## Each benchmark at n = {n:,}: µs per step", ""]
        lines += markdown(["solver", *names], [[f"`{solver}`", *(with_interval(cells[name]) for name in names)]
                                                for solver, cells in here["benchmarks"].items()])
        lines += [f"## Each benchmark at n = {n:,}: the differences, µs per step", ""]
        whole = here["benchmarks"].get(WHOLE_STEP, {}).get(label(FREE, DEFAULT_THREADS))
        lines += markdown(["solver", *differences, "gap of the free step"],
                          [[f"`{solver}`", *(with_interval(cells[name]) for name in differences),
                            share(cells["gap"], cells[label(FREE, DEFAULT_THREADS)])]
                           for solver, cells in here["benchmarks"].items()])
        if here["parts"]:
            lines += [f"## The parts of a `{WHOLE_STEP}` step at n = {n:,}: µs per step", ""]
            shown = [label(ONE_CPU, DEFAULT_THREADS), label(FREE, DEFAULT_THREADS), *differences]
            lines += markdown(["part", *shown, f"gap of the free `{WHOLE_STEP}`"],
                              [[part, *(with_interval(cells[name]) for name in shown), share(cells["gap"], whole)]
                               for part, cells in here["parts"].items()])
    return "\n".join(lines)


def report_figures(found: dict, saved: dict, folder: Path) -> dict:
    """handoff.json: what the report needs of the study, per size: the whole step each way and the differences."""
    def kept(interval):
        return interval and list(interval)

    return {"study": "perf.research.handoff", "folder": str(folder),
            **{key: saved[key] for key in ("command", "date", "cpu", "cpus", "commit", "one_cpu", "free_threads")},
            # How its workers ran, as a run records it (perf/report/handoff.py unlike); absent in a study saved before.
            **{key: saved[key] for key in ("worker_processes", "malloc_settings") if key in saved},
            "confidence": RELEASE_CONFIDENCE,
            "sizes": {str(n): {"solver": WHOLE_STEP, "free_us": kept(cells[label(FREE, DEFAULT_THREADS)]),
                               "one_cpu_us": kept(cells[label(ONE_CPU, DEFAULT_THREADS)]),
                               **{f"{name}_us": kept(cells[name]) for name in ("gap", "pools", "crossing")}}
                      for n, here in found.items() if (cells := here["benchmarks"].get(WHOLE_STEP))}}


def written(folder: Path) -> list[Path]:
    """README.md and handoff.json of a study, from the passes.json it saved in folder."""
    saved = json.loads((folder / "passes.json").read_text())
    found = analysed(outcomes_of(saved), saved["free_threads"])
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
                        help="the one CPU (default: the quiet one, as the gate's)")
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
    names = [name for name in options.solvers.split(",") if name]
    if not names:
        parser.error("--solvers: name at least one solver")
    if unknown := [name for name in names if name not in REGISTRY]:
        parser.error(f"--solvers: no solver {', '.join(unknown)}; the solvers: {', '.join(REGISTRY)}")
    cpu = options.cpu[0] if options.cpu else cpus.quiet_cpu(may_use)
    seed = random.SystemRandom().randrange(2**32) if options.seed is None else options.seed
    profile, began, free_count = PROFILES["quick"], time.perf_counter(), len(may_use)
    chosen = versions(cpu, free_count)
    keys = [Key(name, "cpu", n) for name in names for n in profile.sizes]
    pools = counted_pools(chosen)
    print(f"handoff: {len(keys)} benchmarks, {len(chosen)} versions (CPU {cpu} and free, threads TF default, 1 and "
          f"{free_count}), {options.passes} passes, seed {seed}; inter-op threads: "
          + ", ".join(f"{name} {pool.get('inter_op_threads', '?')}" for name, pool in pools.items()), flush=True)
    try:
        outcomes = side_by_side.measured(chosen, DEFAULT_THREADS, lambda workers: keys, profile, seed,
                                         gate.fixed(gate.Stopping(), options.passes),
                                         lambda text: print(f"handoff: {text}", flush=True), preload=names).outcomes
    except (gate.GateError, WorkerStopped) as error:
        print(f"handoff: cannot run: {error}", file=sys.stderr)
        return 2
    unjudged = [outcome for outcome in outcomes if outcome.unjudged]
    for outcome in unjudged:
        print(f"handoff: {outcome.key.name}: {outcome.unjudged.why}", file=sys.stderr)
    if len(unjudged) == len(outcomes):
        print("handoff: NOT MEASURED: no benchmark was timed every way", file=sys.stderr)
        return 10
    save_passes(options.out, outcomes, began,
                command=f"python -m perf.research.handoff --passes {options.passes} --cpu {cpu} --seed {seed}"
                        + ("" if names == list(SOLVERS) else f" --solvers {','.join(names)}"),
                commit=commit(), seed=seed, passes=options.passes, one_cpu=cpu, cpus=len(may_use),
                free_threads=free_count, pools=pools, worker_processes=WORKER_PROCESSES,
                malloc_settings=malloc_settings(),
                versions=[{"label": version.label, "env": dict(version.env)} for version in chosen])
    print(f"handoff: {', '.join(str(path) for path in written(options.out))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
