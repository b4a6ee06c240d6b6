"""Turn pytest-benchmark JSON runs into a Markdown report: tables, the model t = α + β·n, crossovers, plots."""

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from perf import environment, report_figures
from perf.estimators import CONFIDENCE
from perf.report_format import number, table, weighted_line
from perf.runs import RunError, newest_run, read_run
from solvers.tensorflow_support import threads_setting

REFERENCE_SOLVER = "numpy_loop"
# What a step could cost: every step one fused, vectorized pass (the CPU's roofline), and the algebraic limit,
# which needs no pass over the data per step at all (a 2x2 affine map on five sums).
ROOFLINE_SOLVER, ALGEBRAIC_LIMIT_SOLVER = "numba_fused", "numpy_affine_limit"
DECOMPOSITION_N = 1_000  # the size the question is about
# "Slightly outside" the measured sizes: within one decade, as the sizes are spaced by decades.
EXTRAPOLATION_FACTOR = 10
NONE_IN_RANGE = "none in range"
PLOT_INSTALL_HINT = "pip install .[plot]"
# Where a tf1_feed_dict step goes: (component, minuend, subtrahend or None); rows whose solvers
# are missing from a run are left out.
STEP_COMPONENTS = (
    ("loss fetch", "tf1_feed_dict", "tf1_feed_dict_no_loss"),
    ("feed_dict copies", "tf1_feed_dict", "tf1_constant"),
    ("Session.run call overhead", "tf1_constant_no_loss", "tf1_while_loop"),
    ("arithmetic", "tf1_while_loop", None),
)


@dataclass(frozen=True)
class Run:
    path: Path
    label: str
    document: dict
    # (solver, device, n) -> per_iteration_us, setup_s, iterations, rounds, trials, ratio, device_name
    timings: dict
    notes: tuple[str, ...]
    # figure name -> its benchmarks (perf/report_figures.py), e.g. the iteration sweep
    figures: dict


class Model(NamedTuple):
    alpha_us: float  # fixed cost of one step, whatever n
    beta_ns: float  # cost of one sample in one step
    max_relative_residual: float
    sizes: tuple[int, ...]

    def per_iteration_us(self, n):
        return self.alpha_us + self.beta_ns * 1e-3 * n


# Loading -------------------------------------------------------------------------------------


def timings_of(benchmarks: list) -> tuple[dict, list[str]]:
    """Per-iteration timings keyed by (solver, device, n), and a note for each benchmark left out."""
    timings, notes = {}, []
    for benchmark in benchmarks:
        benchmark = benchmark if isinstance(benchmark, dict) else {}
        name = benchmark.get("name", "?")
        extra = benchmark.get("extra_info") or {}
        if extra.get("figure"):
            continue  # a figure of its own (iteration sweep, time to accuracy): report_figures reads it
        solver, device, n = extra.get("solver"), extra.get("device"), extra.get("n")
        if not (solver and device and isinstance(n, int)):
            notes.append(f"{name}: not an FSSGD benchmark (no solver, device, n in extra_info), skipped")
            continue
        per_iteration_us = extra.get("per_iteration_us")
        if not (isinstance(per_iteration_us, (int, float)) and per_iteration_us > 0):
            notes.append(f"{name}: no per_iteration_us (run with --benchmark-disable?), skipped")
            continue
        if (solver, device, n) in timings:
            notes.append(f"{name}: a second {solver}-{device}-n{n} in one run, skipped")
            continue
        timings[solver, device, n] = {
            "per_iteration_us": float(per_iteration_us),
            "setup_s": extra.get("setup_s"),
            "iterations": extra.get("iterations"),
            # The profile's count when a round budget made this benchmark run fewer steps (the seed profile).
            "steps_reduced_from": extra.get("steps_reduced_from"),
            "rounds": (benchmark.get("stats") or {}).get("rounds"),
            "trials": extra.get("trials"),
            # Paired in time with the reference, trial by trial (perf/trials.py); absent for the reference itself.
            "ratio": extra.get("ratio_to_reference"),
            "device_name": extra.get("device_name"),
            "tensorflow": extra.get("tensorflow"),
        }
    return timings, notes


