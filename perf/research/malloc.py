"""python -m perf.research.malloc: what glibc's allocation thresholds and an imported framework do to numpy_loop's step.

Why the workers fix glibc's thresholds (perf.measure.worker.MALLOC_SETTINGS): glibc serves a large allocation from
fresh pages until a process has freed such chunks, and importing TensorFlow moves that threshold, so a NumPy step on
arrays of 800 kB (n = 1e5) cost what the process had done before. Each repeat starts a fresh process per variant, in
an order shuffled anew: {glibc's defaults, the workers' thresholds} × {nothing imported, TensorFlow imported, JAX
imported}. Each process, pinned to one CPU, warms numpy_loop up at n, times rounds of its steps, checks the answer
against the float64 one, and prints its median µs a step. Per variant: the median over the repeats, with their range.

    python -m perf.research.malloc --repeats 5 --out docs/results/malloc
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from perf.measure import cpus, environment
from perf.measure.worker import MALLOC_SETTINGS, ROOT

SIZE, STEPS, ROUNDS = 100_000, 100, 15
FRAMEWORKS = ("none", "tensorflow", "jax")
SETTINGS = ("glibc's defaults", "the workers' thresholds")
# One process's measurement: the framework imported first (as a worker imports it before any benchmark), then
# numpy_loop's rounds, each ended by its answer on the host.
CHILD = """
import importlib, json, os, statistics, sys, time
framework, n, steps, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if framework != "none":
    importlib.import_module(framework)
from solvers import REGISTRY
from solvers.problem import seed_problem
from perf.measure.solver_runs import answer_mismatch
solver = REGISTRY["numpy_loop"]
with solver.prepare(seed_problem(n, iterations=steps), "cpu") as run:
    run(steps)
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        fit = run(steps)
        times.append(time.perf_counter() - began)
print(json.dumps({"us_per_step": statistics.median(times) / steps * 1e6, "wrong": answer_mismatch(fit, solver, n),
                  "imported": [name for name in ("tensorflow", "jax") if name in sys.modules]}))
"""


def measured(framework: str, setting: str, cpu: int) -> float:
    """numpy_loop's median µs a step in a fresh process with framework imported, under setting, on cpu."""
    env = {key: value for key, value in os.environ.items() if key not in MALLOC_SETTINGS}
    if setting == SETTINGS[1]:
        env.update(MALLOC_SETTINGS)
    env.update(TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(ROOT))
    done = subprocess.run(["taskset", "-c", str(cpu), sys.executable, "-c", CHILD, framework, str(SIZE), str(STEPS),
                           str(ROUNDS)], env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{framework}, {setting}: {done.stderr.strip().splitlines()[-1:]}")
    reply = json.loads(done.stdout.splitlines()[-1])
    if reply["wrong"]:
        raise RuntimeError(f"{framework}, {setting}: wrong answer: {reply['wrong']}")
    if (framework == "none") != (framework not in reply["imported"]) or framework == "none" and reply["imported"]:
        raise RuntimeError(f"{framework}: the process had imported {reply['imported'] or 'no framework'}")
    return reply["us_per_step"]


def table(found: dict[str, list[float]]) -> list[str]:
    lines = ["| imported first | " + " | ".join(SETTINGS) + " |", "|---|" + "---|" * len(SETTINGS)]
    for framework in FRAMEWORKS:
        cells = [found[f"{framework}, {setting}"] for setting in SETTINGS]
        lines.append(f"| {framework} | " + " | ".join(
            f"{statistics.median(values):.0f} ({min(values):.0f} to {max(values):.0f})" for values in cells) + " |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.research.malloc", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="processes per variant (default: %(default)s)")
    parser.add_argument("--cpu", type=int, help="the CPU every process runs on (default: the quiet one)")
    parser.add_argument("--out", type=Path, help="write README.md and malloc.json there")
    parser.add_argument("--seed", type=int, help="the order's seed (default: a new one, recorded)")
    options = parser.parse_args(argv)
    if options.repeats < 1:
        parser.error("--repeats must be at least 1")
    cpu = cpus.quiet_cpu() if options.cpu is None else options.cpu
    seed = random.SystemRandom().randrange(2**32) if options.seed is None else options.seed
    rng, began = random.Random(seed), time.perf_counter()
    variants = [(framework, setting) for framework in FRAMEWORKS for setting in SETTINGS]
    found = {f"{framework}, {setting}": [] for framework, setting in variants}
    try:
        for repeat in range(options.repeats):
            for framework, setting in rng.sample(variants, len(variants)):
                found[f"{framework}, {setting}"].append(measured(framework, setting, cpu))
            print(f"malloc: repeat {repeat + 1} of {options.repeats}", flush=True)
    except (RuntimeError, OSError) as error:
        print(f"malloc: cannot run: {error}", file=sys.stderr)
        return 2
    command = f"python -m perf.research.malloc --repeats {options.repeats} --cpu {cpu} --seed {seed}"
    header = (f"`{command}`\n\n{datetime.now(timezone.utc):%Y-%m-%d}, {environment.cpu_model()}, CPU {cpu}, "
              f"{time.perf_counter() - began:.0f} s. `numpy_loop` µs a step at n = {SIZE:,} ({STEPS} steps a round, "
              f"the median of {ROUNDS} rounds in each process), the median over {options.repeats} fresh processes "
              f"a variant with their range; the workers' thresholds: " + ", ".join(
                  f"`{name}={value}`" for name, value in MALLOC_SETTINGS.items()))
    text = "\n".join([header, "", *table(found)])
    print(text)
    if options.out:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / "README.md").write_text(f"# glibc's thresholds and an imported framework\n\n{text}\n")
        (options.out / "malloc.json").write_text(json.dumps({"command": command, "cpu": cpu, "seed": seed,
                                                             "us_per_step": found}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
