"""Did it get slower over time? Saved runs as series with change points (why ratios, why asv: docs/usage.md)."""

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from perf.judge.rules import CHANGE_CONFIDENCE
from perf.judge.statistics import Interval, shift_interval
from perf.measure import TIMING_REFERENCE, Key
from perf.report.compare import ENVIRONMENT, STAND_INS
from perf.report.runs import Run, load_run
from perf.report.tables import markdown as table, number, with_interval
from perf.storage import RunError

INSTALL_HINT = "pip install -e '.[history]'"


@dataclass(frozen=True)
class Point:
    """One run of a series."""

    run: Run
    commit: str  # the commit's id, shortened, with + where the tree was dirty
    when: str  # the commit's time, else the run's

    @property
    def name(self) -> str:
        return self.run.path.name


@dataclass(frozen=True)
class Change:
    """Where a benchmark's level moved: between two runs of the series, by a factor with its interval."""

    after: Point  # the first run at the new level
    factor: Interval  # new level / old level, from every trial of the runs on each side


@dataclass(frozen=True)
class Trend:
    key: Key
    ratios: list  # per point of the series: × numpy_loop with its interval, or None where the run lacks it
    changes: list[Change]
    latest: float  # the latest level, × numpy_loop
    best: float  # the lowest level of the series


@dataclass
class Series:
    environment: tuple[tuple[str, str], ...]
    points: list[Point] = field(default_factory=list)
    trends: list[Trend] = field(default_factory=list)

    @property
    def title(self) -> str:
        return ", ".join(f"{name} {value}" for name, value in self.environment)


class HistoryError(Exception):
    """No history can be built: the message says why."""


def runs_in(folders: list[Path]) -> tuple[list[Run], list[str]]:
    """Every saved run below the folders (pytest-benchmark storage or a folder of CI artifacts), and a note for each
    file left out. Nothing is modified."""
    runs, notes = [], []
    for folder in folders:
        if not folder.is_dir():
            raise HistoryError(f"{folder}: not a folder")
        for path in sorted(folder.rglob("*.json")):
            try:
                run = load_run(path)
            except RunError as error:
                notes.append(f"{path}: {error}; skipped")
                continue
            if not run.fssgd:
                notes.append(f"{path}: not a run of this suite (no machine_info.fssgd); skipped")
                continue
            runs.append(run)
    if not runs:
        raise HistoryError(f"no saved run of this suite in {', '.join(map(str, folders))}")
    return runs, notes


def point(run: Run) -> Point:
    commit = run.document.get("commit_info") or {}
    label = (commit.get("id") or "?")[:7] + ("+" if commit.get("dirty") else "")
    return Point(run, label, commit.get("time") or run.document.get("datetime") or "")


def series_of(runs: list[Run]) -> list[Series]:
    """The runs split by environment, each series in commit order (the run's own time breaking ties)."""
    found = {}
    for run in runs:
        environment = tuple((name, str(value(run.fssgd))) for name, value in ENVIRONMENT + STAND_INS)
        found.setdefault(environment, Series(environment)).points.append(point(run))
    for series in found.values():
        series.points.sort(key=lambda entry: (entry.when, entry.run.document.get("datetime") or "", entry.name))
    return list(found.values())


def trend(key: Key, points: list[Point]) -> Trend:
    """The benchmark's levels over the series, the steps between them, and its latest level against the best."""
    from asv.step_detect import detect_steps  # optional: the history extra

    ratios = [entry.run.rows[key].ratio if key in entry.run.rows else None for entry in points]
    logs = [math.log(ratio.value) if ratio else None for ratio in ratios]
    # A run's weight is its precision: the inverse of its interval's width in log units.
    weights = [1 / max(math.log(ratio.high / ratio.low), 1e-6) if ratio else None for ratio in ratios]
    steps = detect_steps(logs, weights)
    changes = []
    for before, after in zip(steps, steps[1:]):
        # The run is the unit: a run's trials share whatever state it ran in, so pooling them would make the
        # interval as narrow as one run's and miss the variation between runs.
        then, now = ([value for value in logs[step[0]:step[1]] if value is not None] for step in (before, after))
        shift = shift_interval(then, now, CHANGE_CONFIDENCE)  # as sure of a step as the comparison of two runs
        changes.append(Change(points[after[0]], Interval(*(math.exp(value) for value in shift[:3]), shift.coverage)))
    levels = [math.exp(step[2]) for step in steps]
    return Trend(key, ratios, changes, levels[-1] if levels else math.nan, min(levels, default=math.nan))


def history(runs: list[Run]) -> list[Series]:
    """Every series with its benchmarks' trends; a series of one run has none (nothing to compare)."""
    found = series_of(runs)
    for series in found:
        if len(series.points) < 2:
            continue
        keys = sorted({key for entry in series.points for key in entry.run.rows
                       if (key.solver, key.device) != TIMING_REFERENCE})
        series.trends = [trend(key, series.points) for key in keys]
    return found


def markdown(found: list[Series]) -> str:
    """The history as Markdown: per series its runs, then per benchmark the latest and best levels and every change."""
    lines = ["# History of saved runs", "",
             "Per series (runs made in one environment), in commit order. Each benchmark's level is its × "
             f"{TIMING_REFERENCE[0]}; a change point is where asv's step detection puts a step, its factor the "
             "Hodges-Lehmann shift between the runs on each side, with its distribution-free interval over those runs "
             "(with few runs, their whole range).", ""]
    for series in found:
        lines += [f"## {series.title}", ""]
        lines += table(["#", "run", "commit", "commit time"],
                       [[index + 1, f"`{entry.name}`", entry.commit, entry.when] for index, entry in
                        enumerate(series.points)])
        if len(series.points) < 2:
            lines += ["One run: no history to read yet.", ""]
            continue
        rows = []
        for item in series.trends:
            changes = "; ".join(f"at run {series.points.index(change.after) + 1} ({change.after.commit}): "
                                f"×{with_interval(change.factor)}" for change in item.changes) or "none"
            median = statistics.median(ratio.value for ratio in item.ratios if ratio)
            rows.append([f"`{item.key.name}`", number(median), number(item.latest), number(item.best),
                         "best" if item.latest <= item.best * (1 + 1e-9) else f"{item.latest / item.best:.2f}x best",
                         changes])
        lines += table(["benchmark", "median level", "latest level", "best level", "latest vs best",
                        "change points"], rows)
    return "\n".join(lines)
