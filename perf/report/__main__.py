"""python -m perf.report: pytest-benchmark JSON runs turned into a Markdown report with tables, the model t = α + β·n,
crossovers and plots; with --history, every saved run in the folders given as series over time, with change points."""

import argparse
import sys
from pathlib import Path

from perf.report import analysis, history, plots, studies
from perf.report.answer import AnswerError, write_answer
from perf.report.handoff import HandoffError, read_handoff, unlike
from perf.report.markdown import LETTERS, render
from perf.report.runs import load_run
from perf.storage import RunError, newest_run, runs_folder, storage_folders


def loaded(paths: list[Path]) -> list:
    """The runs that load, a folder as its newest JSON; each one that does not is named on stderr."""
    runs = []
    for given in paths:
        shown = given
        try:
            path = newest_run(given) if given.is_dir() else given
            shown = given if path == given else f"{path} (newest in {given})"
            runs.append(load_run(path))
        except RunError as error:
            print(f"warning: {shown}: {error}; skipped", file=sys.stderr)
    return runs


def stop(message: str) -> int:
    """Says why on stderr; the exit status of a report that cannot be made."""
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.report", description=__doc__)
    parser.add_argument("runs", nargs="*", type=Path, metavar="RUN",
                        help="pytest-benchmark JSON (saved run or --benchmark-json); a folder means its newest JSON "
                             f"(default: the newest run saved in {runs_folder()})")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="output folder (default: reports/)")
    parser.add_argument("--no-plots", action="store_true", help="tables only, no PNG")
    parser.add_argument("--history", action="store_true",
                        help="the RUN arguments are folders (pytest-benchmark storage, CI artifacts): every saved run "
                             "in them as series, one per environment, in commit order, with change points "
                             "(history.md in --out; needs the history extra)")
    parser.add_argument("--answer-into", type=Path, metavar="FILE",
                        help="also write the answer from the first run into FILE, between its answer markers: its table "
                             "and what it says in words (the README: python -m perf.report docs/results/full/full.json "
                             "--handoff docs/results/handoff --answer-into README.md)")
    parser.add_argument("--handoff", type=Path, metavar="FOLDER",
                        help="the hand-off study's folder (python -m perf.research.handoff --out FOLDER): its hand-off "
                             "between CPUs joins a free run's \"where a step goes\" and the answer")
    args = parser.parse_args(argv)
    if args.history and (args.handoff or args.answer_into):
        parser.error("--handoff and --answer-into are for one run's report, not --history")
    if args.history:
        return history_report(args.runs or [runs_folder()], args.out, args.no_plots)
    if not args.runs:
        folder = runs_folder()
        if not folder.is_dir():
            return stop(f"no saved run of this environment in {folder}: save one with "
                        "`pytest perf/ --benchmark-autosave`, or name the runs to report")
        args.runs = [folder]
    runs = loaded(args.runs)
    if not runs:
        return stop("no usable pytest-benchmark result among the given paths")
    for storage in storage_folders(args.runs, [run.path for run in runs]):
        if args.out.resolve().is_relative_to(storage):
            return stop(f"--out {args.out} is inside the results folder {storage}; choose another")

    try:
        handoff = args.handoff and read_handoff(args.handoff)
    except HandoffError as error:
        return stop(f"--handoff {args.handoff}: {error}")
    models = [analysis.fit_models(run.rows) for run in runs]
    drawn, plot_note = {}, None
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        if not args.no_plots:
            try:
                import matplotlib  # noqa: F401  (optional: the `plot` extra)
            except ImportError:
                plot_note = f"Plots skipped: matplotlib is not installed (`{plots.INSTALL_HINT}`)."
            else:
                for letter, run, run_models in zip(LETTERS, runs, models):
                    prefix = f"{letter}-" if len(runs) > 1 else ""
                    drawn[letter] = plots.per_step_plots(run, run_models, args.out, prefix) if run.rows else []
                    drawn[letter] += plots.sweep_plot(run.studies.get(studies.SWEEP, []), args.out, prefix)
        report = args.out / "report.md"
        report.write_text(render(runs, models, drawn, plot_note, handoff), encoding="utf-8")
    except OSError as error:
        return stop(f"cannot write the report to {args.out}: {error.strerror or error}")

    if args.answer_into:
        try:
            write_answer(args.answer_into, runs[0], handoff)
        except (AnswerError, OSError) as error:
            return stop(f"--answer-into {args.answer_into}: {getattr(error, 'strerror', None) or error}")
        print(f"answer: {args.answer_into}")
    for run in runs:
        for note in run.notes:
            print(f"note: {run.path}: {note}", file=sys.stderr)
        if handoff and (why := unlike(handoff, run.fssgd)):
            print(f"note: {run.path}: no free − one CPU from {args.handoff}: {why}", file=sys.stderr)
    print(f"report: {report}")
    for _, path in (plot for run_plots in drawn.values() for plot in run_plots):
        print(f"plot: {path}")
    if plot_note:
        print(plot_note)
    return 0


def history_report(folders: list[Path], out: Path, no_plots: bool) -> int:
    """history.md (and its plots) for every saved run in the folders; nothing in them is modified."""
    try:
        import asv.step_detect  # noqa: F401  (optional: the history extra)
    except ImportError:
        return stop(f"--history needs asv's step detection: {history.INSTALL_HINT}")
    try:
        runs, notes = history.runs_in(folders)
    except history.HistoryError as error:
        return stop(str(error))
    if any(out.resolve().is_relative_to(folder.resolve()) for folder in folders):
        return stop(f"--out {out} is inside a folder of runs; choose another")
    found = history.history(runs)
    drawn = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        if not no_plots:
            try:
                import matplotlib  # noqa: F401  (optional: the `plot` extra)
            except ImportError:
                print(f"note: plots skipped: matplotlib is not installed (`{plots.INSTALL_HINT}`)", file=sys.stderr)
            else:
                drawn = plots.history_plots(found, out)
        page = history.markdown(found) + "".join(f"\n![{caption}]({path.name})\n" for caption, path in drawn)
        (out / "history.md").write_text(page, encoding="utf-8")
    except OSError as error:
        return stop(f"cannot write the history to {out}: {error.strerror or error}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    for series in found:
        if len(series.points) < 2:
            print(f"note: a series of one run, no history to read yet: {series.title}", file=sys.stderr)
    print(f"history: {out / 'history.md'} ({len(runs)} runs, {len(found)} series)")
    for _, path in drawn:
        print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