def run_label(document: dict, measured: list[dict]) -> str:
    """TF version · devices · profile, read from what the run recorded about itself."""
    fssgd = document["machine_info"].get("fssgd") or {}
    version = (fssgd.get("tensorflow") or {}).get("version") or next(
        (entry["tensorflow"] for entry in measured if entry.get("tensorflow")), None)
    devices = []
    for device in sorted({entry["device"] for entry in measured}):
        names = {entry["device_name"] for entry in measured if entry["device"] == device and entry.get("device_name")}
        devices.append(f"{device} ({names.pop()})" if device != "cpu" and len(names) == 1 else device)
    parts = [f"TF {version}" if version else "no TF", "+".join(devices)]
    return " · ".join(parts + ([fssgd["profile"]] if fssgd.get("profile") else []))


def load_run(path: Path) -> Run:
    document = read_run(path)
    timings, notes = timings_of(document["benchmarks"])
    figures = {figure: entries for figure in (report_figures.SWEEP, report_figures.ACCURACY)
               if (entries := report_figures.figure_entries(document["benchmarks"], figure))}
    if not (timings or figures):
        reason = notes[0] if notes else "it holds no benchmarks"
        raise RunError(f"no benchmark with a per-iteration time ({reason})")
    measured = [{"device": device, **timing} for (_, device, _), timing in timings.items()]
    measured += [entry for entries in figures.values() for entry in entries]
    return Run(path, run_label(document, measured), document, timings, tuple(notes), figures)


# Model ---------------------------------------------------------------------------------------


def fit_overhead(sizes, per_iteration_us) -> Model:
    """Weighted least-squares fit of t_iter(n) = α + β·n over at least two distinct sizes."""
    if len(set(sizes)) < 2:
        raise ValueError("the overhead model needs at least two distinct sizes")
    alpha_us, beta_us, max_relative_residual = weighted_line(sizes, per_iteration_us)
    return Model(alpha_us, beta_us * 1e3, max_relative_residual, tuple(sorted(set(sizes))))


def fit_models(timings: dict) -> dict:
    """A model per (solver, device) measured at two or more sizes."""
    series = {}
    for (solver, device, n), timing in sorted(timings.items()):
        series.setdefault((solver, device), []).append((n, timing["per_iteration_us"]))
    return {key: fit_overhead(*zip(*points)) for key, points in series.items() if len(points) >= 2}


def crossover_n(model: Model, reference: Model, low: float, high: float) -> tuple[float | None, str]:
    """Where α + β·n meets the reference's line: (n*, 'in range' | 'extrapolated'), else (None, 'none in range')."""
    slope_gap_ns = model.beta_ns - reference.beta_ns
    if slope_gap_ns == 0:
        return None, NONE_IN_RANGE
    n = (reference.alpha_us - model.alpha_us) * 1e3 / slope_gap_ns
    if low <= n <= high:
        return n, "in range"
    if low / EXTRAPOLATION_FACTOR <= n <= high * EXTRAPOLATION_FACTOR:
        return n, "extrapolated"
    return None, NONE_IN_RANGE


def measured_crossover(timings: dict, solver: str, device: str, reference_device_: str) -> str:
    """Where the measured ratio to the reference first crosses 1, interpolated on log-log between two sizes.

    The straight line α + β·n fits the per-sample cost badly across cache sizes, so the model's
    n* can mislead; this one uses only the measured points either side of the crossing.
    """
    points = sorted(
        (n, timing["per_iteration_us"] / timings[(REFERENCE_SOLVER, reference_device_, n)]["per_iteration_us"])
        for (s, d, n), timing in timings.items()
        if (s, d) == (solver, device) and (REFERENCE_SOLVER, reference_device_, n) in timings
    )
    if len(points) < 2:
        return "—"
    for (n_low, ratio_low), (n_high, ratio_high) in zip(points, points[1:]):
        if (ratio_low - 1) * (ratio_high - 1) < 0:
            fraction = math.log(ratio_low) / (math.log(ratio_low) - math.log(ratio_high))
            crossing = math.exp(math.log(n_low) + fraction * (math.log(n_high) - math.log(n_low)))
            return f"≈{crossing:,.0f} ({'faster' if ratio_high < 1 else 'slower'} above)"
    return "faster at every size" if points[0][1] < 1 else "slower at every size"


