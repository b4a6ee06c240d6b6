"""The answer across TensorFlow releases: each part of a step per release, timed side by side with the gate's passes.

    tox -e tf212-cpu,tf213-cpu,...,tf221-cpu --notest              # an environment per release (tox.ini)
    python -m perf.research.releases .tox/tf2*-cpu/bin/python --out reports/tf-releases
    python -m perf.research.releases .venv/bin/python:TF_ENABLE_ONEDNN_OPTS=0 .venv/bin/python:TF_ENABLE_ONEDNN_OPTS=1 \\
        --out reports/onednn                                        # one release, oneDNN off and on

A version is an interpreter that runs this working tree, with environment variables for its workers after a
colon (perf/gate/versions.py). Every pass starts fresh workers for all the versions and times each benchmark's
rounds in turn across them all (perf/gate/interleave.py), so that every release lives through the same states
of the machine. Per benchmark and version: µs per step, the ratio to the first version (the mean over passes of
the paired log ratio), and the ratio to numpy_loop in the same version; per version, the parts of a
tf1_feed_dict step (perf/report/analysis.py STEP_PARTS), each the difference of two benchmarks' µs per step in
the same pass. Every interval is Student's t over the passes, at 95% for each cell on its own.
"""

import argparse
import json
import math
import random
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from perf import gate
from perf.judge.statistics import Interval, overlapping, t_interval
from perf.measure import Key, environment
from perf.measure.environment import onednn_setting
from perf.measure.profiles import PROFILES
from perf.measure.worker import ROOT, Version, WorkerStopped
from perf.research import side_by_side
from perf.report.analysis import (OTHER_WAY_ROUND, REFERENCE_SOLVER, REMAINDER, STEP_PARTS, WHOLE_STEP,
                                  remainder_terms, signed_terms)
from perf.report.plots import canvas, with_intervals
from perf.report.tables import markdown, number, with_interval

PART_SOLVERS = sorted({name for _, *names in STEP_PARTS + OTHER_WAY_ROUND for name in names if name})
OTHER_WAYS = ("tf1_callable", "tf2_eager", "tf2_function", "tf2_function_xla")
SOLVERS = (WHOLE_STEP, *[name for name in PART_SOLVERS if name != WHOLE_STEP], *OTHER_WAYS, REFERENCE_SOLVER)
RELEASE_CONFIDENCE = 0.95  # the level of each cell's Student t interval over the passes, two-sided
RELEASE_PASSES = 8  # fixed, every release alike (the committed studies name the passes each ran with)
DEFAULT_OUT = Path("docs/results/tf-releases")
# Run by each interpreter in this tree: what a saved run records of its versions, read without importing TensorFlow.
VERSIONS_SCRIPT = "import json; from perf.measure.environment import versions; print(json.dumps(versions()))"


def packages_of(version: Version) -> dict:
    """{"tensorflow": ..., "numpy": ...} as installed for the version's interpreter."""
    result = subprocess.run([version.python, "-c", VERSIONS_SCRIPT], cwd=ROOT, capture_output=True, text=True)
    if result.returncode:
        raise gate.GateError(f"{version.python} cannot say what it has installed: {result.stderr.strip()[-300:]}")
    return json.loads(result.stdout)


def labelled(versions: list[Version]) -> list[tuple[Version, dict]]:
    """Each version relabelled by its TensorFlow release and settings ('TF 2.12.1', 'TF 2.21.0 TF_ENABLE_…=0'),
    with its packages; the same label twice is numbered."""
    found, seen = [], {}
    for version in versions:
        packages = packages_of(version)
        label = " ".join([f"TF {packages['tensorflow'] or 'none'}"] + [f"{name}={value}" for name, value in version.env])
        seen[label] = seen.get(label, 0) + 1
        label += f" #{seen[label]}" if seen[label] > 1 else ""
        found.append((replace(version, label=label), packages))
    return found


def per_pass_us(outcome, label: str) -> dict[int, float]:
    """pass -> the median round's µs per step of the version in that pass."""
    work = outcome.steps * outcome.calls
    return {pass_index: seconds * 1e6 / work for pass_index, seconds in outcome.round_s.get(label, [])}


