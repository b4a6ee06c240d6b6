"""The tables the report and the terminal summary both print: cells built once, then set as Markdown or as text."""

import math

from perf.judge.statistics import Interval
from perf.report import analysis


def number(value) -> str:
    """Counts as they are; measurements to three significant digits; a dash when there is nothing."""
    if value is None:
        return "—"
    if isinstance(value, int):
        return f"{value:,}"
    value = float(f"{value:.3g}")  # rounded first, so 99.99999 reads 100, not 100.0
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.{2 - math.floor(math.log10(abs(value)))}f}"


def with_interval(interval: Interval | None) -> str:
    """'20.4 (19.6 to 21.2)'; the value alone where the interval is exact."""
    if interval is None:
        return "—"
    if interval.low == interval.high:
        return number(interval.value)
    return f"{number(interval.value)} ({number(interval.low)} to {number(interval.high)})"


def markdown(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows] + [""]


def aligned(header_rows: list[list[str]], rows: list[list[str]], numeric) -> list[str]:
    """Columns padded to their widest cell: the numeric ones right-aligned, the others left-aligned."""
    every = header_rows + rows
    widths = [max(len(row[column]) for row in every) for column in range(len(every[0]))]
    return ["  ".join(cell.rjust(width) if column in numeric else cell.ljust(width)
                      for column, (cell, width) in enumerate(zip(row, widths))).rstrip()
            for row in every]


def coverage_wording(coverage: float, trials: int | None = None) -> str:
    """'93.8%, the range of 5 trials' or '97.9%': how an interval's coverage reads in a table's caption."""
    if coverage >= 1:
        return "exact"
    percent = f"{coverage:.1%}".replace(".0%", "%")
    range_of = trials is not None and abs(coverage - (1 - 2 * 0.5 ** trials)) < 1e-12
    return f"{percent}, the range of {trials} trials" if range_of else percent


def interval_caption(rows) -> str:
    """How the ratios' intervals of these rows cover, in words: '93.8%, the range of 5 trials'."""
    wordings = sorted({coverage_wording(row.ratio.coverage, row.trials) for row in rows
                       if row.ratio and not row.is_timing_reference})
    return "; ".join(wordings) or "none"


DECOMPOSITION_HEADER = ["part", "µs / step", "share", "derived as"]


def decomposition_cells(rows, device: str, n: int) -> tuple[Interval, list[list[str]]] | None:
    """The whole tf1_feed_dict step and one row of cells per part, its remainder and the parts measured the other way
    round; None where the run lacks the solvers."""
    parts, whole = analysis.step_parts(rows, device, n), analysis.whole_step(rows, device, n)
    if not (parts and whole):
        return None
    other_way = [(f"({part})", value, derivation)
                 for part, value, derivation in analysis.step_parts(rows, device, n, analysis.OTHER_WAY_ROUND)]
    return whole, [[part, with_interval(value), f"{value.value / whole.value:.0%}", derivation]
                   for part, value, derivation in parts + other_way]


DECOMPOSITION_NOTE = (f"Each part is a difference of two solvers' µs per step (paired ratios times "
                      f"{analysis.REFERENCE_SOLVER}'s µs per step), taken in each worker process between the two "
                      "trials it ran: the mean over the processes with its Student t interval (where fewer "
                      "than two processes ran both: the two intervals end to end, which cover with at least the "
                      "product of their coverages). The parts do not add up to the whole: what the loss fetch "
                      "costs depends on whether the data is fed, so the remainder is exactly the loss fetch on constant data less the "
                      "loss fetch on fed data; the two rows in brackets measure those two parts the other way round.")
