"""Regression gate: each benchmark's time as a ratio to a reference timed beside it, against a committed baseline.

Why ratios. Absolute times on shared CI machines drift by ±25% or more between runs; a
ratio to a reference timed on the same machine in the same moments cancels that
common-mode drift, so a threshold of ~20% can stand.

The reference is `numpy_loop` on the CPU at the same n, for every benchmark of the run,
GPU ones included:
- it is the seed question's own yardstick ("~4 s in NumPy"), needs no TensorFlow, and
  does the same arithmetic per step as every solver, so it moves with the host's speed
  and load;
- the GPU figures at these sizes are dominated by host-side work (a `Session.run` per
  step, kernel launches, syncs), which is what the CPU reference tracks;
- a TensorFlow reference such as `tf1_while_loop-gpu` would itself go ungated, and a
  change that slows every TensorFlow solver alike (placement, session config in
  solvers/tensorflow_support.py) would cancel out of the ratios and never be seen.
GPU-side contention is not cancelled by it; GPU baselines are keyed by GPU model, and
an entry's threshold can be widened in the baseline file if one proves noisy.
The reference's own benchmark is not gated (its ratio is 1); figure benchmarks (the
iteration sweep, time to accuracy) are not gated at all.

Statistics, from the paired trials of perf/trials.py, as perf/measure.py writes them into
extra_info['ratio_to_reference']: each benchmark is timed in several independent trials,
every round beside a round of the reference on the same problem; per trial the ratio is
median(its rounds) / median(the reference's rounds), and the benchmark's ratio is the
median of those with a 90% distribution-free interval from the variation between trials
(perf/estimators.py). A benchmark regresses only when the interval's lower end is above
the baseline ratio × (1 + threshold) (and above the slowest ratio the baseline runs
themselves showed): slower by more than the threshold *and* significantly so, 5%
one-sided. An improvement is the mirror image, below ratio / (1 + threshold). A point
estimate past a limit whose interval still reaches back over it is reported as
inconclusive and does not fail. CI now gates with the A/B gate instead (perf/ab_gate.py:
two versions interleaved on one machine, no committed baseline); this baseline mode is
for a machine that a committed baseline matches.

Baselines live in perf/baselines/, one human-readable JSON file per key: profile, CPU
model, GPU model (when the run has GPU benchmarks), TensorFlow distribution and version,
NumPy version, TensorFlow threads; the things that change ratios, and not host name or
clock. Per entry: ratio (median over the runs it was made from), its spread (low, high:
the between-trial intervals of one or two runs, the range of the ratios of three or more),
trials, the median seconds for reading only, and an optional `threshold` overriding the
file's `default_threshold`; hand edits to thresholds survive a refresh.

Outcomes and exit statuses. Regressions and missing benchmarks (in the baseline, absent
from the run: a broken TensorFlow install skips every TF benchmark, which must not pass
as "no regression") fail: exit 1 for both pytest and the CLI. New benchmarks,
improvements and inconclusive ones are reported and pass. A run that cannot be gated (no
baseline for its key, an unreadable or corrupted baseline or run, no paired ratios) fails
with pytest's usage-error status 4, or 2 from the CLI, and says what to do.

    pytest perf --gate                         # gate against perf/baselines/<key>.json
    pytest perf --gate=FILE_OR_DIR             # another baseline file or folder
    pytest perf --gate-write-baseline          # write / refresh the baseline from this run
    python -m perf.gate RUN.json [--baseline FILE_OR_DIR]
    python -m perf.gate RUN.json [RUN2.json ...] --write   # baseline from one or more saved runs
"""

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from perf.estimators import CONFIDENCE  # the interval perf/measure.py wrote into extra_info
from perf.runs import RunError, read_run

REFERENCE_SOLVER, REFERENCE_DEVICE = "numpy_loop", "cpu"
DEFAULT_THRESHOLD = 0.20
DEFAULT_BASELINES = Path(__file__).parent / "baselines"
KEY_FIELDS = ("profile", "cpu_model", "gpu_model", "tensorflow_distribution", "tensorflow", "numpy", "threads")
NO_PAIRED_RATIO = ("no paired ratio to numpy_loop (figure benchmarks are not gated; "
                   "a run from an older suite has none)")

