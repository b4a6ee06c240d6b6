"""python -m perf.research.compare_study: is the suite's comparison of two saved runs (--benchmark-compare, read by
perf/report/compare.py) to be trusted? Whole runs of `pytest perf/`, made one after another, then every pair of
them compared with the verdict.

    record   runs of this tree's suite, each a fresh `pytest perf/` saved as run-NN.json in --out, with what it was
             (quiet, beside the noise study's neighbour, slowed by FSSGD_SLOWDOWN on a third of the solvers) and,
             with --seed-programs, the question's own two programs timed right after it (perf/research/seed_programs)
    analyze  every pair compared: identical runs must not flag (SLOWER, and runs that --fail-on-slower would fail),
             slowed benchmarks must be caught; and how far identical runs agree (intervals that overlap, the spread
             of their ratios, the parts of a tf1_feed_dict step, µs per step against the seed's programs), and
             how many trials a run would need to call a given slowdown from two saved runs (the noise's two levels)

    python -m perf.research.compare_study record --out docs/results/compare-calibration/epyc --runs 10 --seed-programs
    python -m perf.research.compare_study record --out … --runs 5 --neighbour
    python -m perf.research.compare_study record --out … --runs 3 --slowed 1.25
    python -m perf.research.compare_study record --out … --runs 4 --cpu-affinity 1   # the suite's options pass on
    python -m perf.research.compare_study record --out … --changed tf1_while_loop=1.25   # run from a worktree
    python -m perf.research.compare_study analyze --out …

--changed labels a run of a real code change, made by running the study from a worktree of that commit: its solvers
and the slowdown each was meant to have (the analysis reports the change the runs measured beside it).

Runs of one folder are of one CPU affinity: analyze refuses a folder that mixes them.
"""

import argparse
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from scipy.stats import norm

import solvers
from perf.judge.outcome import DEFAULT_THRESHOLD, threshold_argument
from perf.judge.rules import CHANGE_CONFIDENCE, smallest_slowdown_called, trials_for_spread
from perf.judge.statistics import overlapping
from perf.measure import TIMING_REFERENCE, Key
from perf.measure.cpus import recorded_affinity
from perf.measure.trials import SLOWDOWN_VARIABLE, slowdown_factors
from perf.measure.worker import ROOT
from perf.report import analysis
from perf.report.compare import compared
from perf.report.rows import rows_of
from perf.research.neighbour import noisy_neighbour
from perf.research.seed_programs import STEPS

GROUPS = 3  # a slowed run slows one of three groups of the solvers
# The benchmarks whose agreement between runs the issue set a target for, at n = 1,000.
STEADY = ("tf1_while_loop", "numpy_lean", "tf1_feed_dict", "tf1_constant_no_loss")
PARTS = ("Session.run call", "feed_dict copies")


def slowed_group(index: int) -> list[str]:
    """Every GROUPS-th solver but the timing reference, from index: slowing the reference would move nothing."""
    names = [name for name in solvers.REGISTRY if name != TIMING_REFERENCE[0]]
    return names[index % GROUPS::GROUPS]


def manifest(out: Path) -> list[dict]:
    path = out / "manifest.json"
    return json.loads(path.read_text()) if path.exists() else []