def reference_device(device: str, available) -> str:
    """numpy_loop is CPU-only: other devices are compared with it on the CPU, as the question does."""
    return device if (REFERENCE_SOLVER, device) in available else "cpu"


def decomposition_n(timings: dict) -> int:
    """DECOMPOSITION_N when measured, else the measured size nearest to it on a log scale."""
    sizes = {n for _, _, n in timings}
    return min(sizes, key=lambda n: abs(math.log(n / DECOMPOSITION_N)))


class Interval(NamedTuple):
    value: float
    low: float
    high: float

    def __sub__(self, other: "Interval") -> "Interval":
        # End to end: the widest the difference can be if each value lies within its own interval.
        return Interval(self.value - other.value, self.low - other.high, self.high - other.low)

    def scaled(self, factor: float) -> "Interval":
        return Interval(self.value * factor, self.low * factor, self.high * factor)


def ratio_to_reference(timings: dict, solver: str, device: str, n: int) -> Interval | None:
    """The paired ratio to the reference with its interval; 1 for the reference itself; None when not measured."""
    timing = timings.get((solver, device, n))
    if timing is None:
        return None
    if solver == REFERENCE_SOLVER:
        return Interval(1.0, 1.0, 1.0)
    if ratio := timing.get("ratio"):
        return Interval(ratio["ratio"], ratio["low"], ratio["high"])
    return None


def reference_timing(timings: dict, device: str, n: int) -> dict | None:
    return timings.get((REFERENCE_SOLVER, reference_device(device, {(s, d) for s, d, _ in timings}), n))


def step_components(timings: dict, device: str, n: int) -> list[tuple[str, Interval, str]]:
    """(component, µs per step with its interval, how it was derived) for each component whose solvers were measured.

    Each part is a difference of two solvers' paired ratios to the reference, times the reference's per-step
    time: the solvers were timed minutes apart, but each beside the reference, so the machine's drift cancels.
    """
    reference = reference_timing(timings, device, n)
    if reference is None:
        return []
    zero = Interval(0.0, 0.0, 0.0)
    rows = []
    for component, minuend, subtrahend in STEP_COMPONENTS:
        whole = ratio_to_reference(timings, minuend, device, n)
        part = ratio_to_reference(timings, subtrahend, device, n) if subtrahend else zero
        if whole and part:
            rows.append((component, (whole - part).scaled(reference["per_iteration_us"]),
                         f"{minuend} − {subtrahend}" if subtrahend else minuend))
    return rows


def whole_step(timings: dict, device: str, n: int) -> Interval | None:
    """A tf1_feed_dict step in µs, with its interval: the whole that step_components splits."""
    whole = ratio_to_reference(timings, "tf1_feed_dict", device, n)
    reference = reference_timing(timings, device, n)
    return whole.scaled(reference["per_iteration_us"]) if whole and reference else None


def with_interval(interval: Interval | None) -> str:
    if interval is None:
        return "—"
    if interval.low == interval.high:
        return number(interval.value)
    return f"{number(interval.value)} ({number(interval.low)} to {number(interval.high)})"


# Markdown ------------------------------------------------------------------------------------