FAILED, CANNOT_GATE_CLI = 1, 2
BENCHMARK_ID = re.compile(r"\[(?P<solver>[A-Za-z0-9_]+)-(?P<device>cpu|gpu)-n(?P<n>\d+)\]")


class GateError(Exception):
    """The run cannot be gated; the message says why and what to do."""


# ---------------------------------------------------------------------------- reading


def load_baseline_file(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except OSError as error:
        raise GateError(f"cannot read baseline {path}: {error.strerror or error}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise GateError(f"baseline {path} is not valid JSON ({error}); fix it, or delete it and write it again") from None
    if not isinstance(data, dict):
        raise GateError(f"baseline {path} is not a JSON object")
    return data


def load_run(path: Path) -> dict:
    try:
        return read_run(path)
    except RunError as error:
        raise GateError(f"run {path}: {error}") from None


def identify(bench: dict):
    """(test function, solver, device, n) from extra_info, or from the id when the test failed before filling it."""
    info = bench.get("extra_info") or {}
    function = bench.get("name", "").split("[")[0]
    if {"solver", "device", "n"} <= info.keys():
        return function, info["solver"], info["device"], int(info["n"])
    match = BENCHMARK_ID.search(bench.get("name", ""))
    return (function, match["solver"], match["device"], int(match["n"])) if match else None


def run_key(run: dict) -> dict:
    """What makes this run's ratios comparable with a baseline's, from machine_info['fssgd'] and extra_info."""
    fssgd = (run.get("machine_info") or {}).get("fssgd")
    if not isinstance(fssgd, dict):
        raise GateError("the run has no machine_info['fssgd'] (written by this repository's conftest.py); "
                        "run the benchmarks from the repository root")
    tensorflow = fssgd.get("tensorflow") or {}
    gpu_names = set()
    for bench in run.get("benchmarks", []):
        if (ids := identify(bench)) and ids[2] == "gpu":
            name = (bench.get("extra_info") or {}).get("device_name")
            gpu_names.add(name or next(iter(fssgd.get("nvidia_gpus") or []), "unknown GPU").split(",")[0])
    return {
        "profile": fssgd.get("profile"),
        "cpu_model": fssgd.get("cpu_model"),
        "gpu_model": ", ".join(sorted(gpu_names)) or None,
        "tensorflow_distribution": tensorflow.get("distribution"),
        "tensorflow": tensorflow.get("version"),
        "numpy": fssgd.get("numpy"),
        "threads": fssgd.get("threads"),
    }


def key_file_name(key: dict) -> str:
    tensorflow = f"{key['tensorflow_distribution']}-{key['tensorflow']}" if key["tensorflow"] else "numpy-only"
    parts = [key["profile"], tensorflow, f"numpy-{key['numpy']}", f"threads{key['threads']}",
             key["cpu_model"], key["gpu_model"] or "no-gpu"]
    return re.sub(r"[^A-Za-z0-9.-]+", "_", "_".join(str(part) for part in parts)).strip("_") + ".json"


def key_differences(baseline_key: dict, key: dict) -> list[str]:
    return [f"{field}: baseline {baseline_key.get(field)!r}, run {key.get(field)!r}"
            for field in KEY_FIELDS if baseline_key.get(field) != key.get(field)]


def describe_key(key: dict) -> str:
    return ", ".join(f"{field}={key.get(field)}" for field in KEY_FIELDS)


# ---------------------------------------------------------------------------- measuring


def paired_ratio(info: dict) -> dict | None:
    paired = info.get("ratio_to_reference")
    if isinstance(paired, dict) and all(isinstance(paired.get(field), (int, float)) for field in ("ratio", "low", "high")):
        return {field: float(paired[field]) for field in ("ratio", "low", "high")}
    return None


def measure(run: dict) -> dict:
    """Per benchmark name: its paired ratio and interval, or why it has none (`problem`); figures are left out."""
    benches = [bench for bench in run.get("benchmarks", []) if "figure" not in (bench.get("extra_info") or {})]
    measured = {}
    for bench in benches:
        info = bench.get("extra_info") or {}
        entry = {"median_s": (bench.get("stats") or {}).get("median"), "trials": len(info.get("trial_medians_s") or [])}
        measured[bench["name"]] = entry
        if not (ident := identify(bench)):
            entry["problem"] = "cannot tell solver, device and n (from extra_info or an id like solver-cpu-n1000)"
            continue
        function, solver, device, n = ident
        entry["reference"] = f"{function}[{REFERENCE_SOLVER}-{REFERENCE_DEVICE}-n{n}]"
        if (solver, device) == (REFERENCE_SOLVER, REFERENCE_DEVICE):
            entry.update(is_reference=True, ratio=1.0, low=1.0, high=1.0)
        elif paired := paired_ratio(info):
            entry.update(paired)
        else:
            entry["problem"] = NO_PAIRED_RATIO
    unpaired = [entry for entry in measured.values() if entry.get("problem") == NO_PAIRED_RATIO]
    if unpaired and not any("ratio" in entry and not entry.get("is_reference") for entry in measured.values()):
        # A whole run without them is from an older suite; gated, it would pass with every benchmark inconclusive.
        raise GateError("no benchmark of the run has a paired ratio to numpy_loop (extra_info['ratio_to_reference']); "
                        "it is from an older suite: run the benchmarks again with this one")
    return measured


# ---------------------------------------------------------------------------- baselines


def check_baseline(baseline: dict, path) -> dict:
    problem = None
    if not isinstance(baseline.get("key"), dict):
        problem = "no 'key' object"
    elif not isinstance(baseline.get("benchmarks"), dict):
        problem = "no 'benchmarks' object"
    elif not isinstance(baseline.get("default_threshold", DEFAULT_THRESHOLD), (int, float)):
        problem = "default_threshold is not a number"
    else:
        for name, entry in baseline["benchmarks"].items():
            fields = ("ratio", "low", "high", *(("threshold",) if "threshold" in entry else ())) if isinstance(entry, dict) else ()
            if not fields or not all(isinstance(entry[field], (int, float)) for field in fields if field in entry) \
                    or not {"ratio", "low", "high"} <= entry.keys():
                problem = f"entry {name!r} needs numbers for ratio, low, high (and threshold, if given)"
                break
    if problem:
        raise GateError(f"baseline {path} is not a gate baseline ({problem}); fix it, or delete it and write it again")
    return baseline


def threshold_of(baseline: dict, name: str) -> float:
    return baseline["benchmarks"][name].get("threshold", baseline.get("default_threshold", DEFAULT_THRESHOLD))


def how_to_write(path) -> str:
    return (f"create it on this machine with `pytest perf --gate-write-baseline` "
            f"(or `python -m perf.gate RUN.json --write --baseline {path}`), review it, and commit it")


def find_baseline(location: Path, key: dict) -> tuple[Path, dict]:
    """The baseline for this key: LOCATION itself when it is a file, else LOCATION/<key>.json."""
    location = Path(location)
    path = location if location.suffix == ".json" else location / key_file_name(key)
    if path.exists():
        baseline = check_baseline(load_baseline_file(path), path)
        if differences := key_differences(baseline["key"], key):
            raise GateError(f"baseline {path} was made for another environment; not comparing. It differs in:\n  "
                            + "\n  ".join(differences) + f"\n{how_to_write(path)}")
        return path, baseline
    message = f"no baseline for this run's environment: {path} does not exist.\n  run key: {describe_key(key)}"
    others = []
    for other in sorted(location.glob("*.json") if location.is_dir() else []):
        try:
            others.append((key_differences(json.loads(other.read_text())["key"], key), other))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    if others:
        differences, closest = min(others, key=lambda pair: len(pair[0]))
        message += f"\n  closest baseline {closest} differs in:\n    " + "\n    ".join(differences)
    raise GateError(f"{message}\n{how_to_write(path)}")


def significant(value: float) -> float:
    return float(f"{value:.4g}")


def make_baseline(runs: list[dict], previous: dict | None = None) -> dict:
    """A baseline from one or more runs of the same key; thresholds already in `previous` are kept."""
    keys = [run_key(run) for run in runs]
    for index, key in enumerate(keys[1:], start=2):
        if differences := key_differences(keys[0], key):
            raise GateError(f"run {index} has another key than run 1; a baseline pools runs of one environment:\n  "
                            + "\n  ".join(differences))
    per_run = [measure(run) for run in runs]
    previous_entries = (previous or {}).get("benchmarks", {})
    entries = {}
    for name in sorted({name for measured in per_run for name in measured}):
        found = [measured[name] for measured in per_run if "ratio" in measured.get(name, {})]
        if not found:
            continue
        # The spread: one or two runs only have their between-trial intervals; three or more show
        # the run-to-run range itself, which is what a gated run varies by.
        spread = [(one["low"], one["high"]) for one in found] if len(found) < 3 else [(one["ratio"],) * 2 for one in found]
        entry = {
            "ratio": significant(float(np.median([one["ratio"] for one in found]))),
            "low": significant(min(low for low, _ in spread)),
            "high": significant(max(high for _, high in spread)),
            "runs": len(found),
            "trials": sum(one["trials"] for one in found),
            "reference": found[0]["reference"],
            "median_s": significant(float(np.median([one["median_s"] for one in found]))),
        }
        if found[0].get("is_reference"):
            entry["is_reference"] = True
        elif "threshold" in previous_entries.get(name, {}):
            entry["threshold"] = previous_entries[name]["threshold"]
        entries[name] = entry
    if not entries:
        raise GateError("no benchmark in the run(s) has a ratio to its reference; nothing to write")
    return {
        "about": "fssgd-bench gate baseline: per benchmark, the median over its trials of median round time / median "
                 f"round time of {REFERENCE_SOLVER}-{REFERENCE_DEVICE} rounds timed beside them at the same n (ratio: "
                 f"median over runs) and its spread (low, high): the {CONFIDENCE:.0%} between-trial intervals of 1-2 "
                 "runs, the range of 3 or more runs' ratios. median_s is for reading only, never gated. "
                 "Edit default_threshold or add a per-entry threshold by hand; see perf/gate.py.",
        "key": keys[0],
        "default_threshold": (previous or {}).get("default_threshold", DEFAULT_THRESHOLD),
        "made_from": [{"datetime": run.get("datetime"), "commit": (run.get("commit_info") or {}).get("id")}
                      for run in runs],
        "benchmarks": entries,
    }


def dump_baseline(baseline: dict) -> str:
    return json.dumps(baseline, indent=2, sort_keys=True) + "\n"


# ---------------------------------------------------------------------------- comparing


def compare(baseline: dict, measured: dict) -> dict:
    """Every benchmark of baseline and run, sorted into verdicts; rows carry what the report shows."""
    verdicts = {verdict: [] for verdict in ("regression", "missing", "inconclusive", "improvement", "new", "pass")}
    expected = baseline["benchmarks"]
    for name in sorted(set(expected) - set(measured)):
        verdicts["missing"].append({"name": name, **expected[name]})
    for name, entry in sorted(measured.items()):
        if name not in expected:
            verdicts["new"].append({"name": name, **entry})
            continue
        if entry.get("is_reference") or expected[name].get("is_reference"):
            continue
        row = {"name": name, **entry, "baseline": expected[name]["ratio"], "threshold": threshold_of(baseline, name)}
        if "problem" in entry:
            verdicts["inconclusive"].append({**row, "why": entry["problem"]})
            continue
        slower = max(row["baseline"] * (1 + row["threshold"]), expected[name]["high"])
        faster = min(row["baseline"] / (1 + row["threshold"]), expected[name]["low"])
        if entry["low"] > slower:
            verdicts["regression"].append({**row, "limit": slower})
        elif entry["high"] < faster:
            verdicts["improvement"].append({**row, "limit": faster})
        elif entry["ratio"] > slower:
            verdicts["inconclusive"].append({**row, "limit": slower, "why": "slower than the limit, not significantly"})
        elif entry["ratio"] < faster:
            verdicts["inconclusive"].append({**row, "limit": faster, "why": "faster than the limit, not significantly"})
        else:
            verdicts["pass"].append({**row, "limit": slower})
    return verdicts


def failed(verdicts: dict) -> bool:
    return bool(verdicts["regression"] or verdicts["missing"])


def format_report(verdicts: dict, baseline_path) -> str:
    lines = [f"gate: same-run ratios (time / {REFERENCE_SOLVER}-{REFERENCE_DEVICE} at the same n) "
             f"against {baseline_path}"]
    rows = [(verdict, row) for verdict in ("regression", "inconclusive", "improvement", "pass") for row in verdicts[verdict]]
    if rows:
        width = max(len(row["name"]) for _, row in rows)
        lines.append(f"  {'benchmark':<{width}}  {'verdict':<12} {'ratio':>9}  {f'{CONFIDENCE:.0%} interval':<19}"
                     f" {'baseline':>9} {'threshold':>9} {'limit':>9}")
        for verdict, row in rows:
            if "ratio" in row:
                figures = (f"{row['ratio']:>9.4g}  {'[' + format(row['low'], '.4g') + ', ' + format(row['high'], '.4g') + ']':<19}"
                           f" {row['baseline']:>9.4g} {row['threshold']:>+9.0%} {row['limit']:>9.4g}")
            else:
                figures = f"{'-':>9}  {'':<19} {row['baseline']:>9.4g} {row['threshold']:>+9.0%} {'-':>9}"
            lines.append(f"  {row['name']:<{width}}  {verdict.upper():<12} {figures}"
                         + (f"  ({row['why']})" if row.get("why") else ""))
    for row in verdicts["new"]:
        lines.append(f"  NEW      {row['name']}: not in the baseline, not gated; add it with --gate-write-baseline")
    for row in verdicts["missing"]:
        lines.append(f"  MISSING  {row['name']}: in the baseline but not in this run (skipped, deselected or failed?)")
    counts = ", ".join(f"{len(verdicts[verdict])} {verdict}" for verdict in verdicts if verdicts[verdict])
    if failed(verdicts):
        lines.append(f"gate FAILED: {counts}")
    else:
        lines.append(f"gate passed: {counts or 'nothing to compare'}")
    if verdicts["improvement"]:
        lines.append("  improvements: if they are real, refresh the baseline (--gate-write-baseline) so they are kept")
    return "\n".join(lines)


def gate(run: dict, location=DEFAULT_BASELINES) -> tuple[int, str]:
    """(0 or FAILED, report); raises GateError when the run cannot be gated."""
    path, baseline = find_baseline(location, run_key(run))
    verdicts = compare(baseline, measure(run))
    return (FAILED if failed(verdicts) else 0), format_report(verdicts, path)


def write_baseline(runs: list[dict], location=DEFAULT_BASELINES) -> str:
    location = Path(location)
    key = run_key(runs[0])
    path = location if location.suffix == ".json" else location / key_file_name(key)
    previous = check_baseline(load_baseline_file(path), path) if path.exists() else None
    if previous and key_differences(previous["key"], key):
        previous = None  # another environment's thresholds do not carry over
    baseline = make_baseline(runs, previous)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_baseline(baseline))
    dropped = sorted(set((previous or {}).get("benchmarks", {})) - set(baseline["benchmarks"]))
    return (f"gate: wrote baseline {path} ({len(baseline['benchmarks'])} benchmarks from {len(runs)} run(s))"
            + (f"; dropped: {', '.join(dropped)}" if dropped else "") + "; review it and commit it")


# ---------------------------------------------------------------------------- command line


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.gate", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN.json",
                        help="a run of this suite (--benchmark-json, or saved with --benchmark-save)")
    parser.add_argument("--baseline", type=Path, default=DEFAULT_BASELINES, metavar="FILE_OR_DIR",
                        help=f"baseline file, or folder of <key>.json files (default: {DEFAULT_BASELINES})")
    parser.add_argument("--write", action="store_true",
                        help="write/refresh the baseline from the run(s) instead of gating; several runs are pooled")
    options = parser.parse_args(argv)
    try:
        runs = [load_run(path) for path in options.runs]
        if options.write:
            print(write_baseline(runs, options.baseline))
            return 0
        if len(runs) > 1:
            raise GateError("gate one run at a time; several runs only make sense with --write")
        status, report = gate(runs[0], options.baseline)
    except GateError as error:
        print(f"gate: cannot gate: {error}", file=sys.stderr)
        return CANNOT_GATE_CLI
    print(report)
    return status