def analysed(outcomes, labels: list[str]) -> dict:
    """{n: {label: {"benchmarks": {solver: cells}, "parts": {part: Interval}}}} from the passes' outcomes."""
    by_key = {outcome.key: outcome for outcome in outcomes if outcome.unjudged is None}
    found = {}
    for n in sorted({key.n for key in by_key}):
        for label in labels:
            us = {key.solver: per_pass_us(outcome, label) for key, outcome in by_key.items() if key.n == n}
            reference = us.get(REFERENCE_SOLVER, {})
            benchmarks = {}
            for key, outcome in by_key.items():
                if key.n != n:
                    continue
                mine = us[key.solver]
                base = [value for *_, value in outcome.log_ratios.get(label, [])]
                benchmarks[key.solver] = {
                    "us": t_interval(list(mine.values()), RELEASE_CONFIDENCE),
                    "to_first": (Interval(1.0, 1.0, 1.0) if label == labels[0]
                                 else t_interval(base, RELEASE_CONFIDENCE, math.exp)),
                    "to_reference": t_interval([math.log(value / reference[p]) for p, value in mine.items()
                                                if p in reference], RELEASE_CONFIDENCE, math.exp),
                }
            found.setdefault(n, {})[label] = {"benchmarks": benchmarks, "parts": parts_of(us)}
    return found


def parts_of(us: dict[str, dict[int, float]]) -> dict[str, Interval]:
    """Each part of a tf1_feed_dict step, and the remainder, as perf/report/analysis.py takes them: the per-pass sum of
    its signed terms, over the passes."""
    def per_pass(terms):
        if any(solver not in us for solver, _ in terms):
            return None
        passes = set.intersection(*(set(us[solver]) for solver, _ in terms))
        return [sum(sign * us[solver][p] for solver, sign in terms) for p in sorted(passes)]

    parts = {}
    for part, terms in [(part, signed_terms(minuend, subtrahend))
                        for part, minuend, subtrahend in STEP_PARTS + OTHER_WAY_ROUND] + [(REMAINDER, remainder_terms())]:
        if (values := per_pass(terms)) is not None:
            parts[part] = t_interval(values, RELEASE_CONFIDENCE)
    return parts


def ratio_cell(cells: dict) -> str:
    to_first = cells["to_first"]
    if to_first is None:
        return f"{number(cells['us'].value)} µs"
    exact = to_first.low == to_first.high
    return f"{number(cells['us'].value)} µs, ×{to_first.value:.2f}" + ("" if exact else f" ({to_first.low:.2f}–{to_first.high:.2f})")


def rendered(found: dict, labels: list[str], header: list[str]) -> str:
    lines = header + [
        f"Each cell: the mean over passes with its {RELEASE_CONFIDENCE:.0%} Student t interval over the passes (fresh "
        f"processes each), for that cell alone. ×: the ratio to {labels[0]}, from the rounds paired in turn with it.", ""]
    for n, by_label in found.items():
        first = by_label[labels[0]]
        names = [part for part in first["parts"]]
        lines += [f"## The parts of a `{WHOLE_STEP}` step at n = {n:,}: µs per step", ""]
        rows = [[label, with_interval(by_label[label]["benchmarks"][WHOLE_STEP]["us"])
                 if WHOLE_STEP in by_label[label]["benchmarks"] else "—"]
                + [with_interval(by_label[label]["parts"].get(name)) for name in names] for label in labels]
        lines += markdown(["version", f"whole (`{WHOLE_STEP}`)"] + names, rows)
        lines += [f"## Each benchmark at n = {n:,}: µs per step and × {labels[0]}", ""]
        solvers = [name for name in SOLVERS if name in first["benchmarks"]]
        rows = [[label] + [ratio_cell(by_label[label]["benchmarks"][name]) if name in by_label[label]["benchmarks"]
                           else "—" for name in solvers] for label in labels]
        lines += markdown(["version"] + [f"`{name}`" for name in solvers], rows)
        lines += [f"## Each benchmark at n = {n:,}: × `{REFERENCE_SOLVER}` in the same release", ""]
        rows = [[label] + [with_interval(by_label[label]["benchmarks"][name]["to_reference"])
                           if name in by_label[label]["benchmarks"] else "—" for name in solvers] for label in labels]
        lines += markdown(["version"] + [f"`{name}`" for name in solvers], rows)
    return "\n".join(lines)