def size_tables(timings: dict) -> list[str]:
    lines = []
    for device, n in sorted({(device, n) for _, device, n in timings}):
        ref_device = reference_device(device, {(s, d) for s, d, _ in timings})
        reference = timings.get((REFERENCE_SOLVER, ref_device, n))
        ratio_header = f"× {REFERENCE_SOLVER}" + ("" if ref_device == device else f" ({ref_device})")
        # How far each solver is from what this CPU can do: the fused loop, and the algebra's own limit.
        limits = [(solver, timings[solver, "cpu", n]) for solver in (ROOFLINE_SOLVER, ALGEBRAIC_LIMIT_SOLVER)
                  if (solver, "cpu", n) in timings]
        rows = [
            [f"`{solver}`", number(timing["per_iteration_us"]), number(timing["setup_s"]),
             with_interval(ratio_to_reference(timings, solver, device, n)) if reference else "—"]
            + [number(timing["per_iteration_us"] / limit["per_iteration_us"]) for _, limit in limits]
            + [number(timing["iterations"]), number(timing["trials"]), number(timing["rounds"])]
            for (solver, d, size), timing in sorted(timings.items(), key=lambda item: item[1]["per_iteration_us"])
            if (d, size) == (device, n)
        ]
        lines += [f"**{device}, n = {n:,}**", ""]
        lines += table(["solver", "µs / iteration", "setup s", ratio_header] + [f"× {name}" for name, _ in limits]
                       + ["iterations", "trials", "rounds"], rows)
    return lines


def regime(solver: str, model: Model, reference: Model, crossover: float | None, low: float) -> str:
    """Who is faster where, in words."""
    if crossover is not None:
        winner = solver if model.beta_ns < reference.beta_ns else REFERENCE_SOLVER
        return f"`{winner}` faster above n*"
    faster = model.per_iteration_us(low) < reference.per_iteration_us(low)
    return f"{'faster' if faster else 'slower'} throughout"


def model_table(models: dict, timings: dict) -> list[str]:
    rows = []
    for (solver, device), model in sorted(models.items()):
        reference = models.get((REFERENCE_SOLVER, reference_device(device, models)))
        fit_quality = "exact (2 sizes)" if len(model.sizes) == 2 else f"{model.max_relative_residual:.1%}"
        measured_cell = measured_crossover(timings, solver, device, reference_device(device, models))
        if solver == REFERENCE_SOLVER or reference is None:
            crossover_cell = measured_cell = "—"
            regime_cell = "reference" if solver == REFERENCE_SOLVER else f"no {REFERENCE_SOLVER} model"
        else:
            low, high = max(model.sizes[0], reference.sizes[0]), min(model.sizes[-1], reference.sizes[-1])
            crossover, where = crossover_n(model, reference, low, high)
            crossover_cell = NONE_IN_RANGE if crossover is None else f"{crossover:,.0f}" + (
                " (extrapolated)" if where == "extrapolated" else "")
            regime_cell = regime(solver, model, reference, crossover, low)
        rows.append([f"`{solver}`", device, number(model.alpha_us), number(model.beta_ns),
                     f"{model.sizes[0]:,}–{model.sizes[-1]:,} ({len(model.sizes)})", fit_quality,
                     crossover_cell, measured_cell, regime_cell])
    if not rows:
        return ["No solver was measured at two or more sizes: run with `--profile full` for the model.", ""]
    return table(["solver", "device", "α µs/step", "β ns/sample", "sizes (count)", "max rel. residual",
                  f"n* vs {REFERENCE_SOLVER} (model)", "n* (measured)", "regime (model)"], rows)


def decomposition_section(timings: dict) -> list[str]:
    n = decomposition_n(timings)
    lines = []
    for device in sorted({device for _, device, _ in timings}):
        components = step_components(timings, device, n)
        if not components:
            continue
        whole = whole_step(timings, device, n)
        whole_us = whole.value if whole else None
        rows = [[component, with_interval(value), f"{value.value / whole_us:.0%}" if whole_us else "—", f"`{derivation}`"]
                for component, value, derivation in components]
        lines += [f"**Where a `tf1_feed_dict` step goes: {device}, n = {n:,}**", ""]
        lines += table(["component", "µs / step", "share of tf1_feed_dict", "derived as"], rows)
    return lines


def comparison_section(runs: list[Run], letters: str) -> list[str]:
    keys = sorted(set().union(*(run.timings for run in runs)))
    header = ["solver", "device", "n"] + [f"{letter} µs/iter" for letter in letters]
    header += [f"{letter}/{letters[0]}" for letter in letters[1:]]
    rows = []
    for key in keys:
        values = [run.timings.get(key, {}).get("per_iteration_us") for run in runs]
        ratios = [number(value / values[0]) if value and values[0] else "—" for value in values[1:]]
        rows.append([f"`{key[0]}`", key[1], f"{key[2]:,}"] + [number(value) for value in values] + ratios)
    return table(header, rows)


