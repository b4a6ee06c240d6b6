"""python -m perf.research.worker_history: does a worker's earlier work move a later benchmark's figures?

The suite's pool (perf/measure/pool.py) keeps a worker for the whole run, so trial i of every benchmark runs in a
process that has already run trial i of every benchmark before it. Each repeat here starts two workers: `used`
first runs one trial of every benchmark of the profile, as a pool worker does in a run, while `fresh` waits; then
every probe benchmark gets one trial on each, in turn (which goes first alternates by repeat). Per probe, the
ratio used / fresh of its paired ratio to the timing reference, and of the reference's own per-step time, over
the repeats: a mean and its Student t interval. An interval that holds 1 and is narrow says a worker's history does
not move later figures; one that lies off 1 says it does.

    python -m perf.research.worker_history --repeats 8 --out docs/results/worker-history/epyc
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

import solvers
from perf.judge.statistics import t_interval
from perf.measure import TIMING_REFERENCE
from perf.measure.schedule import reference_steps
from perf.measure.environment import cpu_model, versions
from perf.measure.profiles import PROFILES
from perf.measure.trials import Measured
from perf.measure.worker import ROOT, Version
from perf.measure.workers import WorkerSet
from solvers.tensorflow_support import DEFAULT_THREADS

# The benchmarks most likely to carry a process's history: the timing reference itself, the TF1 sessions whose
# speed modes last a process's life, TensorFlow's in-graph loops, and NumPy at the largest size (its allocator).
PROBES = ("numpy_loop:1000", "numpy_loop:100000", "numpy_lean:100000", "tf1_feed_dict:1000",
          "tf1_constant_no_loss:1000", "tf1_while_loop:1000", "tf2_function:1000", "jax_step:1000")
REPEATS_CONFIDENCE = 0.90  # the level of each probe's used / fresh interval over the repeats, two-sided


def one_trial(worker, solver: str, n: int, steps: int, max_rounds: int) -> dict:
    """One trial of a benchmark on worker, paired with the timing reference unless it is the reference."""
    paired = solver != TIMING_REFERENCE[0]
    trial = Measured({"solver": solver, "device": "cpu", "n": n, "steps": steps, "calls": 1}, 1, max_rounds,
                     reference_steps(n, steps) if paired else None).trial(worker)
    reference_s = trial.reference_median_s() / reference_steps(n, steps) if paired else trial.median_s() / steps
    return {"ratio": trial.median_s() / steps / reference_s if paired else 1.0, "reference_us": reference_s * 1e6}


def repeat(index: int, profile, history: list[tuple[str, int]], probes: list[tuple[str, int]], threads: int) -> dict:
    version = Version("study", "this tree", ROOT, sys.executable)
    preload = sorted({name for name, _ in history + probes} | {TIMING_REFERENCE[0]})
    workers = {label: WorkerSet(version, threads, preload) for label in ("fresh", "used")}
    try:
        for worker in workers.values():  # both have imported everything before anything is timed
            worker.ask({"op": "solvers", "only": []})
        began = time.perf_counter()
        for name, n in history:
            one_trial(workers["used"], name, n, profile.steps_at(n), profile.rounds_per_trial)
        history_s = time.perf_counter() - began
        order = ["fresh", "used"] if index % 2 == 0 else ["used", "fresh"]
        found = {}
        for name, n in probes:
            found[f"{name}:{n}"] = {label: one_trial(workers[label], name, n, profile.steps_at(n),
                                                     profile.rounds_per_trial) for label in order}
        return {"history_s": history_s, "probes": found}
    finally:
        for worker in workers.values():
            worker.close()


def summary(repeats: list[dict]) -> list[str]:
    lines = [f"used / fresh over {len(repeats)} repeats: the mean with its {REPEATS_CONFIDENCE:.0%} Student t interval",
             f"{'probe':<28} {'paired ratio':<28} {'reference µs/step':<28}"]
    for probe in repeats[0]["probes"]:
        cells = []
        for figure in ("ratio", "reference_us"):
            logs = [math.log(r["probes"][probe]["used"][figure] / r["probes"][probe]["fresh"][figure]) for r in repeats]
            ratio = t_interval(logs, REPEATS_CONFIDENCE, math.exp)
            cells.append(f"{ratio.value:.3f} ({ratio.low:.3f}-{ratio.high:.3f})")
        lines.append(f"{probe:<28} {cells[0]:<28} {cells[1]:<28}")
    return lines


def parsed(text: str) -> list[tuple[str, int]]:
    return [(name, int(n)) for name, _, n in (item.strip().partition(":") for item in text.split(",") if item.strip())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.research.worker_history", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--profile", default="quick", choices=sorted(PROFILES))
    parser.add_argument("--solvers", help="the history's solvers (default: every one that runs here)")
    parser.add_argument("--probes", default=",".join(PROBES), help="SOLVER:N, comma-separated")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="TensorFlow threads (default: TF's own)")
    parser.add_argument("--out", type=Path, help="write every repeat and the summary here, as results.json; more "
                                                 "repeats are added to those already there")
    options = parser.parse_args(argv)
    if options.repeats < 2:
        parser.error("--repeats must be at least 2")
    profile = PROFILES[options.profile]
    names = options.solvers.split(",") if options.solvers else list(solvers.REGISTRY)
    runnable = [name for name in names if not solvers.get(name).unavailable_reason("cpu")]
    history = [(name, n) for name in runnable for n in profile.sizes]
    probes = [(name, n) for name, n in parsed(options.probes) if name in runnable or name == TIMING_REFERENCE[0]]
    saved = options.out / "results.json" if options.out else None
    # A folder that holds repeats already gets more of them: the summary is over all.
    repeats = json.loads(saved.read_text())["repeats"] if saved and saved.exists() else []
    for index in range(len(repeats), len(repeats) + options.repeats):
        repeats.append(repeat(index, profile, history, probes, options.threads))
        print(f"repeat {index + 1}: history {repeats[-1]['history_s']:.0f} s", flush=True)
    lines = summary(repeats)
    print("\n".join(lines))
    if saved:
        options.out.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps({
            "cpu_model": cpu_model(), **versions(), "profile": options.profile, "threads": options.threads,
            "history": [f"{name}:{n}" for name, n in history], "repeats": repeats, "summary": lines}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