# ---------------------------------------------------------------------------- pytest plugin

RUN_JSON = pytest.StashKey[dict]()
REPORT = pytest.StashKey[tuple[int, str]]()


def pytest_addoption(parser):
    group = parser.getgroup("fssgd-gate", "regression gate on same-run ratios (perf/gate.py)")
    group.addoption("--gate", nargs="?", const=str(DEFAULT_BASELINES), default=None, metavar="BASELINE",
                    help="after the benchmarks, gate their ratios against BASELINE, a file or a folder of "
                         f"<key>.json files (default: {DEFAULT_BASELINES}); write --gate=BASELINE, or put a bare "
                         "--gate after the test paths")
    group.addoption("--gate-write-baseline", action="store_true",
                    help="write/refresh the baseline (the --gate location, default perf/baselines/<key>.json) from this run")


def gate_location(config) -> Path | None:
    if getattr(config, "workerinput", None) is not None:
        return None  # an xdist worker; the controller gates
    if config.getoption("gate_write_baseline"):
        return Path(config.getoption("gate") or DEFAULT_BASELINES)
    return Path(config.getoption("gate")) if config.getoption("gate") else None


def pytest_configure(config):
    location = gate_location(config)
    if location is None:
        return
    if location.is_dir() and any(location.glob("*.py")):
        raise pytest.UsageError(f"--gate took {location} as its baseline; write --gate=BASELINE, "
                                "or put a bare --gate after the test paths")


