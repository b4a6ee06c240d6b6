"""The hand-off between CPUs, as the study measured it (python -m perf.research.handoff writes handoff.json), read for
the report's "where a step goes" and the answer: the part of a free tf1_feed_dict step that running on one CPU saves."""

import json
from dataclasses import dataclass
from pathlib import Path

from perf.judge.statistics import Interval
from perf.measure.cpus import FREE, recorded_affinity
from perf.report.tables import number, with_interval

FILE = "handoff.json"
KEYS = ("folder", "date", "cpu", "confidence", "mechanism", "sizes")  # folder: where the study wrote it
FIGURES = ("handoff_us", "free_us", "one_cpu_us")  # each [value, low, high, coverage]


class HandoffError(Exception):
    """The study's figures cannot be read: the message says why."""


@dataclass(frozen=True)
class Handoff:
    study: dict  # handoff.json as written; its folder is where the study wrote it

    def at(self, n: int) -> tuple[Interval, Interval, Interval] | None:
        """(hand-off, free step, one-CPU step) of a tf1_feed_dict step at n, µs with their intervals; None where the
        study did not time that size."""
        size = self.study["sizes"].get(str(n))
        return tuple(Interval(*size[key]) for key in FIGURES) if size else None

    @property
    def source(self) -> str:
        return f"{self.study['folder']}, {self.study['date']}, {self.study['cpu']}"

    @property
    def described(self) -> str:
        """What the hand-off row is, for the note under the table."""
        return (f"The hand-off between CPUs is the study's, not this run's: a free tf1_feed_dict step less one on one "
                f"CPU, timed in turn in the same passes, with its {self.study['confidence']:.0%} Student t interval "
                f"over them; its share is of the study's own free step. {self.study['mechanism']}")


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
                           f"{', '.join(FIGURES)} for each size)")
    return Handoff(study)


def well_formed(figure) -> bool:
    return isinstance(figure, list) and len(figure) == 4 and all(isinstance(value, (int, float)) for value in figure)


def unlike(handoff: Handoff, fssgd: dict) -> str | None:
    """Why the study does not describe this run's step, or None where it does: the study ran free with TensorFlow's
    default threads on one CPU model; a run on one CPU, with other threads or on another CPU has no such part."""
    if recorded_affinity(fssgd) != FREE:
        return f"its workers ran on {recorded_affinity(fssgd)}, not free"
    if fssgd.get("threads") != 0:
        return f"its TensorFlow threads were {fssgd.get('threads_setting') or fssgd.get('threads')}, not TF default"
    if fssgd.get("cpu_model") != handoff.study["cpu"]:
        return f"its CPU is {fssgd.get('cpu_model')}, the study's {handoff.study['cpu']}"
    return None


def applies(handoff: Handoff | None, fssgd: dict, device: str, n: int):
    """The study's figures at n where they describe this run's step (unlike says when not), on the CPU at a size the
    study timed; else None."""
    if handoff is None or device != "cpu" or unlike(handoff, fssgd):
        return None
    return handoff.at(n)


def decomposition_row(handoff: Handoff, figures) -> list[str]:
    """The row the report's "where a step goes" adds: the hand-off, its share of the study's own free step."""
    part, free, _ = figures
    return ["(within the parts above: hand-off between CPUs)", with_interval(part), f"{part.value / free.value:.0%}",
            f"tf1_feed_dict free − on one CPU, in the same passes ({handoff.source})"]


def sentence(handoff: Handoff, figures) -> str:
    """The hand-off in the answer's words; the mechanism is the report's note and the study's."""
    part, free, one_cpu = figures
    return (f"Free to use both CPUs, {part.value / free.value:.0%} of a step is TensorFlow handing work between them: "
            f"{with_interval(part)} µs of {number(free.value)}, where on one CPU the step took {number(one_cpu.value)} "
            f"µs (the hand-off study: {handoff.source}, which says why).")
