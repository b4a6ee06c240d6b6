"""python -m perf.research.counted_spread: how far apart a benchmark's instructions a step land in fresh processes.

The counted measure (perf/measure/count.py) is only worth its minutes if a count repeats. Each process here is a fresh
counted worker set (a process per framework, as the suite's), which counts every selected CPU solver at every size
in turn, each in a counted trial of its own (a fresh setup, its answer checked), as a run's counts are taken
(perf/measure/counting.py): as many processes at a time as there are CPUs, for a count needs no quiet CPU. Per
benchmark: the median instructions a step over the processes, their range, and the spread, (max - min) / median.

    python -m perf.research.counted_spread --processes 5 --threads 0 --out docs/results/counted/DATE/spread-threads0
"""

import argparse
import json
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import solvers
from perf.measure import Key, count, counting, environment
from perf.measure.worker import ROOT, Version


def spread(values: list[float]) -> float:
    return (max(values) - min(values)) / statistics.median(values)


def table(found: dict[str, list[float]]) -> list[str]:
    lines = ["| benchmark | instructions a step (median) | lowest | highest | spread |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {name} | {statistics.median(values):,.0f} | {min(values):,.0f} | {max(values):,.0f} | "
              f"{spread(values):.3%} |" for name, values in found.items()]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.research.counted_spread",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=5, help="fresh processes a benchmark (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=0, help="TensorFlow's threads, 0 its own (default)")
    parser.add_argument("--sizes", default="1000,100000", help="comma-separated n (default: %(default)s)")
    parser.add_argument("--solvers", help="comma-separated (default: every solver that runs on this CPU)")
    parser.add_argument("--out", type=Path, help="write README.md and spread.json there")
    options = parser.parse_args(argv)
    if reason := count.unavailable_reason():
        print(f"counted_spread: cannot count here: {reason}", file=sys.stderr)
        return 2
    try:
        names = options.solvers.split(",") if options.solvers else [
            name for name, solver in solvers.REGISTRY.items() if "cpu" in solver.devices
            and not solver.unavailable_reason("cpu")]
        sizes = [int(size) for size in options.sizes.split(",")]
        for name in names:
            solvers.get(name)
    except (KeyError, ValueError) as error:
        print(f"counted_spread: {error}", file=sys.stderr)
        return 2
    began = time.perf_counter()
    counts = counting.counted(Version("study", "this tree", ROOT, sys.executable), options.threads,
                              [Key(name, "cpu", n) for name in names for n in sizes], options.processes)
    if failed := [f"{key.name}: {found.failure}" for key, found in counts.items() if found.failure]:
        print("counted_spread: NOT MEASURED:\n  " + "\n  ".join(failed), file=sys.stderr)
        return 10
    found = {key.name: found.per_step for key, found in counts.items()}
    command = (f"python -m perf.research.counted_spread --processes {options.processes} --threads {options.threads} "
               f"--sizes {options.sizes} --solvers {','.join(names)}")
    settings = count.settings()
    header = (f"`{command}`\n\n{datetime.now(timezone.utc):%Y-%m-%d}, {environment.cpu_model()}, "
              f"{time.perf_counter() - began:.0f} s, valgrind {settings['valgrind']}, TensorFlow's threads "
              f"{options.threads or 'its own'}. Instructions a step counted under callgrind in "
              f"{options.processes} fresh processes a benchmark, each the difference of two step counts "
              f"(sized by a probe count: perf.measure.count.steps_counted) over the steps between them.")
    text = "\n".join([header, "", *table(found)])
    print(text)
    if options.out:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / "README.md").write_text(f"# Instructions a step, process to process\n\n{text}\n")
        (options.out / "spread.json").write_text(json.dumps(
            {"command": command, "cpu_model": environment.cpu_model(), "threads": options.threads,
             "settings": settings, "per_step": found}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
