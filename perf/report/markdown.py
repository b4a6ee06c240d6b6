"""The report in Markdown (python -m perf.report)."""

from perf.judge.statistics import overlapping
from perf.report import analysis, studies
from perf.report.analysis import REFERENCE_SOLVER
from perf.report.handoff import Handoff, applies, decomposition_row
from perf.report.runs import Run, onednn
from perf.report.tables import (DECOMPOSITION_HEADER, DECOMPOSITION_NOTE, decomposition_cells, interval_caption,
                                markdown, number, with_interval)

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # the runs', in the report and in its plots' file names


def size_tables(rows: dict) -> list[str]:
    lines = []
    for device, n in sorted({(key.device, key.n) for key in rows}):
        reference = analysis.reference_row(rows, n)
        ratio_header = f"× {REFERENCE_SOLVER}" + ("" if device == "cpu" else " (cpu)")
        # How far each solver is from what this CPU can do: the fused loop, and the algebra's own limit.
        limits = [(solver, rows[solver, "cpu", n]) for solver in (analysis.ROOFLINE_SOLVER, analysis.ALGEBRAIC_LIMIT_SOLVER)
                  if (solver, "cpu", n) in rows]
        cells = [
            [f"`{key.solver}`", number(row.per_step_us), number(row.setup_s),
             with_interval(row.ratio) if reference else "—"]
            + [number(row.per_step_us / limit.per_step_us) for _, limit in limits]
            + [number(row.iterations), number(row.trials), number(row.rounds)]
            for key, row in sorted(rows.items(), key=lambda item: item[1].per_step_us) if (key.device, key.n) == (device, n)
        ]
        lines += [f"**{device}, n = {n:,}**", ""]
        lines += markdown(["solver", "µs / step", "setup s", ratio_header] + [f"× {name}" for name, _ in limits]
                          + ["steps", "trials", "rounds"], cells)
    return lines


def model_table(models: dict, rows: dict) -> list[str]:
    cells = []
    reference = models.get(analysis.TIMING_REFERENCE)
    for (solver, device), model in sorted(models.items()):
        fit_quality = "exact (2 sizes)" if len(model.sizes) == 2 else f"{model.max_relative_residual:.1%}"
        measured_cell = analysis.measured_crossover(rows, solver, device)
        if (solver, device) == analysis.TIMING_REFERENCE or reference is None:
            crossover_cell = measured_cell = "—"
            regime_cell = "reference" if solver == REFERENCE_SOLVER else f"no {REFERENCE_SOLVER} model"
        else:
            low, high = max(model.sizes[0], reference.sizes[0]), min(model.sizes[-1], reference.sizes[-1])
            crossover, where = analysis.crossover_n(model, reference, low, high)
            crossover_cell = analysis.NONE_IN_RANGE if crossover is None else f"{crossover:,.0f}" + (
                " (extrapolated)" if where == "extrapolated" else "")
            if crossover is not None:  # who is faster where, in words
                regime_cell = f"`{solver if model.beta_ns < reference.beta_ns else REFERENCE_SOLVER}` faster above n*"
            else:
                faster = model.per_step_us(low) < reference.per_step_us(low)
                regime_cell = f"{'faster' if faster else 'slower'} throughout"
                if measured_cell.startswith("≈"):  # the line misses what the ratios show
                    regime_cell += ", by the line alone: the measured ratio crosses"
        cells.append([f"`{solver}`", device, number(model.alpha_us), number(model.beta_ns),
                      f"{model.sizes[0]:,}–{model.sizes[-1]:,} ({len(model.sizes)})", fit_quality,
                      crossover_cell, measured_cell, regime_cell])
    if not cells:
        return ["No solver was measured at two or more sizes: run with `--profile full` for the model.", ""]
    return markdown(["solver", "device", "α µs/step", "β ns/sample", "sizes (count)", "max rel. residual",
                     f"n* vs {REFERENCE_SOLVER} (model)", "n* (measured)", "regime (model)"], cells)


