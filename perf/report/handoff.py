"""What running free costs over one CPU, as the hand-off study measured it (python -m perf.research.handoff writes
handoff.json), read for the report's "where a step goes" and the answer, with what its controls say it is."""

import json
from dataclasses import dataclass
from pathlib import Path

from perf.judge.statistics import Interval, overlapping
from perf.measure.cpus import FREE, recorded_affinity
from perf.report.compare import ENVIRONMENT
from perf.report.tables import number, with_interval

FILE = "handoff.json"
KEYS = ("folder", "date", "cpu", "cpus", "free_threads", "confidence", "sizes")  # folder: where the study wrote it
FIGURES = ("gap_us", "free_us", "one_cpu_us", "pools_us", "crossing_us")  # each [value, low, high, coverage]
# How the workers ran, in a run's machine_info.fssgd and in a study's handoff.json alike, read as a comparison of runs
# reads them: absent, as before either was recorded (every selected framework in each worker; glibc's defaults).
WORKERS = tuple((name, value) for name, value in ENVIRONMENT if name in ("worker processes", "malloc"))


class HandoffError(Exception):
    """The study's figures cannot be read: the message says why."""


def more(interval: Interval) -> str:
    """'12.3 µs (10.1 to 14.5) more' or '... less', by the sign of its value."""
    if interval.value < 0:
        interval = Interval(-interval.value, -interval.high, -interval.low, interval.coverage)
        return f"{with_interval(interval)} µs less"
    return f"{with_interval(interval)} µs more"


def attribution(gap: Interval | None, pools: Interval | None, crossing: Interval | None, free_threads: int) -> str:
    """What the controls say running free costs, in words from their intervals: a figure only where its interval
    excludes zero; '' where the study has no gap to explain."""
    if gap is None or pools is None or crossing is None:
        return ""
    zero = Interval(0.0, 0.0, 0.0)
    if overlapping(gap, zero):
        return f"free and on one CPU a step costs the same within the interval ({with_interval(gap)} µs)."
    said = [f"free costs {more(gap)} a step than one CPU (TensorFlow's default threads each)."]
    pooled, crossed = not overlapping(pools, zero), not overlapping(crossing, zero)
    count = f"{free_threads} threads"
    if pooled:
        share = "most of the gap" if pools.value > gap.value / 2 else "part of the gap"
        said.append(f"One CPU with free's {count} costs {more(pools)} than with its default: the thread pools, "
                    f"{share}.")
    if crossed:
        # One study's interval off zero is one sample of one instance: a second run has failed to tell such a
        # remainder from zero (docs/results/handoff/README.md), so it is said as possible, not as found.
        said.append(f"With {count} each, free still costs {more(crossing)} than one CPU: perhaps the threads' "
                    "crossing between CPUs; one study does not settle it.")
    if pooled and not crossed:
        said.append(f"With {count} each, free and one CPU cost the same within the interval: TensorFlow's larger "
                    "thread pools, not a crossing between CPUs.")
    elif crossed and not pooled:
        said.append(f"One CPU with {count} costs the same as with its default within the interval: not the pools' "
                    "size.")
    elif not pooled and not crossed:
        said.append("Neither control alone differs from zero within its interval: the study cannot say which it is.")
    return " ".join(said)


@dataclass(frozen=True)
class Handoff:
    study: dict  # handoff.json as written; its folder is where the study wrote it

    def at(self, n: int) -> dict[str, Interval] | None:
        """{figure: µs with its interval} of a tf1_feed_dict step at n; None where the study did not time n."""
        size = self.study["sizes"].get(str(n))
        return {key.removesuffix("_us"): Interval(*size[key]) for key in FIGURES} if size else None

    @property
    def source(self) -> str:
        return f"{self.study['folder']}, {self.study['date']}, {self.study['cpu']}"

    def said(self, figures: dict[str, Interval]) -> str:
        return attribution(figures["gap"], figures["pools"], figures["crossing"], self.study["free_threads"])

    def described(self, figures: dict[str, Interval]) -> str:
        """What the free − one CPU row is, for the note under the table."""
        return (f"Free − one CPU is the hand-off study's, not this run's: a free tf1_feed_dict step less one on one "
                f"CPU, timed in turn in the same passes, with its {self.study['confidence']:.0%} Student t interval "
                f"over them; its share is of the study's own free step. Its controls: {self.said(figures)}")