def agreement_section(runs: list[Run], letters: str) -> list[str]:
    """Each run's ratio to the reference with its interval, their spread, and whether the intervals overlap."""
    keys = sorted(key for key in set().union(*(run.timings for run in runs)) if key[0] != REFERENCE_SOLVER)
    rows = []
    for solver, device, n in keys:
        intervals = [ratio_to_reference(run.timings, solver, device, n) for run in runs]
        if not all(intervals):
            continue
        spread = max(i.value for i in intervals) / min(i.value for i in intervals)
        overlap = max(i.low for i in intervals) <= min(i.high for i in intervals)
        rows.append([f"`{solver}`", device, f"{n:,}"] + [with_interval(i) for i in intervals]
                    + [f"{spread:.3f}", "yes" if overlap else "**no**"])
    if not rows:
        return []
    return table(["solver", "device", "n"] + [f"{letter} × {REFERENCE_SOLVER}" for letter in letters]
                 + ["spread (max/min)", "intervals overlap"], rows)


def decomposition_by_run(runs: list[Run], letters: str) -> list[str]:
    """The parts of a tf1_feed_dict step, one column per run and its thread setting: what pinning threads does."""
    lines = []
    for device in sorted({device for run in runs for _, device, _ in run.timings}):
        at = [(run.timings, decomposition_n(run.timings)) for run in runs]
        parts = [{component: value for component, value, _ in step_components(timings, device, n)} for timings, n in at]
        components = [component for component, *_ in STEP_COMPONENTS if all(component in part for part in parts)]
        if not components:
            continue
        rows = [[component] + [with_interval(part[component]) for part in parts] for component in components]
        rows.append(["whole step (`tf1_feed_dict`)"] + [with_interval(whole_step(timings, device, n)) for timings, n in at])
        lines += [f"**{device}**", ""]
        lines += table(["µs / step"] + [f"{letter}: threads {run_threads(run)}" for letter, run in zip(letters, runs)], rows)
    return lines


def run_threads(run: Run) -> str:
    threads = (run.document["machine_info"].get("fssgd") or {}).get("threads")
    return threads_setting(threads) if isinstance(threads, int) else "?"


def run_line(letter: str, run: Run) -> str:
    info, commit = run.document["machine_info"], run.document.get("commit_info") or {}
    fssgd = info.get("fssgd") or {}
    details = [f"`{run.path}`", str(run.document.get("datetime", "?"))[:19]]
    if commit.get("id"):
        details.append(f"commit {commit['id'][:7]}" + (" (dirty)" if commit.get("dirty") else ""))
    details.append(f"CPU {fssgd.get('cpu_model') or (info.get('cpu') or {}).get('brand_raw', '?')}")
    details.append(f"threads {run_threads(run)}, NumPy {fssgd.get('numpy', '?')}")
    return f"- **{letter}**: {run.label} — " + ", ".join(details)


