"""The answer printed after every timed run: µs per step, × numpy_loop with its interval, where a tf1_feed_dict step goes."""

import copy

from perf import measure, report
from perf.estimators import CONFIDENCE
from perf.report_format import number


def summary_lines(benchmarks: list[dict], setting: str) -> list[str]:
    """Plain-text lines for the terminal from this run's benchmarks (pytest-benchmark's dicts); [] when none was timed.

    setting: what else the reader needs to read the figures, e.g. "TensorFlow 2.21.0, threads: TF default".
    """
    benchmarks = copy.deepcopy(benchmarks)  # the anchoring writes into extra_info; this run's own stays as it is
    measure.anchor_to_reference(benchmarks)
    timings, _ = report.timings_of(benchmarks)
    if not timings:
        return []
    lines = [f"Per step, {setting}. × {report.REFERENCE_SOLVER}: the median of the trials' paired ratios, "
             f"with its {CONFIDENCE:.0%} interval."]
    for device in sorted({device for _, device, _ in timings}):
        lines += [""] + device_table(timings, device)
        lines += fewer_steps(timings, device)
        lines += decomposition(timings, device)
    return lines


def fewer_steps(timings: dict, device: str) -> list[str]:
    """What the solvers that ran fewer steps than the profile asked (a round budget) would take for them all."""
    lines = []
    for (solver, d, n), timing in sorted(timings.items()):
        if d == device and (asked := timing.get("steps_reduced_from")):
            scaled_s = timing["per_iteration_us"] * asked * 1e-6
            lines.append(f"  {solver} at n = {n:,} ran {timing['iterations']:,} steps a round, not {asked:,}: "
                         f"{asked:,} steps at its µs/step would take {number(scaled_s)} s")
    return ["", "Fewer steps, scaled:"] + lines if lines else []


def device_table(timings: dict, device: str) -> list[str]:
    """One row per solver, and for each size its µs per step and its ratio to the reference."""
    sizes = sorted({n for _, d, n in timings if d == device})
    names = {timing["device_name"] for (_, d, _), timing in timings.items() if d == device and timing["device_name"]}
    # Sorted by the size the question is about, so the table reads from the fastest to the slowest there.
    order_n = question_size(timings, device)
    solvers = sorted({s for s, d, _ in timings if d == device},
                     key=lambda s: timings.get((s, device, order_n), {}).get("per_iteration_us", float("inf")))
    title = device + (f" ({names.pop()})" if len(names) == 1 else "")
    header = [[title] + [cell for n in sizes for cell in (f"n = {n:,}", "")],
              ["solver"] + [column for _ in sizes for column in ("µs/step", f"× {report.REFERENCE_SOLVER}")]]
    rows = []
    for solver in solvers:
        row = [solver]
        for n in sizes:
            timing = timings.get((solver, device, n))
            ratio = report.ratio_to_reference(timings, solver, device, n)
            row += [number(timing["per_iteration_us"]) if timing else "—",
                    "reference" if solver == report.REFERENCE_SOLVER else interval_text(ratio)]
        rows.append(row)
    return aligned(header, rows, numeric=range(1, len(header[0])))


def interval_text(interval) -> str:
    if interval is None:
        return "—"
    if interval.low == interval.high:
        return f"{number(interval.value)}x"
    return f"{number(interval.value)}x ({number(interval.low)}–{number(interval.high)})"


def question_size(timings: dict, device: str) -> int:
    """The size measured on device that is nearest the question's (n = 1,000)."""
    return report.decomposition_n({key: timing for key, timing in timings.items() if key[1] == device})


def decomposition(timings: dict, device: str) -> list[str]:
    n = question_size(timings, device)
    components = report.step_components(timings, device, n)
    whole = report.whole_step(timings, device, n)
    if not (components and whole):
        return []
    whole_us = whole.value
    rows = [[component, f"{number(value.value)} µs",
             f"({number(value.low)} to {number(value.high)})" if value.low != value.high else "",
             f"{value.value / whole_us:.0%}", derivation]
            for component, value, derivation in components]
    return ["", f"Where a tf1_feed_dict step goes ({device}, n = {n:,}, {number(whole_us)} µs):"] + [
        "  " + line for line in aligned([], rows, numeric=(1, 3))]


def aligned(header_rows: list[list[str]], rows: list[list[str]], numeric) -> list[str]:
    """Columns padded to their widest cell: the numeric ones right-aligned, the others left-aligned."""
    every = header_rows + rows
    widths = [max(len(row[column]) for row in every) for column in range(len(every[0]))]
    return ["  ".join(cell.rjust(width) if column in numeric else cell.ljust(width)
                      for column, (cell, width) in enumerate(zip(row, widths))).rstrip()
            for row in every]
