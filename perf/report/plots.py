"""The report's plots, PNG files drawn with matplotlib's figure API (the `plot` extra)."""

from pathlib import Path

import numpy as np

from perf.report import analysis, studies

INSTALL_HINT = "pip install -e '.[plot]'"


def canvas(size):
    """A matplotlib Figure on an explicit Agg canvas: no pyplot global state, no display needed."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def per_step_plots(run, models: dict, out: Path, prefix: str) -> list[tuple[str, Path]]:
    """Log-log µs per step vs n with the fitted lines, and the per-step bars near n = 1,000; (caption, PNG path)."""
    from matplotlib import colormaps

    figure = canvas((9, 5))
    axes = figure.add_subplot()
    # Fitted lines span every measured size, so a crossover outside a solver's own sizes still shows.
    all_sizes = np.geomspace(min(key.n for key in run.rows), max(key.n for key in run.rows), 50)
    series = sorted({(key.solver, key.device) for key in run.rows})
    # More solvers than any one palette has colours: cycle markers against tab20 so no two lines look alike.
    colours, markers = colormaps["tab20"].colors, "osD^v<>ph*"
    for index, (solver, device) in enumerate(series):
        points = sorted((key.n, row.per_step_us) for key, row in run.rows.items() if (key.solver, key.device) == (solver, device))
        (line,) = axes.plot(*zip(*points), marker=markers[index % len(markers)], color=colours[index % len(colours)],
                            linewidth=0.8, label=f"{solver} ({device})")
        if model := models.get((solver, device)):
            axes.plot(all_sizes, model.per_step_us(all_sizes), linestyle="--", color=line.get_color(), linewidth=1)
    axes.set(xscale="log", yscale="log", xlabel="n (samples)", ylabel="µs per step",
             title="Per-step time vs n (dashed: α + β·n fit)")
    axes.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    vs_n = out / f"{prefix}per_step_vs_n.png"
    figure.savefig(vs_n, dpi=120)

    n = analysis.question_n(run.rows)
    bars = sorted((row.per_step_us, f"{key.solver} ({key.device})") for key, row in run.rows.items() if key.n == n)
    figure = canvas((7, 0.5 * len(bars) + 1.5))
    axes = figure.add_subplot()
    container = axes.barh([label for _, label in bars], [value for value, _ in bars])
    axes.bar_label(container, fmt="%.3g", padding=3)
    # Log scale: the costs span four decades, and a linear axis hides everything but the slowest.
    axes.set(xscale="log", xlabel="µs per step (log scale)", title=f"Per-step cost by solver, n = {n:,}")
    at_n = out / f"{prefix}per_step_n{n}.png"
    figure.savefig(at_n, dpi=120)
    return [("per-step time vs n", vs_n), (f"per-step cost at n = {n:,}", at_n)]


def sweep_plot(rows, out: Path, prefix: str) -> list[tuple[str, Path]]:
    """Log-log total time vs K per solver, dashed: setup + first-run extra + per-call + K·per-step."""
    fits = studies.fit_sweep(rows)
    if not fits:
        return []
    figure = canvas((7, 4.5))
    axes = figure.add_subplot()
    counts = np.geomspace(min(min(fit.step_counts) for fit in fits.values()),
                          max(max(fit.step_counts) for fit in fits.values()), 50)
    for (solver, device), fit in fits.items():
        points = sorted((row.iterations, studies.measured_total_s(row)) for row in rows
                        if (row.key.solver, row.key.device) == (solver, device))
        (line,) = axes.plot(*zip(*points), marker="o", linewidth=0.8, label=f"{solver} ({device})")
        axes.plot(counts, fit.total_s(counts), linestyle="--", color=line.get_color(), linewidth=1)
    axes.set(xscale="log", yscale="log", xlabel="K (steps)", ylabel="setup + first run(K), s",
             title="Setup + first run(K) vs K (dashed: the fitted decomposition)")
    axes.legend(fontsize="small")
    path = out / f"{prefix}total_vs_steps.png"
    figure.savefig(path, dpi=120)
    return [("total time vs steps", path)]


def with_intervals(axes, xs, intervals, **style) -> None:
    """Points with their intervals as error bars."""
    axes.errorbar(xs, [i.value for i in intervals], yerr=[[i.value - i.low for i in intervals],
                                                        [i.high - i.value for i in intervals]], **style)


def history_plots(found, out: Path) -> list[tuple[str, Path]]:
    """Per series with a history and per size: small multiples, one per solver, of × numpy_loop over the runs with
    each run's interval, change points as dashed lines; (caption, PNG path)."""
    from matplotlib.ticker import MaxNLocator

    written = []
    for number, series in enumerate((series for series in found if series.trends), start=1):
        for n in sorted({trend.key.n for trend in series.trends}):
            trends = [trend for trend in series.trends if trend.key.n == n]
            columns = min(4, len(trends))
            rows = -(-len(trends) // columns)
            figure = canvas((3.2 * columns, 2.4 * rows))
            runs = np.arange(1, len(series.points) + 1)
            for index, trend in enumerate(trends):
                axes = figure.add_subplot(rows, columns, index + 1)
                shown = [(run, ratio) for run, ratio in zip(runs, trend.ratios) if ratio]
                with_intervals(axes, [run for run, _ in shown], [ratio for _, ratio in shown], fmt="o", markersize=3,
                               linewidth=0.8)
                for change in trend.changes:
                    axes.axvline(series.points.index(change.after) + 0.5, color="tab:red", linestyle="--", linewidth=1)
                axes.set_title(f"{trend.key.solver} ({trend.key.device})", fontsize="small")
                axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # runs are counted, not measured
                axes.tick_params(labelsize="x-small")
            figure.suptitle(f"× numpy_loop over the runs, n = {n:,} (series {number}: {series.title})", fontsize="small")
            path = out / f"history-{number}-n{n}.png"
            figure.savefig(path, dpi=110)
            written.append((f"series {number}, n = {n:,}", path))
    return written
