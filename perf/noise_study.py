"""Noise study for the gate: do same-run ratios hold where absolute times drift? Runs the suite N times, then compares.

    python -m perf.noise_study --runs 10 --out .noise-study            # ~N × the suite's time
    python -m perf.noise_study --out .noise-study --analyze-only       # re-read the saved runs
    python -m perf.noise_study --runs 10 --out DIR -- --profile full   # extra pytest arguments after --

For each benchmark it prints the run-to-run spread of its absolute median and of its gated
ratio (max/min over runs), the largest deviation of a run's ratio from the median ratio
(a threshold below that would have fired on unchanged code), and the leave-one-out gate
verdicts: each run gated against a baseline pooled from all the others. The pooled
baseline of all runs can then be written with `python -m perf.gate DIR/run-*.json --write`.
"""

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

from perf import gate


def record(runs: int, out: Path, pytest_args: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for index in range(runs):
        path = out / f"run-{index:02d}.json"
        print(f"run {index + 1}/{runs} -> {path}", flush=True)
        subprocess.run([sys.executable, "-m", "pytest", "perf", "-q", "-p", "no:cacheprovider",
                        f"--benchmark-json={path}", *pytest_args], check=False, stdout=subprocess.DEVNULL)


def analyze(paths: list[Path]) -> str:
    runs = [gate.load_json(path, "run") for path in paths]
    measured = [gate.measure(run) for run in runs]
    verdicts = {}
    for index, run in enumerate(runs):
        others = runs[:index] + runs[index + 1:]
        result = gate.compare(gate.make_baseline(others), measured[index])
        for verdict, rows in result.items():
            for row in rows:
                verdicts.setdefault(row["name"], []).append(verdict)
    names = sorted({name for one in measured for name in one if "ratio" in one[name] and not one[name].get("is_reference")})
    width = max(map(len, names), default=10)
    lines = [f"{len(runs)} runs; spread = max/min over runs; deviation = largest |run ratio / median ratio - 1|",
             f"{'benchmark':<{width}}  {'time spread':>11}  {'ratio spread':>12}  {'deviation':>9}  leave-one-out verdicts"]
    for name in names:
        seconds = [one[name]["median_s"] for one in measured if name in one]
        ratios = [one[name]["ratio"] for one in measured if "ratio" in one.get(name, {})]
        deviation = max(abs(ratio / np.median(ratios) - 1) for ratio in ratios)
        counts = ", ".join(f"{verdicts[name].count(v)} {v}" for v in dict.fromkeys(verdicts.get(name, [])))
        lines.append(f"{name:<{width}}  {max(seconds) / min(seconds):>11.2f}  {max(ratios) / min(ratios):>12.2f}"
                     f"  {deviation:>9.0%}  {counts}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.noise_study", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path(".noise-study"))
    parser.add_argument("--analyze-only", action="store_true", help="only read the runs already in --out")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest, e.g. --profile full")
    options = parser.parse_args(argv)
    if not options.analyze_only:
        record(options.runs, options.out, options.pytest_args)
    paths = sorted(options.out.glob("run-*.json"))
    if len(paths) < 3:
        print(f"need at least 3 runs in {options.out}, found {len(paths)}", file=sys.stderr)
        return 2
    try:
        print(analyze(paths))
    except gate.GateError as error:
        print(f"noise study: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