def decomposition_section(run: Run, handoff: Handoff | None = None) -> list[str]:
    """Where a tf1_feed_dict step goes, per device at the question's size; in a free run, with the hand-off between
    CPUs where the study timed that size."""
    lines, described = [], None
    for device in sorted({key.device for key in run.rows}):
        n = analysis.question_n(run.rows, device)
        if found := decomposition_cells(run.rows, device, n):
            lines += [f"**Where a `{analysis.WHOLE_STEP}` step goes: {device}, n = {n:,}, "
                      f"{with_interval(found[0])} µs**", ""]
            cells = [cells[:3] + [f"`{cells[3]}`"] for cells in found[1]]
            if figures := applies(handoff, run.fssgd, device, n):
                cells.append(decomposition_row(handoff, figures))
                described = handoff.described(figures)
            lines += markdown(DECOMPOSITION_HEADER, cells)
    note = DECOMPOSITION_NOTE + (f" {described}" if described else "")
    return lines + ([note, ""] if lines else [])


def comparison_section(runs: list[Run], letters: str) -> list[str]:
    keys = sorted(set().union(*(run.rows for run in runs)))
    header = ["solver", "device", "n"] + [f"{letter} µs/step" for letter in letters]
    header += [f"{letter}/{letters[0]}" for letter in letters[1:]]
    cells = []
    for key in keys:
        values = [getattr(run.rows.get(key), "per_step_us", None) for run in runs]
        ratios = [number(value / values[0]) if value and values[0] else "—" for value in values[1:]]
        cells.append([f"`{key.solver}`", key.device, f"{key.n:,}"] + [number(value) for value in values] + ratios)
    return markdown(header, cells)


def agreement_section(runs: list[Run], letters: str) -> list[str]:
    """Each run's ratio to the timing reference with its interval, their spread, and whether the intervals overlap."""
    keys = sorted(key for key in set().union(*(run.rows for run in runs)) if key.solver != REFERENCE_SOLVER)
    cells = []
    for key in keys:
        intervals = [getattr(run.rows.get(key), "ratio", None) for run in runs]
        if not all(intervals):
            continue
        spread = max(i.value for i in intervals) / min(i.value for i in intervals)
        cells.append([f"`{key.solver}`", key.device, f"{key.n:,}"] + [with_interval(i) for i in intervals]
                     + [f"{spread:.3f}", "yes" if overlapping(*intervals) else "**no**"])
    if not cells:
        return []
    return markdown(["solver", "device", "n"] + [f"{letter} × {REFERENCE_SOLVER}" for letter in letters]
                    + ["spread (max/min)", "intervals overlap"], cells)


def decomposition_by_run(runs: list[Run], letters: str) -> list[str]:
    """The parts of a tf1_feed_dict step, one column per run and its thread setting: what pinning threads does."""
    lines = []
    for device in sorted({key.device for run in runs for key in run.rows}):
        found = [decomposition_cells(run.rows, device, analysis.question_n(run.rows, device)) for run in runs]
        if not all(found):
            continue
        parts = [{cells[0]: cells[1] for cells in run_cells} for _, run_cells in found]
        names = [name for name in parts[0] if all(name in part for part in parts)]
        cells = [[name] + [part[name] for part in parts] for name in names]
        cells.append([f"whole step (`{analysis.WHOLE_STEP}`)"] + [with_interval(whole) for whole, _ in found])
        lines += [f"**{device}**", ""]
        lines += markdown(["µs / step"] + [f"{letter}: threads {run.threads}" for letter, run in zip(letters, runs)], cells)
    return lines


