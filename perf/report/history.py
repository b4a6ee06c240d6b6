"""Did it get slower over time? Saved runs as series with change points (why ratios, why asv: docs/usage.md)."""

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from perf.judge.outcome import DEFAULT_THRESHOLD
from perf.judge.rules import change_verdict
from perf.judge.statistics import Interval
from perf.measure import TIMING_REFERENCE, Key
from perf.report.compare import ENVIRONMENT, STAND_INS
from perf.report.runs import Run, load_run
from perf.report.tables import markdown as table, number, with_interval
from perf.storage import RunError

INSTALL_HINT = "pip install -e '.[history]'"
# A step needs this many runs (with a value) on each side, within the levels next to it, to be named a change. With one
# or two a side, one odd run (made under other load, or on another core) makes a step as a commit would; with three, it
# widens the step's interval (at three a side the whole range of the differences) rather than making the step.
MIN_RUNS_A_SIDE = 3


@dataclass(frozen=True)
class Point:
    """One run of a series."""

    run: Run
    commit: str  # the commit's id, shortened, with + where the tree was dirty
    when: str  # the commit's time, else the run's


@dataclass(frozen=True)
class Change:
    """Where a benchmark's level moved: between two runs of the series, by a factor with its interval."""

    after: Point  # the first run at the new level
    factor: Interval  # new level / old level, over the runs on each side


@dataclass(frozen=True)
class TooFew:
    """A step that asv's detection puts where the runs are too few to tell it from an odd run: named, not a change."""

    after: Point  # the first run after the step
    runs: tuple[int, int]  # the runs with a value before and after it, within the levels next to it; with
    # MIN_RUNS_A_SIDE a side, each side's runs agreed exactly (as copies of one run would): its interval a single value


@dataclass(frozen=True)
class Trend:
    key: Key
    ratios: list  # per point of the series: × numpy_loop with its interval, or None where the run lacks it
    changes: list[Change]
    latest: float  # the latest level, × numpy_loop
    best: float  # the lowest level of the series
    too_few: list[TooFew] = field(default_factory=list)  # steps not named changes; their sides count as one level


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


def history(runs: list[Run]) -> list[Series]:
    """The runs split by environment, each series in commit order (the run's own time breaking ties) with its
    benchmarks' trends; a series of one run has none (nothing to compare)."""
    found = {}
    for run in runs:
        environment = tuple((name, str(value(run.fssgd))) for name, value in ENVIRONMENT + STAND_INS)
        commit = run.document.get("commit_info") or {}
        label = (commit.get("id") or "?")[:7] + ("+" if commit.get("dirty") else "")
        found.setdefault(environment, Series(environment)).points.append(
            Point(run, label, commit.get("time") or run.document.get("datetime") or ""))
    for series in found.values():
        series.points.sort(key=lambda entry: (entry.when, entry.run.document.get("datetime") or "", entry.run.path.name))
        if len(series.points) > 1:
            keys = {key for entry in series.points for key in entry.run.rows}
            series.trends = [trend(key, series.points) for key in sorted(keys)
                             if (key.solver, key.device) != TIMING_REFERENCE]
    return list(found.values())


