"""The project's Markdown: the report, and the step summaries of a gate and of a comparison of saved runs."""

import os
from pathlib import Path

from perf.judge import words
from perf.judge.outcome import FAILED, NOT_MEASURED, PASSED
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


def regime(solver: str, model, reference, crossover: float | None, low: float) -> str:
    """Who is faster where, in words."""
    if crossover is not None:
        winner = solver if model.beta_ns < reference.beta_ns else REFERENCE_SOLVER
        return f"`{winner}` faster above n*"
    faster = model.per_step_us(low) < reference.per_step_us(low)
    return f"{'faster' if faster else 'slower'} throughout"


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
            crossover, where = analysis.model_crossover(models, solver, device)
            crossover_cell = analysis.NONE_IN_RANGE if crossover is None else f"{crossover:,.0f}" + (
                " (extrapolated)" if where == "extrapolated" else "")
            regime_cell = regime(solver, model, reference, crossover, max(model.sizes[0], reference.sizes[0]))
            if crossover is None and measured_cell.startswith("≈"):  # the line misses what the ratios show
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
        overlap = overlapping(*intervals)
        cells.append([f"`{key.solver}`", key.device, f"{key.n:,}"] + [with_interval(i) for i in intervals]
                     + [f"{spread:.3f}", "yes" if overlap else "**no**"])
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


# Step summaries: a gate's or a comparison's ending, for a CI page (GitHub Actions shows $GITHUB_STEP_SUMMARY) -----

SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"
GATE_EXITS = {PASSED: "exit 0: no confirmed regression, repeated error or lost benchmark",
              FAILED: "exit 1: a confirmed regression, a repeated error or a benchmark the candidate lost",
              NOT_MEASURED: "exit 10: it could not measure what it was asked, which is never a pass",
              2: "exit 2: a usage error, reported before anything was timed"}  # argparse's, the gate's usage error
COMPARISON_EXITS = {PASSED: "exit 0: nothing it stands behind failed",
                    FAILED: "exit 1: slower past --fail-on-slower, an error the gate found under --decide, a failed "
                            "test or pytest-benchmark's --benchmark-compare-fail",
                    NOT_MEASURED: "exit 10: it could not judge what it was asked, which is never a pass"}
# Above the full verdict table a page stays short whatever fails: the rest is in the table.
MOST_FLAGGED, MOST_UNMEASURED = 12, 8


class SummaryError(Exception):
    """A summary file that cannot be written; the message names it."""


def summary_targets(path: Path | None) -> list[tuple[Path, str]]:
    """Where a summary goes, and how: the --summary file afresh, and $GITHUB_STEP_SUMMARY appended to, as every step
    of a CI job writes there."""
    targets = [(Path(path), "w")] if path else []
    if os.environ.get(SUMMARY_VARIABLE):
        targets.append((Path(os.environ[SUMMARY_VARIABLE]), "a"))
    return targets


def check_summary_targets(path: Path | None) -> None:
    """Raise SummaryError where a summary could not be written, so that a command stops before timing anything."""
    for target, _ in summary_targets(path):
        try:
            with open(target, "a"):
                pass
        except OSError as error:
            raise SummaryError(f"cannot write the summary to {target}: {error.strerror or error}") from None


def write_summary(text: str, path: Path | None) -> None:
    """The summary to the --summary file and to $GITHUB_STEP_SUMMARY, each where given; SummaryError naming the path
    that could not be written."""
    for target, mode in summary_targets(path):
        try:
            with open(target, mode, encoding="utf-8") as summary:
                summary.write(text.rstrip("\n") + "\n\n")  # a blank line apart from what a later step appends
        except OSError as error:
            raise SummaryError(f"cannot write the summary to {target}: {error.strerror or error}") from None


def ratio_cells(row: dict) -> list[str]:
    """A saved verdict's ratio, interval and passes, as the gate's terminal report sets them; dashes where unjudged."""
    if row.get("ratio") is None:
        return ["—", "—", str(row.get("passes") or "—")]
    return [f"{row['ratio']:.3f}", f"[{row['low']:.3f}, {row['high']:.3f}]", str(row["passes"])]


def confirmation_cell(row: dict, confirmed: bool | None) -> str:
    """What measuring a flagged benchmark again alone found (perf/gate/stages.py: confirmed), with why where the
    benchmark has no ratio (an error, a lost benchmark)."""
    if (screen := row.get("screening")) and screen.get("ratio") is not None:
        return f"confirmed alone; the screen's: {' '.join(ratio_cells(screen)[:2])}, {screen['passes']} passes"
    if check := row.get("confirmation"):
        verdict = words.printed(words.verdict_read(check["verdict"]))
        measured = f", {' '.join(ratio_cells(check)[:2])}, {check.get('passes')} passes" if check.get("ratio") else ""
        return f"not confirmed: {verdict} alone{measured}"
    return row.get("why") or ("none (--no-confirm)" if confirmed is False else "—")