def run_line(letter: str, run: Run) -> str:
    info, commit, fssgd = run.document["machine_info"], run.document.get("commit_info") or {}, run.fssgd
    details = [f"`{run.path}`", str(run.document.get("datetime", "?"))[:19]]
    if commit.get("id"):
        details.append(f"commit {commit['id'][:7]}" + (" (dirty)" if commit.get("dirty") else ""))
    details.append(f"CPU {fssgd.get('cpu_model') or (info.get('cpu') or {}).get('brand_raw', '?')}")
    details.append(f"threads {run.threads}, oneDNN {onednn(fssgd)}, NumPy {fssgd.get('numpy', '?')}")
    if fssgd.get("slowdown"):
        details.append(f"**slowed on purpose: FSSGD_SLOWDOWN={fssgd['slowdown']}**")
    if fssgd.get("shrink"):
        details.append(f"**shrunk on purpose: FSSGD_SHRINK={fssgd['shrink']}, not the profile's figures**")
    return f"- **{letter}**: {run.label} — " + ", ".join(details)


def render(runs: list[Run], models: list[dict], plots: dict, handoff: Handoff | None = None) -> str:
    letters = LETTERS[:len(runs)]
    captions = interval_caption(row for run in runs for row in run.rows.values())
    lines = ["# FSSGD benchmark report", ""]
    lines += [run_line(letter, run) for letter, run in zip(letters, runs)] + [""]
    lines += [f"Each benchmark is timed in independent trials (a fresh setup each, in a worker process of its "
              f"own). × {REFERENCE_SOLVER} is the "
              f"median over trials of the benchmark's time over the {REFERENCE_SOLVER} rounds timed beside it, per "
              f"step, with an interval from the variation between trials (order statistics; it covers with "
              f"{captions}). µs / step is that ratio times the lower quartile of every {REFERENCE_SOLVER} trial of "
              "the run at that n (a study's benchmark: its fastest trial's median round over its steps). The model fits "
              "t(n) = α + β·n per solver and device: α is the fixed cost of one step, β the cost per sample; "
              f"n* (model) is where a solver's line meets `{REFERENCE_SOLVER}`'s; n* (measured) interpolates "
              "the measured ratio between the two sizes where it crosses 1.", ""]
    if len(runs) > 1:
        lines += ["## Side by side", "", "Ratios are µs per step against run A.", ""]
        lines += comparison_section(runs, letters)
        if agreement := agreement_section(runs, letters):
            lines += ["## Do the runs agree?", "", f"Each run's paired ratio to `{REFERENCE_SOLVER}` with its "
                      "interval; runs of one machine and one version should overlap.", ""]
            lines += agreement
        if by_run := decomposition_by_run(runs, letters):
            lines += [f"## Where a `{analysis.WHOLE_STEP}` step goes, run by run", "",
                      "Each part with its interval, as in each run's own section; runs that differ in their thread "
                      "setting show what pinning TensorFlow's threads does to each part.", ""]
            lines += by_run
    for letter, run, run_models in zip(letters, runs, models):
        level = "##" if len(runs) == 1 else "###"
        if len(runs) > 1:
            lines += [f"## {letter}: {run.label}", ""]
        if run.rows:  # a run of the studies alone has no per-size tables
            lines += [f"{level} Per size", ""] + size_tables(run.rows)
            lines += [f"{level} Overhead model", ""] + model_table(run_models, run.rows)
            if decomposition := decomposition_section(run, handoff):
                lines += [f"{level} Per-step cost decomposition", ""] + decomposition
        if sweep := studies.sweep_section(run.studies.get(studies.SWEEP, [])):
            lines += [f"{level} Step-count sweep", ""] + sweep
        if accuracy := studies.accuracy_section(run.studies.get(studies.ACCURACY, [])):
            lines += [f"{level} Time to accuracy", ""] + accuracy
        if plots.get(letter):
            lines += [f"{level} Plots", ""] + [f"![{caption}]({path.name})" for caption, path in plots[letter]] + [""]
        if run.notes:
            lines += ["Skipped:", ""] + [f"- {note}" for note in run.notes] + [""]
    return "\n".join(lines)