def trend(key: Key, points: list[Point]) -> Trend:
    """The benchmark's levels over the series, the steps between them, and its latest level against the best.

    A step of asv's fit is a change only with MIN_RUNS_A_SIDE runs on each side and an interval that is not a single
    value; else it is merged away, the smallest such step first, and the largest merged into each level is named as
    too few runs to tell. The run is the unit: a run's trials share whatever state it ran in, so pooling them would
    make the interval as narrow as one run's and miss the variation between runs."""
    from asv.step_detect import detect_steps, weighted_median  # optional: the history extra

    ratios = [entry.run.rows[key].ratio if key in entry.run.rows else None for entry in points]
    logs = [math.log(ratio.value) if ratio else None for ratio in ratios]
    # A run's weight is its precision: the inverse of its interval's width in log units.
    weights = [1 / max(math.log(ratio.high / ratio.low), 1e-6) if ratio else None for ratio in ratios]

    def level(runs: list[int]) -> float:  # in log units, as asv fits a step's level
        return weighted_median([logs[index] for index in runs], [weights[index] for index in runs])

    def shift(then: list[int], now: list[int]) -> Interval | None:  # None: too few runs to tell
        if min(len(then), len(now)) < MIN_RUNS_A_SIDE:
            return None
        # As sure of a step as the comparison of two runs: its change, the runs on each side as its trials.
        found, _, _ = change_verdict([ratios[index].value for index in then], [ratios[index].value for index in now],
                                     DEFAULT_THRESHOLD)
        return found if found.low < found.high else None

    # Each level: the runs with a value in asv's steps with no change between them, and the step merged last.
    levels = [([index for index in range(step[0], step[1]) if logs[index] is not None], None)
              for step in detect_steps(logs, weights)]
    while None in (shifts := [shift(then, now) for (then, _), (now, _) in zip(levels, levels[1:])]):
        # The smallest step first: it may be noise within a level, and merging it may give a larger one enough runs.
        index = min((index for index, found in enumerate(shifts) if found is None),
                    key=lambda index: abs(level(levels[index + 1][0]) - level(levels[index][0])))
        (then, _), (now, _) = levels[index:index + 2]
        levels[index:index + 2] = [(then + now, TooFew(points[now[0]], (len(then), len(now))))]
    changes = [Change(points[now[0]], shift) for (now, _), shift in zip(levels[1:], shifts)]
    values = [math.exp(level(runs)) for runs, _ in levels]
    return Trend(key, ratios, changes, values[-1] if values else math.nan, min(values, default=math.nan),
                 [step for _, step in levels if step])


def markdown(found: list[Series]) -> str:
    """The history as Markdown: per series its runs, then per benchmark the latest and best levels and every change."""
    lines = ["# History of saved runs", "",
             "Per series (runs made in one environment), in commit order. Each benchmark's level is its × "
             f"{TIMING_REFERENCE[0]}; a change point is where asv's step detection puts a step, its factor the "
             "Hodges-Lehmann shift between the runs on each side, with its distribution-free interval over those runs "
             f"(with few runs, their whole range). A step with fewer than {MIN_RUNS_A_SIDE} runs on a side is too few "
             "runs to tell from one odd run: it is named as such, not as a change, and its sides count as one level.",
             ""]
    for series in found:
        lines += [f"## {series.title}", ""]
        lines += table(["#", "run", "commit", "commit time"],
                       [[index + 1, f"`{entry.run.path.name}`", entry.commit, entry.when] for index, entry in
                        enumerate(series.points)])
        if len(series.points) < 2:
            lines += ["One run: no history to read yet.", ""]
            continue
        rows = []
        for item in series.trends:
            at = series.points.index
            steps = sorted([(at(change.after), f"at run {at(change.after) + 1} ({change.after.commit}): "
                                               f"×{with_interval(change.factor)}") for change in item.changes]
                           + [(at(step.after), too_few_to_tell(series, step)) for step in item.too_few])
            changes = "; ".join(text for _, text in steps) or "none"
            median = statistics.median(ratio.value for ratio in item.ratios if ratio)
            rows.append([f"`{item.key.name}`", number(median), number(item.latest), number(item.best),
                         "best" if item.latest <= item.best * (1 + 1e-9) else f"{item.latest / item.best:.2f}x best",
                         changes])
        lines += table(["benchmark", "median level", "latest level", "best level", "latest vs best",
                        "change points"], rows)
    return "\n".join(lines)


def too_few_to_tell(series: Series, step: TooFew) -> str:
    at = f"a step at run {series.points.index(step.after) + 1} ({step.after.commit})"
    before, after = step.runs
    if min(before, after) >= MIN_RUNS_A_SIDE:
        return (f"too few runs to tell: the runs on each side of {at} agree exactly, as copies of one run would, "
                "so its interval would be a single value")
    return (f"too few runs to tell: {at} has {before} run{'s' * (before != 1)} before it and {after} after; "
            f"{MIN_RUNS_A_SIDE} a side are needed")