def release_plots(found: dict, labels: list[str], out: Path) -> list[Path]:
    """Per size, the parts of a step by release and each benchmark × the first release, with their intervals; the PNG
    paths."""
    written = []
    for n, by_label in found.items():
        figure = canvas((13, 5.5))
        panels = ((f"the parts of a {WHOLE_STEP} step, µs per step", "parts", lambda cell: cell),
                  (f"each benchmark × {labels[0]} (rounds paired in turn)", "benchmarks", lambda cell: cell["to_first"]))
        for index, (title, kind, interval_of) in enumerate(panels):
            axes = figure.add_subplot(1, 2, index + 1)
            for name in by_label[labels[0]][kind]:
                xs, intervals = zip(*[(x, interval_of(cell)) for x, label in enumerate(labels)
                                      if (cell := by_label[label][kind].get(name)) and interval_of(cell)])
                with_intervals(axes, xs, intervals, marker="o", capsize=2, linewidth=0.8, label=name)
            axes.set_xticks(range(len(labels)), [label.removeprefix("TF ") for label in labels], rotation=45,
                            fontsize="small")
            axes.set_title(f"{title}, n = {n:,}", fontsize="medium")
            axes.axhline(0.0 if kind == "parts" else 1.0, color="grey", linewidth=0.5)
            if axes.get_legend_handles_labels()[0]:
                axes.legend(fontsize="x-small", ncols=2)
        path = out / f"by-release-n{n}.png"
        figure.savefig(path, dpi=110)
        written.append(path)
    return written


def plotted(found: dict, labels: list[str], out: Path) -> list[Path]:
    """The parts by release and each benchmark by release, a PNG per size; none without matplotlib."""
    try:
        return release_plots(found, labels, out)
    except ModuleNotFoundError:  # matplotlib: the plot extra
        return []


def read_back(folder: Path) -> tuple[dict, list[str]]:
    """A study's analysis and labels, from the passes.json it wrote."""
    saved = json.loads((folder / "passes.json").read_text())
    labels = [version["label"] for version in saved["versions"]]
    return analysed(outcomes_of(saved), labels), labels


def save_passes(out: Path, outcomes, began: float, **header) -> None:
    """out/passes.json: the study's header (its command, seed, passes, versions...), the date, the CPU, the wall time
    since began, and every outcome (saved_form)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "passes.json").write_text(json.dumps({
        **header, "date": f"{datetime.now(timezone.utc):%Y-%m-%d}", "cpu": environment.cpu_model(),
        "wall_s": time.perf_counter() - began, "benchmarks": saved_form(outcomes)}, indent=1))


def saved_form(outcomes) -> dict:
    """passes.json's "benchmarks": each outcome's steps, calls, why it was not judged, round times and log ratios."""
    return {outcome.key.name: {"steps": outcome.steps, "calls": outcome.calls,
                               "problem": outcome.unjudged and outcome.unjudged.why,
                               "round_s": outcome.round_s, "log_ratios": outcome.log_ratios} for outcome in outcomes}


def outcomes_of(saved: dict) -> list:
    """The outcomes a study's passes.json holds (saved_form read back)."""
    outcomes = []
    for name, measured in saved["benchmarks"].items():
        solver, device, n = name.rsplit("-", 2)
        why = measured["problem"]  # every reason starts with its verdict: "skipped: ...", "error on ...", "new"
        outcomes.append(gate.Outcome(
            Key(solver, device, int(n.removeprefix("n"))), measured["steps"], measured["calls"],
            log_ratios={label: [tuple(value) for value in values] for label, values in measured["log_ratios"].items()},
            round_s={label: [tuple(value) for value in values] for label, values in measured["round_s"].items()},
            unjudged=gate.Unjudged(why.split(maxsplit=1)[0].rstrip(":"), why) if why else None))
    return outcomes


def agreement(first: Path, second: Path) -> str:
    """Whether two runs of the study agree: each part of the step per release in µs, then each benchmark's ratio
    to the first release; both runs' intervals and whether they overlap."""
    (found, labels), (again, _) = read_back(first), read_back(second)
    lines = ["# Do two runs of the release study agree?", "", f"`python -m perf.research.releases --compare {first} "
             f"{second}`: each figure in each run, with its interval, and whether the two overlap.", ""]
    figures = (("parts", "part", "µs per step", lambda cell: cell),
               ("benchmarks", "benchmark", f"× {labels[0]}", lambda cell: cell["to_first"]))
    for kind, noun, unit, interval_of in figures:
        for n, by_label in found.items():
            rows, agreeing = [], 0
            for label in labels[1:] if kind == "benchmarks" else labels:
                for name in by_label[labels[0]][kind]:
                    cells = (by_label[label][kind].get(name), again.get(n, {}).get(label, {}).get(kind, {}).get(name))
                    one, other = (interval_of(cell) if cell else None for cell in cells)
                    overlap = bool(one and other and overlapping(one, other))
                    agreeing += overlap
                    rows.append([label, name, with_interval(one), with_interval(other), "yes" if overlap else "**no**"])
            lines += [f"## {unit}, each {noun}, n = {n:,}: {agreeing} of {len(rows)} overlap", ""]
            lines += markdown(["version", noun, "first run", "second run", "overlap"], rows)
    return "\n".join(lines)


