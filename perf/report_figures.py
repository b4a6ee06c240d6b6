"""The report's figures beyond the per-step tables: the iteration sweep and time to accuracy."""

from pathlib import Path
from statistics import median
from typing import NamedTuple

import numpy as np

from perf.report_format import number, table, weighted_line

SWEEP, ACCURACY = "iteration_sweep", "time_to_accuracy"  # extra_info["figure"] of perf/test_iterations.py, ...


class SweepFit(NamedTuple):
    setup_s: float  # the one-off cost each benchmark recorded (prepare + run(1)), median over K
    first_run_extra_s: float  # what the first run(K) cost beyond a steady one (XLA compiles per K), median over K
    per_call_us: float  # the steady-state line run(K) = per-call + K·per-iteration: its intercept
    per_iteration_us: float  # and its slope
    max_relative_residual: float
    one_off_s: float  # the intercept of a line through the totals (setup + first run(K)): a check on the above
    iteration_counts: tuple[int, ...]

    @property
    def setup_in_steps(self) -> float | None:
        """How many steps cost as much as the setup; None when noise left no positive slope."""
        return self.setup_s / (self.per_iteration_us * 1e-6) if self.per_iteration_us > 0 else None

    def total_s(self, iterations):
        return self.setup_s + self.first_run_extra_s + (self.per_call_us + iterations * self.per_iteration_us) * 1e-6


def figure_entries(benchmarks: list, figure: str) -> list[dict]:
    """The timed benchmarks of one figure: extra_info plus the median round in seconds."""
    entries = []
    for benchmark in benchmarks:
        benchmark = benchmark if isinstance(benchmark, dict) else {}
        extra = benchmark.get("extra_info") or {}
        median_s = (benchmark.get("stats") or {}).get("median")
        if extra.get("figure") == figure and extra.get("solver") and extra.get("device") and median_s:
            entries.append({**extra, "median_s": float(median_s)})
    return entries


def measured_total_s(entry: dict) -> float:
    """From nothing to an answer at K: setup, then the first run(K) (the median run where older runs lack it)."""
    return entry["setup_s"] + entry.get("first_run_s", entry["median_s"])


def fit_sweep(entries: list[dict]) -> dict:
    """Per (solver, device) measured at two or more K: setup apart, and the line through the timed runs."""
    series = {}
    for entry in entries:
        if isinstance(entry.get("setup_s"), (int, float)) and isinstance(entry.get("iterations"), int):
            series.setdefault((entry["solver"], entry["device"]), []).append(entry)
    fits = {}
    for key, points in sorted(series.items()):
        counts = [point["iterations"] for point in points]
        if len(set(counts)) < 2:
            continue
        # The timed runs are medians of several rounds; a setup is one measurement, noisy by more than
        # thousands of steps cost, so the per-iteration slope comes from the runs alone.
        per_call_s, per_iteration_s, residual = weighted_line(counts, [point["median_s"] for point in points])
        one_off_s, _, _ = weighted_line(counts, [measured_total_s(point) for point in points])
        fits[key] = SweepFit(median(point["setup_s"] for point in points),
                             median(measured_total_s(point) - point["setup_s"] - point["median_s"] for point in points),
                             per_call_s * 1e6, per_iteration_s * 1e6, residual, one_off_s, tuple(sorted(set(counts))))
    return fits


def sweep_section(entries: list[dict]) -> list[str]:
    rows = [[f"`{solver}`", device, number(fit.setup_s), number(fit.first_run_extra_s), number(fit.one_off_s),
             number(fit.per_call_us),
             number(fit.per_iteration_us), number(fit.setup_in_steps),
             f"{fit.iteration_counts[0]:,}–{fit.iteration_counts[-1]:,} ({len(fit.iteration_counts)})",
             f"{fit.max_relative_residual:.1%}"]
            for (solver, device), fit in fit_sweep(entries).items()]
    if not rows:
        return []
    return ["Time to an answer for K steps from nothing = setup (prepare + run(1)) + what the first run(K) costs "
            "beyond a steady one (XLA compiles once per distinct K) + per-call cost + K × per-iteration cost. "
            "Setup and first-run extra are medians over the K; per-call and per-iteration are the intercept and "
            "slope of the timed run(K) medians (max rel. residual: of that line); the one-off fit is the intercept "
            "of a line through the totals, a check on setup + extra. \"Setup = K steps\" is where the loop has cost "
            "as much as its setup.", ""] + table(
        ["solver", "device", "setup s", "first-run extra s", "one-off s (fit of totals)", "µs / call",
         "µs / iteration", "setup = K steps", "K (count)", "max rel. residual"], rows)