def render(runs: list[Run], models: list[dict], plots: dict, plot_note: str | None) -> str:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:len(runs)]
    lines = ["# FSSGD benchmark report", ""]
    lines += [run_line(letter, run) for letter, run in zip(letters, runs)] + [""]
    lines += [f"Each benchmark is timed in independent trials (a fresh setup each). × {REFERENCE_SOLVER} is the "
              f"median over trials of the benchmark's time over the {REFERENCE_SOLVER} rounds timed beside it, with its "
              f"{CONFIDENCE:.0%} interval from the variation between trials; the decomposition's parts are "
              f"differences of those ratios times {REFERENCE_SOLVER}'s µs / iteration, their intervals the two "
              f"intervals combined end to end. µs / iteration is that ratio times the median of every "
              f"{REFERENCE_SOLVER} trial of the run at that n (a figure's benchmark: its fastest trial's median "
              "round over its iterations). The model fits "
              "t(n) = α + β·n per solver and device: α is the fixed cost of one step, β the cost per sample; "
              f"n* (model) is where a solver's line meets `{REFERENCE_SOLVER}`'s; n* (measured) interpolates "
              "the measured ratio between the two sizes where it crosses 1.", ""]
    if len(runs) > 1:
        lines += ["## Side by side", "", "Ratios are per-iteration times against run A.", ""]
        lines += comparison_section(runs, letters)
        if agreement := agreement_section(runs, letters):
            lines += ["## Do the runs agree?", "", f"Each run's paired ratio to `{REFERENCE_SOLVER}` with its "
                      f"{CONFIDENCE:.0%} interval; runs of one machine and one version should overlap.", ""]
            lines += agreement
        if by_run := decomposition_by_run(runs, letters):
            lines += ["## Where a `tf1_feed_dict` step goes, run by run", "",
                      f"Each part with its {CONFIDENCE:.0%} interval, as in each run's own section; runs that differ "
                      "in their thread setting show what pinning TensorFlow's threads does to each part.", ""]
            lines += by_run
    for letter, run, run_models in zip(letters, runs, models):
        level = "##" if len(runs) == 1 else "###"
        if len(runs) > 1:
            lines += [f"## {letter}: {run.label}", ""]
        if run.timings:  # a run of the figures alone has no per-size tables
            lines += [f"{level} Per size", ""] + size_tables(run.timings)
            lines += [f"{level} Overhead model", ""] + model_table(run_models, run.timings)
            if decomposition := decomposition_section(run.timings):
                lines += [f"{level} Per-step cost decomposition", ""] + decomposition
        if sweep := report_figures.sweep_section(run.figures.get(report_figures.SWEEP, [])):
            lines += [f"{level} Iteration sweep", ""] + sweep
        if accuracy := report_figures.accuracy_section(run.figures.get(report_figures.ACCURACY, [])):
            lines += [f"{level} Time to accuracy", ""] + accuracy
        if plots.get(letter):
            lines += [f"{level} Plots", ""] + [f"![{caption}]({path.name})" for caption, path in plots[letter]] + [""]
        if run.notes:
            lines += ["Skipped:", ""] + [f"- {note}" for note in run.notes] + [""]
    if plot_note:
        lines += [f"_{plot_note}_", ""]
    return "\n".join(lines)


# Plots ---------------------------------------------------------------------------------------