def record(out: Path, runs: int, neighbour: bool, slowed: float | None, seed_programs: int, extra: list[str],
           changed: str | None = None):
    """runs more runs in out, each `pytest perf/` with the suite's options in extra (--cpu-affinity 1), recorded;
    changed: the solvers a code change in this tree slowed, as FSSGD_SLOWDOWN names them (nothing is slowed here)."""
    out.mkdir(parents=True, exist_ok=True)
    entries = manifest(out)
    for _ in range(runs):
        index = len(entries)
        entry = {"file": f"run-{index:02d}.json", "kind": "neighbour" if neighbour else "quiet", "slowdown": None,
                 "suite_options": extra}
        env = dict(os.environ)
        if changed:
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
            entry.update(slowdown=changed, change="code", commit=head.strip())
        elif slowed:
            entry["slowdown"] = ",".join(f"{name}={slowed}" for name in slowed_group(index))
            env[SLOWDOWN_VARIABLE] = entry["slowdown"]
        began = time.perf_counter()
        with noisy_neighbour(max(os.sched_getaffinity(0)), seed=index) if neighbour else nullcontext():
            result = subprocess.run([sys.executable, "-m", "pytest", "perf/", "-p", "no:cacheprovider", "-q",
                                     f"--benchmark-json={out / entry['file']}", *extra], cwd=ROOT, env=env,
                                    capture_output=True, text=True)
        entry["seconds"] = time.perf_counter() - began
        if result.returncode:
            print(result.stdout[-3000:], result.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"run {index} failed ({result.returncode})")
        if seed_programs:
            entry["seed_programs"] = {program: json.loads(subprocess.run(
                [sys.executable, "-m", "perf.research.seed_programs", program, str(seed_programs)], cwd=ROOT,
                capture_output=True, text=True, check=True).stdout)["us_per_step"] for program in ("numpy", "tensorflow")}
        entries.append(entry)
        (out / "manifest.json").write_text(json.dumps(entries, indent=1))
        print(f"run {index}: {entry['kind']}, slowdown {entry['slowdown']}, {entry['seconds']:.0f} s"
              + (f", seed programs {entry['seed_programs']}" if seed_programs else ""), flush=True)


class StudyError(Exception):
    """The runs in --out cannot be analysed together: the message says why."""


def loaded(out: Path) -> list[tuple[dict, dict]]:
    """(manifest entry, {Key: Row} of the per-step tables) per run, in the order they were made; StudyError where
    the runs were made in more than one CPU affinity, whose ratios differ without any change of code."""
    found, modes = [], {}
    for entry in manifest(out):
        document = json.loads((out / entry["file"]).read_text())
        modes.setdefault(recorded_affinity(document["machine_info"].get("fssgd", {})), []).append(entry["file"])
        found.append((entry, {row.key: row for row in rows_of(document["benchmarks"])[0] if not row.study}))
    if len(modes) > 1:
        raise StudyError(f"{out} holds runs of {len(modes)} CPU affinities, which are not compared: "
                         + "; ".join(f"{mode}: {', '.join(files)}" for mode, files in modes.items())
                         + ". Record each in a folder of its own")
    return found


def slowed_factors(entry: dict) -> dict[str, float]:
    """{solver: the factor it was slowed or meant to be slowed by} of a run, read as FSSGD_SLOWDOWN is."""
    return slowdown_factors(entry["slowdown"] or "")


def slowed_kind(entry: dict, solver: str) -> str:
    """How a slowed benchmark is tallied: by FSSGD_SLOWDOWN or a code change, and by its factor."""
    return f"{'changed' if entry.get('change') == 'code' else 'slowed'} {slowed_factors(entry)[solver]}x"


def tallies(runs, threshold: float) -> dict:
    """Verdicts of every comparison, by what was compared: identical (both runs quiet, both beside the neighbour,
    or one of each: runs made in different conditions), and slowed benchmarks (a slowed quiet run against every
    run) by factor; per pair, whether --fail-on-slower would have failed it on an identical benchmark."""
    counts, failed, reach, changes = {}, {}, {}, {}
    plain = [run for run in runs if not run[0]["slowdown"]]
    pairs = list(itertools.combinations(plain, 2))
    pairs += [(then, now) for now in runs if now[0]["slowdown"] for then in plain]
    for (then_entry, then_rows), (now_entry, now_rows) in pairs:
        conditions = " and ".join(sorted({then_entry["kind"], now_entry["kind"]}))
        slowed = slowed_factors(now_entry)
        pair_failed = False
        for key in sorted(set(then_rows) & set(now_rows)):
            result = compared(key, then_rows[key].trial_ratios, now_rows[key].trial_ratios, threshold)
            if result is None:
                continue
            if key.solver in slowed:
                kind = f"{slowed_kind(now_entry, key.solver)}, against {then_entry['kind']}"
                changes.setdefault(key.name, []).append(result.change.value)
            else:
                kind = f"identical, {conditions}"
            counts.setdefault(kind, {}).setdefault(result.verdict, 0)
            counts[kind][result.verdict] += 1
            pair_failed |= result.verdict == "slower" and key.solver not in slowed
            if kind == "identical, quiet":
                reach.setdefault(key.name, []).append(smallest_slowdown_called(result.change, threshold))
        failed.setdefault(conditions, []).append(pair_failed)
    reach = {name: statistics.median(values) for name, values in sorted(reach.items())}
    return {"verdicts": counts,
            "slowed benchmarks' change, median over pairs": {name: round(statistics.median(values), 3)
                                                           for name, values in sorted(changes.items())}, "pairs failed on identical benchmarks": {kind: f"{sum(v)} of {len(v)}"
                                                                          for kind, v in failed.items()},
            "smallest slowdown two identical quiet runs could call, median over pairs": {
                "over benchmarks": round(statistics.median(reach.values()), 3) if reach else None,
                **{name: round(value, 3) for name, value in reach.items()}}}