def fastest_standardized(entries: list[dict]) -> dict:
    """Median wall time of the fastest standardized-x solver per (device, dtype): what raw x is compared with."""
    fastest = {}
    for entry in entries:
        if entry.get("x_scaling") == "standardized":
            key = entry["device"], entry.get("dtype")
            fastest[key] = min(fastest.get(key, entry["median_s"]), entry["median_s"])
    return fastest


def accuracy_row(entry: dict, standardized_s: float | None) -> list:
    reached = entry.get("time_to_accuracy") or {}
    iterations = number(reached.get("iterations"))
    return [f"`{entry['solver']}`", entry["device"], entry.get("x_scaling", "—"),
            f"{entry['lr']:g}" if entry.get("lr") else "—",
            iterations if reached.get("reached") else f"not reached within {iterations}",
            number(entry["median_s"]), number(entry.get("per_iteration_us")),
            f"{'yes' if reached.get('reached') else 'no'} ({reached.get('error', float('nan')):.5g})",
            number(entry["median_s"] / standardized_s) if standardized_s else "—"]


def accuracy_section(entries: list[dict]) -> list[str]:
    if not entries:
        return []
    # Same dtype, same device: the same precision asked of both, on the same hardware.
    standardized_s = fastest_standardized(entries)
    ordered = sorted(entries, key=lambda entry: (entry["device"], entry.get("x_scaling") != "raw", entry["median_s"]))
    rows = [accuracy_row(entry, standardized_s.get((entry["device"], entry.get("dtype")))) for entry in ordered]
    targets = {(entry.get("time_to_accuracy") or {}).get("target") for entry in entries} - {None}
    target = ", ".join(f"{value:g}" for value in sorted(targets)) or "?"
    return [f"Wall time to (w, b) within a relative error of {target} of the closed form (least squares), both "
            "coefficients. Iterations are the float64 reference's first step within the target, tightened by the "
            "dtype's tolerance for float32 so that its answer is within it too; the timed answer's own error is "
            "in brackets. The last column divides by the fastest standardized solver of the same dtype and device.",
            ""] + table(["solver", "device", "x", "lr", f"iterations to {target}", "wall time s (median)",
                         "µs / iteration", "reached? (error)", "× standardized"], rows)


def write_sweep_plot(entries: list[dict], out: Path, prefix: str) -> list[tuple[str, Path]]:
    """Log-log total time vs K per solver, dashed: setup + first-run extra + per-call + K·per-iteration."""
    fits = fit_sweep(entries)
    if not fits:
        return []
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    counts = np.geomspace(min(min(fit.iteration_counts) for fit in fits.values()),
                          max(max(fit.iteration_counts) for fit in fits.values()), 50)
    for (solver, device), fit in fits.items():
        points = sorted((entry["iterations"], measured_total_s(entry)) for entry in entries
                        if (entry["solver"], entry["device"]) == (solver, device))
        (line,) = axes.plot(*zip(*points), marker="o", linewidth=0.8, label=f"{solver} ({device})")
        axes.plot(counts, fit.total_s(counts), linestyle="--",
                  color=line.get_color(), linewidth=1)
    axes.set(xscale="log", yscale="log", xlabel="K (iterations)", ylabel="setup + first run(K), s",
             title="Setup + first run(K) vs K (dashed: the fitted decomposition)")
    axes.legend(fontsize="small")
    path = out / f"{prefix}total_vs_iterations.png"
    figure.savefig(path, dpi=120)
    return [("total time vs iterations", path)]
