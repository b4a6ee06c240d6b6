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
from perf.storage import SAVED_RUNS, RunError, environment_folders, newest_run, storage_folders


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
                             f"(default: the newest run in each environment's folder in {SAVED_RUNS}/, each reported "
                             "apart, in --out/FOLDER/)")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="output folder (default: reports/)")
    parser.add_argument("--no-plots", action="store_true",
                        help=f"tables only, no PNG (plots need matplotlib: {plots.INSTALL_HINT})")
    parser.add_argument("--history", action="store_true",
                        help="the RUN arguments are folders (pytest-benchmark storage, CI artifacts): every saved run "
                             "in them as series, one per environment, in commit order, with change points "
                             f"(history.md in --out; default: {SAVED_RUNS}/; needs the history extra: "
                             f"{history.INSTALL_HINT})")
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
    if args.answer_into and not args.runs:
        parser.error("--answer-into needs the RUN to take the answer from")
    if args.history:
        try:
            import asv.step_detect  # noqa: F401  (optional: the history extra)
        except ImportError:
            return stop(f"--history needs asv's step detection, which is not installed: {history.INSTALL_HINT}")
    if not args.no_plots:
        try:
            import matplotlib  # noqa: F401  (optional: the `plot` extra)
        except ImportError:  # an error: a report rewritten without its plots (the committed one) would pass as finished
            return stop(f"plots need matplotlib, which is not installed: {plots.INSTALL_HINT}, or --no-plots for "
                        "tables only")
    if args.history:
        return history_report(args.runs or [Path(SAVED_RUNS)], args.out, args.no_plots)
    if args.runs:
        return report(args.runs, args.out, args.no_plots, args.handoff, args.answer_into)
    folders = environment_folders()
    if not folders:
        return stop(f"no saved run in {SAVED_RUNS}/: save one with `pytest perf/ --benchmark-autosave`, or name the "
                    f"runs to report")
    # Each environment apart: a free and a pinned run, or two TensorFlow builds, side by side would read as one
    # comparison, which runs not like with like never are.
    return max(report([folder], args.out / folder.name, args.no_plots, args.handoff, None) for folder in folders)


def report(paths: list[Path], out: Path, no_plots: bool, handoff_folder: Path | None, answer_into: Path | None) -> int:
    """report.md (and its plots) in out for the runs at these paths, side by side; the answer into answer_into."""
    runs = loaded(paths)
    if not runs:
        return stop("no usable pytest-benchmark result among the given paths")
    for storage in storage_folders(paths, [run.path for run in runs]):
        if out.resolve().is_relative_to(storage):
            return stop(f"--out {out} is inside the results folder {storage}; choose another")

    try:
        handoff = handoff_folder and read_handoff(handoff_folder)
    except HandoffError as error:
        return stop(f"--handoff {handoff_folder}: {error}")
    models = [analysis.fit_models(run.rows) for run in runs]
    drawn = {}
    try:
        out.mkdir(parents=True, exist_ok=True)
        if not no_plots:
            for letter, run, run_models in zip(LETTERS, runs, models):
                prefix = f"{letter}-" if len(runs) > 1 else ""
                drawn[letter] = plots.per_step_plots(run, run_models, out, prefix) if run.rows else []
                drawn[letter] += plots.sweep_plot(run.studies.get(studies.SWEEP, []), out, prefix)
        written = out / "report.md"
        written.write_text(render(runs, models, drawn, handoff), encoding="utf-8")
    except OSError as error:
        return stop(f"cannot write the report to {out}: {error.strerror or error}")

    if answer_into:
        try:
            write_answer(answer_into, runs[0], handoff)
        except (AnswerError, OSError) as error:
            return stop(f"--answer-into {answer_into}: {getattr(error, 'strerror', None) or error}")
        print(f"answer: {answer_into}")
    for run in runs:
        for note in run.notes:
            print(f"note: {run.path}: {note}", file=sys.stderr)
        if handoff and (why := unlike(handoff, run.fssgd)):
            print(f"note: {run.path}: no free − one CPU from {handoff_folder}: {why}", file=sys.stderr)
    print(f"report: {written}")
    for _, path in (plot for run_plots in drawn.values() for plot in run_plots):
        print(f"plot: {path}")
    return 0


def history_report(folders: list[Path], out: Path, no_plots: bool) -> int:
    """history.md (and its plots) for every saved run in the folders; nothing in them is modified."""
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