def write_plots(run: Run, models: dict, out: Path, prefix: str) -> list[tuple[str, Path]]:
    """Log-log time vs n with the fitted lines, and the per-step bars near n = 1,000; PNG paths."""
    # The figure API with an explicit Agg canvas: no pyplot global state, no display needed.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    written = []
    figure = Figure(figsize=(9, 5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    # Fitted lines span every measured size, so a crossover outside a solver's own sizes still shows.
    all_sizes = np.geomspace(min(n for *_, n in run.timings), max(n for *_, n in run.timings), 50)
    series = sorted({(solver, device) for solver, device, _ in run.timings})
    # More solvers than any one palette has colours: cycle markers against tab20 so no two lines look alike.
    colours, markers = matplotlib_colours(len(series)), "osD^v<>ph*"
    for index, (solver, device) in enumerate(series):
        points = sorted((n, timing["per_iteration_us"]) for (s, d, n), timing in run.timings.items()
                        if (s, d) == (solver, device))
        (line,) = axes.plot(*zip(*points), marker=markers[index % len(markers)], color=colours[index],
                            linewidth=0.8, label=f"{solver} ({device})")
        if model := models.get((solver, device)):
            axes.plot(all_sizes, model.per_iteration_us(all_sizes), linestyle="--", color=line.get_color(), linewidth=1)
    axes.set(xscale="log", yscale="log", xlabel="n (samples)", ylabel="µs per iteration",
             title="Per-iteration time vs n (dashed: α + β·n fit)")
    axes.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    written.append(("per-iteration time vs n", out / f"{prefix}per_iteration_vs_n.png"))
    figure.savefig(written[-1][1], dpi=120)

    n = decomposition_n(run.timings)
    bars = sorted((timing["per_iteration_us"], f"{solver} ({device})")
                  for (solver, device, size), timing in run.timings.items() if size == n)
    figure = Figure(figsize=(7, 0.5 * len(bars) + 1.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    container = axes.barh([label for _, label in bars], [value for value, _ in bars])
    axes.bar_label(container, fmt="%.3g", padding=3)
    # Log scale: the costs span four decades, and a linear axis hides everything but the slowest.
    axes.set(xscale="log", xlabel="µs per iteration (log scale)", title=f"Per-step cost by solver, n = {n:,}")
    written.append((f"per-step cost at n = {n:,}", out / f"{prefix}per_step_n{n}.png"))
    figure.savefig(written[-1][1], dpi=120)
    return written


def matplotlib_colours(count: int) -> list:
    from matplotlib import colormaps

    palette = colormaps["tab20"].colors
    return [palette[index % len(palette)] for index in range(count)]


# Command line --------------------------------------------------------------------------------


def storage_folders(given: list[Path], loaded: list[Path]) -> list[Path]:
    """Folders pytest-benchmark reads and writes: the folders given, .benchmarks, and saved runs' storage."""
    folders = [path for path in given if path.is_dir()]
    for path in loaded:
        folders += [parent for parent in path.resolve().parents if parent.name == ".benchmarks"]
    return [folder.resolve() for folder in folders]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.report", description=__doc__)
    parser.add_argument("runs", nargs="*", type=Path, metavar="RUN",
                        help="pytest-benchmark JSON (saved run or --benchmark-json); a folder means its newest JSON "
                             f"(default: the newest run saved in {environment.runs_folder()})")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="output folder (default: reports/)")
    parser.add_argument("--no-plots", action="store_true", help="tables only, no PNG")
    args = parser.parse_args(argv)
    if not args.runs:
        folder = environment.runs_folder()
        if not folder.is_dir():
            print(f"error: no saved run of this environment in {folder}: save one with "
                  "`pytest perf/ --benchmark-autosave`, or name the runs to report", file=sys.stderr)
            return 2
        args.runs = [folder]

    runs = []
    for given in args.runs:
        shown = given
        try:
            if given.is_dir():
                path = newest_run(given)
                shown = f"{path} (newest in {given})"
            else:
                path = given
            runs.append(load_run(path))
        except RunError as error:
            print(f"warning: {shown}: {error}; skipped", file=sys.stderr)
    if not runs:
        print("error: no usable pytest-benchmark result among the given paths", file=sys.stderr)
        return 2

    out = args.out.resolve()
    for storage in storage_folders(args.runs, [run.path for run in runs]):
        if out == storage or storage in out.parents:
            print(f"error: --out {args.out} is inside the results folder {storage}; choose another", file=sys.stderr)
            return 2

    models = [fit_models(run.timings) for run in runs]
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:len(runs)]
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        plots, plot_note = {}, None
        try:
            import matplotlib  # noqa: F401  (optional: the `plot` extra)
        except ImportError:
            plot_note = f"Plots skipped: matplotlib is not installed (`{PLOT_INSTALL_HINT}`)."
        if args.no_plots:
            plot_note = None
        elif not plot_note:
            for letter, run, run_models in zip(letters, runs, models):
                prefix = f"{letter}-" if len(runs) > 1 else ""
                plots[letter] = write_plots(run, run_models, args.out, prefix) if run.timings else []
                plots[letter] += report_figures.write_sweep_plot(
                    run.figures.get(report_figures.SWEEP, []), args.out, prefix)
        report = args.out / "report.md"
        report.write_text(render(runs, models, plots, plot_note), encoding="utf-8")
    except OSError as error:
        print(f"error: cannot write the report to {args.out}: {error.strerror or error}", file=sys.stderr)
        return 2

    for run in runs:
        for note in run.notes:
            print(f"note: {run.path}: {note}", file=sys.stderr)
    print(f"report: {report}")
    for _, path in (plot for run_plots in plots.values() for plot in run_plots):
        print(f"plot: {path}")
    if plot_note:
        print(plot_note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
