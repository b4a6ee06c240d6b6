"""Noise study of the gate: its false alarms on identical versions, and its catch rate for real slowdowns.

    python -m perf.gate.noise_study --repeats 5 --out .noise-study        # ~6 minutes a repeat on 2 cores
    python -m perf.gate.noise_study --out .noise-study --analyze-only    # re-read the saved repeats

Each repeat starts fresh workers for one control and several variants of this working tree, and
times them interleaved exactly as `python -m perf.gate` does: identical copies (A/A) and copies whose
every timed call is slowed by 1.1x, 1.25x and 1.5x (FSSGD_SLOWDOWN, a real busy wait inside the timed
call). Every variant is then judged against the control with the gate's own verdict and threshold:
a REGRESSION on an A/A copy is a false alarm, one on a slowed copy a catch. For every benchmark it
prints the counts, and the largest A/A deviation seen, the threshold below which an A/A copy would
have failed. The A/A copies of one repeat share its control, so their comparisons are not independent.
"""

import argparse
import json
import sys
from pathlib import Path

from perf.gate.interleave import DEFAULT_TRIALS, SEED, benchmarks_of, interleaved, listings
from perf.gate.verdict import DEFAULT_THRESHOLD, verdict
from perf.gate.versions import ROOT, Version
from perf.gate.worker import GATE_THREADS, started
from perf.measure.profiles import PROFILES
from solvers.tensorflow_support import threads_argument

CONTROL = "control"
FACTORS = (1.1, 1.25, 1.5)


def variants(factors, identical: int) -> dict[str, str]:
    """{label: FSSGD_SLOWDOWN}: the control, identical copies (A/A), and one slowed copy per factor."""
    return {CONTROL: "", **{f"A/A-{copy + 1}": "" for copy in range(identical)},
            **{f"x{factor:g}": f"*={factor:g}" for factor in factors}}


def record(repeat: int, out: Path, options) -> Path:
    versions = [Version(label, f"the working tree{f', slowed by {slowdown}' if slowdown else ''}", ROOT,
                        sys.executable, slowdown)
                for label, slowdown in variants(options.factors, options.identical).items()]
    profile = PROFILES[options.profile]
    with started(versions, options.threads) as workers:
        found = listings(workers)
        solvers = options.solvers.split(",") if options.solvers else None
        benchmarks = benchmarks_of(found, solvers, ["cpu"], profile)
        outcomes = interleaved(workers, found, benchmarks, options.trials, profile, seed=SEED + repeat)
    path = out / f"repeat-{repeat:02d}.json"
    path.write_text(json.dumps({
        "threshold": options.threshold,
        "rows": {label: [verdict(outcome, CONTROL, label, options.threshold) for outcome in outcomes]
                 for label in workers if label != CONTROL},
    }, indent=1))
    return path


def analyze(paths: list[Path]) -> str:
    repeats = [json.loads(path.read_text()) for path in paths]
    labels = list(repeats[0]["rows"])
    counts, aa_deviation = {}, {}
    for repeat in repeats:
        for label, rows in repeat["rows"].items():
            for row in rows:
                tally = counts.setdefault(row["benchmark"], {}).setdefault(label, {})
                tally[row["verdict"]] = tally.get(row["verdict"], 0) + 1
                if label.startswith("A/A") and "ratio" in row:
                    deviation = max(row["ratio"], 1 / row["ratio"]) - 1
                    aa_deviation[row["benchmark"]] = max(aa_deviation.get(row["benchmark"], 0), deviation)
    width = max(map(len, counts), default=10)
    lines = [f"{len(repeats)} repeats, threshold +{repeats[0]['threshold']:.0%}; per variant: regressions / comparisons"
             f" (A/A: false alarms; slowed: catches); A/A max: largest A/A deviation of the median ratio from 1",
             f"{'benchmark':<{width}}  " + "  ".join(f"{label:>8}" for label in labels) + "  A/A max"]
    totals = {label: [0, 0] for label in labels}
    for name, by_label in counts.items():
        cells = []
        for label in labels:
            tally = by_label.get(label, {})
            caught, compared = tally.get("regression", 0), sum(tally.values())
            totals[label][0] += caught
            totals[label][1] += compared
            cells.append(f"{caught:>3}/{compared:<4}")
        deviation = f"{aa_deviation[name]:.1%}" if name in aa_deviation else "-"
        lines.append(f"{name:<{width}}  " + "  ".join(f"{cell:>8}" for cell in cells) + f"  {deviation:>7}")
    lines.append(f"{'all':<{width}}  " + "  ".join(f"{f'{c}/{n}':>8}" for c, n in totals.values()))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.gate.noise_study", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path(".noise-study"))
    parser.add_argument("--analyze-only", action="store_true", help="only read the repeats already in --out")
    parser.add_argument("--identical", type=int, default=2,
                        help="identical copies of the control per repeat, each one A/A comparison (default: 2)")
    parser.add_argument("--factors", type=lambda text: tuple(float(f) for f in text.split(",")), default=FACTORS,
                        help="slowdowns to inject, comma-separated (default: 1.1,1.25,1.5)")
    parser.add_argument("--solvers", help="comma-separated solver names (default: all)")
    parser.add_argument("--profile", default="quick", choices=sorted(PROFILES))
    parser.add_argument("--trials", type=int, default=DEFAULT_TRIALS)
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    parser.add_argument("--threads", type=threads_argument, default=GATE_THREADS)
    options = parser.parse_args(argv)
    options.out.mkdir(parents=True, exist_ok=True)
    if not options.analyze_only:
        start = len(list(options.out.glob("repeat-*.json")))  # more repeats add to the ones already there
        for repeat in range(start, start + options.repeats):
            print(f"repeat {repeat + 1 - start}/{options.repeats} -> {record(repeat, options.out, options)}", flush=True)
    paths = sorted(options.out.glob("repeat-*.json"))
    if not paths:
        print(f"no repeats in {options.out}", file=sys.stderr)
        return 2
    print(analyze(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