def agreement(runs) -> dict:
    """How identical quiet runs agree: the share of pairs whose ratio intervals overlap, the max/min spread of the
    STEADY benchmarks' ratios at n = 1,000 over every three quiet runs in a row and over all, the parts'
    half-widths, µs per step beside the seed's own programs."""
    quiet = [run for run in runs if run[0]["kind"] == "quiet" and not run[0]["slowdown"]]
    rows = [run_rows for _, run_rows in quiet]
    overlaps = []
    for first, second in itertools.combinations(rows, 2):
        for key in set(first) & set(second):
            a, b = first[key].ratio, second[key].ratio
            if a and b and not first[key].is_timing_reference:
                overlaps.append(overlapping(a, b))
    spread = {}
    for solver in STEADY:
        values = [row[Key(solver, "cpu", 1000)].ratio.value for row in rows if Key(solver, "cpu", 1000) in row]
        spread[solver] = {"every three in a row": [round(max(values[i:i + 3]) / min(values[i:i + 3]), 3)
                                                   for i in range(len(values) - 2)],
                          "all": round(max(values) / min(values), 3) if values else None}
    parts = {part: [] for part in PARTS}
    for row in rows:
        for part, value, _ in analysis.step_parts(row, "cpu", 1000):
            if part in parts:
                parts[part].append(round((value.high - value.low) / 2 / value.value, 3))
    seed = []
    for entry, row in quiet:
        if "seed_programs" in entry:
            suite = {program: row[Key(solver, "cpu", 1000)].per_step_us
                     for program, solver in (("numpy", "numpy_loop"), ("tensorflow", "tf1_feed_dict"))
                     if Key(solver, "cpu", 1000) in row}
            seed.append({program: round(suite[program] / entry["seed_programs"][program], 3) for program in suite})
    return {"intervals overlapping, pairs": f"{sum(overlaps)} of {len(overlaps)}",
            "spread max/min of × numpy_loop at n = 1,000 over quiet runs": spread,
            "parts' half-width / value at n = 1,000, per run": parts,
            "suite µs per step / seed program's, per run": seed,
            "wall seconds per run": [round(entry["seconds"]) for entry, _ in runs]}


def trials_taken(runs) -> list[dict]:
    """Per run, the trials its paired benchmarks took (--budget: perf/measure/schedule.py) and why they stopped."""
    found = []
    for entry, rows in runs:
        judged = [row for row in rows.values() if not row.is_timing_reference and row.trials]
        stopped = [row.info.get("trials_stopped") or "not recorded" for row in judged]
        found.append({"file": entry["file"], "trials, fewest / median / most": [
            min(row.trials for row in judged), statistics.median(row.trials for row in judged),
            max(row.trials for row in judged)] if judged else None,
            "stopped": {why: stopped.count(why) for why in sorted(set(stopped))}})
    return found


def trials_to_be_precise(runs, threshold: float, most: int = 1000) -> dict:
    """Per benchmark, the trials a run would take to be precise enough (perf.judge.rules.precise_enough) at the
    spread of its trials within the identical quiet runs: the fewest m whose 99% Hodges-Lehmann reach, in the normal
    approximation (z × √(π/3) × sd × √(2/m)), is under half the threshold; with the median and the nine-in-ten over
    the benchmarks."""
    quiet = [rows for entry, rows in runs if entry["kind"] == "quiet" and not entry["slowdown"]]
    found = {}
    for key in sorted(set.intersection(*(set(rows) for rows in quiet))) if quiet else []:
        logs = [[math.log(ratio) for ratio in rows[key].trial_ratios] for rows in quiet]
        if key == Key(*TIMING_REFERENCE, key.n) or min(map(len, logs)) < 2:
            continue
        within = math.sqrt(statistics.mean(statistics.variance(run) for run in logs))
        fewest = max(2, math.floor(trials_for_spread(within, threshold)) + 1)  # the reach strictly under the limit
        found[key.name] = fewest if fewest <= most else None
    counts = sorted(count if count is not None else math.inf for count in found.values())
    over = {"median": statistics.median(counts), "nine in ten": counts[math.ceil(0.9 * len(counts)) - 1]} if counts else {}
    return {"over benchmarks": over, **found}