def written(folder: Path) -> list[Path]:
    """README.md and the plots of a study, from the passes.json it saved in folder."""
    saved = json.loads((folder / "passes.json").read_text())
    found, labels = read_back(folder)
    header = ["# TensorFlow releases and settings, side by side", "", f"`{saved['command']}`", "",
              f"{saved['date']}, CPU {saved['cpu']}, {saved['passes']} passes, TensorFlow threads "
              f"{saved['threads'] or 'TF default'}, every worker on one CPU; wall time {saved['wall_s'] / 60:.0f} min. "
              "NumPy per release: " + ", ".join(f"{version['label']} {version.get('numpy', '?')}"
                                                for version in saved["versions"])
              + f". oneDNN: {saved['onednn']} unless the release says otherwise.", ""]
    (folder / "README.md").write_text(rendered(found, labels, header) + "\n")
    return [folder / "README.md", folder / "passes.json", *plotted(found, labels, folder)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.research.releases", description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="interpreters, each PYTHON[:NAME=VALUE,...]; the first is the one "
                                                    "the ratios are to")
    parser.add_argument("--passes", type=int, default=RELEASE_PASSES, help="passes (default: %(default)s)")
    parser.add_argument("--solvers", default=",".join(SOLVERS), help="comma-separated (default: %(default)s)")
    parser.add_argument("--profile", default="quick", choices=sorted(PROFILES), help="its sizes and steps")
    parser.add_argument("--threads", type=int, default=gate.GATE_THREADS,
                        help="TensorFlow threads (default: the gate's)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, help="default: a new one, recorded")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("FIRST", "SECOND"),
                        help="say whether two runs' --out folders agree, part by part, and time nothing")
    parser.add_argument("--analyze-only", action="store_true", help="write --out's tables and plots again from its "
                                                                         "passes.json, and time nothing")
    options = parser.parse_args(argv)
    if options.compare:
        print(agreement(*options.compare))
        return 0
    if options.analyze_only:
        print(f"releases: {', '.join(str(path) for path in written(options.out))}")
        return 0
    if not options.versions:
        parser.error("name the versions to time (or --compare two runs)")
    if options.passes < 2:
        parser.error("--passes must be at least 2: the intervals are over passes")
    seed = random.SystemRandom().randrange(2**32) if options.seed is None else options.seed
    profile, began = PROFILES[options.profile], time.perf_counter()
    try:
        with ExitStack() as stack:
            versions = [stack.enter_context(gate.checked_out(spec, f"version {index}"))
                        for index, spec in enumerate(options.versions)]
            versions, packages = zip(*labelled(versions))
            labels = [version.label for version in versions]
            keys = [Key(name, "cpu", n) for name in options.solvers.split(",") for n in profile.sizes]
            print(f"releases: {', '.join(labels)}; {len(keys)} benchmarks, {options.passes} passes, seed {seed}",
                  flush=True)
            outcomes = side_by_side.measured(list(versions), options.threads, lambda workers: keys, profile, seed,
                                             gate.fixed(gate.Stopping(), options.passes),
                                             lambda text: print(f"releases: {text}", flush=True),
                                             preload=options.solvers.split(",")).outcomes
    except (gate.GateError, WorkerStopped) as error:
        print(f"releases: cannot run: {error}", file=sys.stderr)
        return 2
    for outcome in outcomes:
        if outcome.unjudged:
            print(f"releases: {outcome.key.name}: {outcome.unjudged.why}", file=sys.stderr)
    save_passes(options.out, outcomes, began,
                command=f"python -m perf.research.releases {' '.join(options.versions)} --passes {options.passes} "
                        f"--seed {seed}",
                seed=seed, passes=options.passes, threads=options.threads, onednn=onednn_setting(),
                versions=[{"label": version.label, "python": version.python, "env": dict(version.env), **found_packages}
                          for version, found_packages in zip(versions, packages)])
    print(f"releases: {', '.join(str(path) for path in written(options.out))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