@pytest.hookimpl(optionalhook=True)
def pytest_benchmark_update_json(config, benchmarks, output_json):
    config.stash[RUN_JSON] = output_json


def session_run(config) -> dict:
    """This session's JSON as pytest-benchmark wrote it, or made by its hooks when nothing was written."""
    if RUN_JSON in config.stash:
        return config.stash[RUN_JSON]
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        raise GateError("no benchmark was timed in this session (none selected, --benchmark-disable/--benchmark-skip, "
                        "or under xdist); run `pytest perf --gate` without -n")
    return config.hook.pytest_benchmark_generate_json(
        config=config, benchmarks=session.benchmarks, include_data=False,
        machine_info=session.get_machine_info(), commit_info={},
    )


def pytest_sessionfinish(session, exitstatus):
    # pytest-benchmark's own sessionfinish is a hook wrapper that has saved its JSON by now.
    config = session.config
    location = gate_location(config)
    if location is None or exitstatus == pytest.ExitCode.INTERRUPTED:
        return
    try:
        if config.getoption("gate_write_baseline") and session.exitstatus != pytest.ExitCode.OK:
            raise GateError(f"not writing a baseline from a session that did not pass (exit status "
                            f"{int(session.exitstatus)}); fix the failures first")
        run = session_run(config)
        if config.getoption("gate_write_baseline"):
            status, report = 0, write_baseline([run], location)
        else:
            status, report = gate(run, location)
    except GateError as error:
        doing = "write the baseline" if config.getoption("gate_write_baseline") else "gate"
        status, report = pytest.ExitCode.USAGE_ERROR, f"gate: cannot {doing}: {error}"
    config.stash[REPORT] = (status, report)
    if status and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = status


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if REPORT not in config.stash:
        return
    status, report = config.stash[REPORT]
    terminalreporter.write_sep("-", "fssgd gate", red=bool(status), green=not status)
    for line in report.splitlines():
        terminalreporter.write_line(line)


if __name__ == "__main__":
    sys.exit(main())