def read_handoff(folder: Path) -> Handoff:
    """The study saved in folder; HandoffError naming what is missing."""
    path = folder / FILE
    try:
        study = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise HandoffError(f"no {FILE} in {folder}: make one with "
                           f"`python -m perf.research.handoff --out {folder}`") from None
    except (OSError, ValueError) as error:
        raise HandoffError(f"{path}: {getattr(error, 'strerror', None) or error}") from None
    if not (isinstance(study, dict) and all(key in study for key in KEYS) and isinstance(study["sizes"], dict)
            and all(isinstance(size, dict) and all(well_formed(size.get(key)) for key in FIGURES)
                    for size in study["sizes"].values())):
        raise HandoffError(f"{path} is not the hand-off study's {FILE} (it needs {', '.join(KEYS)}, and "
                           f"{', '.join(FIGURES)} for each size; a study before its thread controls has no "
                           f"pools_us: run it again)")
    return Handoff(study)


def well_formed(figure) -> bool:
    return isinstance(figure, list) and len(figure) == 4 and all(isinstance(value, (int, float)) for value in figure)


def unlike(handoff: Handoff, fssgd: dict) -> str | None:
    """Why the study does not describe this run's step, or None where it does: the study ran free with TensorFlow's
    default threads on one CPU model and count, in workers of its own kind."""
    if recorded_affinity(fssgd) != FREE:
        return f"its workers ran on {recorded_affinity(fssgd)}, not free"
    if fssgd.get("threads") != 0:
        return f"its TensorFlow threads were {fssgd.get('threads_setting') or fssgd.get('threads')}, not TF default"
    if fssgd.get("cpu_model") != handoff.study["cpu"]:
        return f"its CPU is {fssgd.get('cpu_model')}, the study's {handoff.study['cpu']}"
    if fssgd.get("cpus_available") != handoff.study["cpus"]:
        return f"it ran free on {fssgd.get('cpus_available')} CPUs, the study on {handoff.study['cpus']}"
    for name, value in WORKERS:
        if value(fssgd) != value(handoff.study):
            return (f"its {name}: {value(fssgd)}, the study's: {value(handoff.study)}; what a step costs moves with "
                    f"how the workers ran")
    return None


def applies(handoff: Handoff | None, fssgd: dict, device: str, n: int) -> dict[str, Interval] | None:
    """The study's figures at n where they describe this run's step (unlike says when not), on the CPU at a size the
    study timed; else None."""
    if handoff is None or device != "cpu" or unlike(handoff, fssgd):
        return None
    return handoff.at(n)


def decomposition_row(handoff: Handoff, figures: dict[str, Interval]) -> list[str]:
    """The row the report's "where a step goes" adds: free − one CPU, its share of the study's own free step."""
    gap, free = figures["gap"], figures["free"]
    return ["(within the parts above: free − one CPU)", with_interval(gap), f"{gap.value / free.value:.0%}",
            f"tf1_feed_dict free − on one CPU, in the same passes ({handoff.source})"]


def sentence(handoff: Handoff, figures: dict[str, Interval]) -> str:
    """Free − one CPU in the answer's words, with what the study's controls say it is."""
    free, one_cpu = figures["free"], figures["one_cpu"]
    return (f"Free against one CPU ({number(free.value)} and {number(one_cpu.value)} µs a step in the hand-off study: "
            f"{handoff.source}): {handoff.said(figures)}")