def gate_summary(report: dict) -> str:
    """A gate's summary from its report as --json saves it: the verdict and its exit status first, the flagged
    benchmarks, what was not measured or skipped and why, the machine, the command that replays it, and every verdict
    in a collapsed table."""
    rows = [{**row, "verdict": words.verdict_read(row["verdict"])} for row in report.get("rows", [])]
    status = report["status"]
    lines = [f"**{report['ending']}** ({GATE_EXITS.get(status, f'exit {status}')})", ""]
    if report.get("candidate"):
        lines += [f"Candidate {report['candidate']} against baseline {report['baseline']}"
                  + (f", threshold {report['threshold']:.0%}" if report.get("threshold") else "") + ".", ""]
    if not rows:
        lines += [f"Nothing was timed: the gate could not measure {report.get('asked') or 'what it was asked'}.", ""]
    flagged = [row for row in rows if row["verdict"] in (words.REGRESSION, words.ERROR, words.MISSING,
                                                         words.UNCONFIRMED)]
    if flagged:
        lines += [f"Flagged ({len(flagged)}):", ""]
        lines += markdown(["benchmark", "verdict", "ratio", "interval", "passes", "confirmation, or why"], [
            [f"`{row['benchmark']}`", words.printed(row["verdict"]), *ratio_cells(row),
             confirmation_cell(row, report.get("confirmed"))] for row in flagged[:MOST_FLAGGED]])
        if len(flagged) > MOST_FLAGGED:
            lines += [f"And {len(flagged) - MOST_FLAGGED} more, in the table of every verdict below.", ""]
    elif rows:
        lines += ["Flagged: none.", ""]
    unmeasured = {}
    for row in rows:
        if row["verdict"] in (words.SKIPPED, words.NEW):
            why = row.get("why", "").removeprefix(f"{row['verdict']}: ")  # the bullet says its verdict once
            unmeasured.setdefault((row["verdict"], why), []).append(row["benchmark"])
    if unmeasured:
        lines += ["Not measured or skipped:", ""]
        lines += [f"- {words.printed(verdict)}" + (f" ({why})" if why else "") + ": "
                  + ", ".join(f"`{name}`" for name in names)
                  for (verdict, why), names in list(unmeasured.items())[:MOST_UNMEASURED]]
        if len(unmeasured) > MOST_UNMEASURED:
            lines.append(f"- and {len(unmeasured) - MOST_UNMEASURED} more reasons, in the table of every verdict below")
        lines.append("")
    elif rows:
        lines += ["Not measured or skipped: none.", ""]
    if report.get("machine"):
        workers = f"; workers on {report['cpu_affinity']}" if report.get("cpu_affinity") else ""
        lines += [f"Machine: {report['machine']}{workers}.", ""]
    else:
        lines += ["Machine and CPU affinity: not recorded in this report.", ""]
    if report.get("command"):
        lines += [f"Replay it locally: `{report['command']}`", ""]
    else:
        lines += [f"Replay it locally: the command is not recorded in this report; its seed was {report['seed']}.", ""]
    if rows:
        lines += [f"<details><summary>Every verdict ({len(rows)} benchmarks)</summary>", ""]
        lines += markdown(["benchmark", "verdict", "ratio", "interval", "passes", "steps × calls", "why"], [
            [f"`{row['benchmark']}`", words.printed(row["verdict"]), *ratio_cells(row),
             f"{row['steps']} × {row.get('calls', 1)}" if row.get("steps") else "—", row.get("why") or ""]
            for row in rows])
        lines += ["</details>"]
    return "\n".join(lines).rstrip("\n") + "\n"


def comparison_summary(status: int, failures: list[str], unmeasured: list[str], comparisons: list,
                       answer: list[str]) -> str:
    """A comparison of saved runs' summary: its ending and exit status first, with why it failed and why what was
    asked was not measured (perf/report/compare.py, run_ending: a run may fail and leave rows unmeasured), each
    comparison's verdict table with its lines (a Comparison), then this run's answer as the terminal prints it."""
    # The status is pytest's, which may be one of its own (an interruption, an internal error): said as it is.
    word = {PASSED: words.PASSED, FAILED: words.FAILED, NOT_MEASURED: words.NOT_MEASURED}.get(status, "ended")
    said = "; ".join(failures + [why if status == NOT_MEASURED else f"{words.NOT_MEASURED}: {why}"
                                 for why in unmeasured])
    exit_said = COMPARISON_EXITS.get(status, f"exit {status}: pytest's own status")
    lines = [f"**--benchmark-compare {word}**" + (f": {said}" if said else "") + f" ({exit_said})", ""]
    for found in comparisons:
        first, past = found.table_lines or (len(found.lines), len(found.lines))
        before, after = found.lines[:first], found.lines[past:]
        lines += [line for note in before for line in (note, "")]  # a paragraph each, as the terminal's lines
        if found.results:
            lines += markdown(["benchmark", "then", "now", "change (interval)", "verdict"], [
                [f"`{result.key.name}`", f"{result.then:.4g}", f"{result.now:.4g}",
                 f"{result.change.value:.3f} ({result.change.low:.3f} to {result.change.high:.3f})",
                 words.printed(result.verdict) + (" (the gate's)" if result.by_gate else "")]
                for result in found.results])
        lines += [line for note in after for line in (note, "")]
    if answer:
        lines += ["<details><summary>The answer for this run, as the terminal prints it</summary>", "", "```text"]
        lines += answer + ["```", "", "</details>"]
    return "\n".join(lines).rstrip("\n") + "\n"