def trials_needed(runs, threshold: float, slowdown: float = 1.25, caught: float = 0.95, false_flags: float = 0.01,
                  most: int = 1000) -> dict:
    """Per benchmark, the noise of its log ratio to the reference at two levels over identical quiet runs (between
    trials of a run, and between runs beyond what their trials explain: one-way variance components), and the
    fewest trials a run would need for the verdict (SLOWER when its CHANGE_CONFIDENCE interval lies above
    1 + threshold) to call `slowdown` in `caught` of comparisons of two runs, while calling identical runs SLOWER in
    at most `false_flags`; None where no number of trials would, the runs' own variation being too large. A normal
    model: the interval narrows with trials, the variation between runs does not."""
    quiet = [rows for entry, rows in runs if entry["kind"] == "quiet" and not entry["slowdown"]]
    limit, shift, z = math.log1p(threshold), math.log(slowdown), norm.ppf((1 + CHANGE_CONFIDENCE) / 2)

    def holds(between: float, within: float, trials: int) -> tuple[float, float]:
        half = z * math.sqrt(2 * within ** 2 / trials)  # the verdict's interval sees the trials only
        spread = math.sqrt(2 * between ** 2 + 2 * within ** 2 / trials)  # the change's estimate moves with both
        return norm.cdf((shift - limit - half) / spread), norm.sf((limit + half) / spread)

    found = {}
    for key in sorted(set.intersection(*(set(rows) for rows in quiet))) if len(quiet) > 2 else []:
        logs = [[math.log(ratio) for ratio in rows[key].trial_ratios] for rows in quiet]
        if key == Key(*TIMING_REFERENCE, key.n) or min(map(len, logs)) < 2:
            continue
        within = math.sqrt(statistics.mean(statistics.variance(run) for run in logs))
        trials = round(statistics.mean(map(len, logs)))
        between = math.sqrt(max(0.0, statistics.variance(map(statistics.mean, logs)) - within ** 2 / trials))
        enough = (count for count in range(2, most + 1)
                  for catch, false in [holds(between, within, count)] if catch >= caught and false <= false_flags)
        found[key.name] = {"sd within a run": round(within, 3), "sd between runs": round(between, 3),
                           f"caught at {trials} trials, model": round(holds(between, within, trials)[0], 2),
                           "trials needed": next(enough, None)}
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.research.compare_study", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("record", "analyze"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--neighbour", action="store_true", help="beside the noise study's noisy neighbour")
    parser.add_argument("--slowed", type=float, help="slow a third of the solvers by this factor (FSSGD_SLOWDOWN)")
    parser.add_argument("--changed", metavar="SPEC", help="label the runs as a real code change in this tree, "
                                                          "SOLVER=FACTOR,... as meant (nothing is slowed here)")
    parser.add_argument("--seed-programs", type=int, nargs="?", const=STEPS, default=0, metavar="STEPS",
                        help=f"time the seed's own programs after each run (default: {STEPS:,} steps, as the seed ran)")
    parser.add_argument("--threshold", type=threshold_argument, default=DEFAULT_THRESHOLD, metavar="PCT")
    options, extra = parser.parse_known_args(argv)
    if options.action == "record":
        record(options.out, options.runs, options.neighbour, options.slowed, options.seed_programs, extra,
               options.changed)
        return 0
    try:
        runs = loaded(options.out)
    except StudyError as error:
        print(f"compare_study: {error}", file=sys.stderr)
        return 2
    found = {"threshold": options.threshold, **tallies(runs, options.threshold), **agreement(runs),
             "trials taken": trials_taken(runs),
             "trials a run needs to be precise enough (model)": trials_to_be_precise(runs, options.threshold),
             "trials a run needs to call 1.25x": trials_needed(runs, options.threshold)}
    (options.out / "summary.json").write_text(json.dumps(found, indent=1))
    print(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
