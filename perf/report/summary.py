"""The answer printed after every timed run: µs per step, × numpy_loop with its interval, where a tf1_feed_dict step goes."""

from perf.judge import words
from perf.measure.cpus import FREE, recorded_affinity
from perf.measure.profiles import SHRINK_VARIABLE
from perf.measure.progress import listed
from perf.measure.schedule import BUDGET_SPENT, MAX_TRIALS, MOST_TRIALS, OUT_OF_REACH, PRECISE
from perf.measure.trials import SLOWDOWN_VARIABLE
from perf.report import analysis
from perf.report.rows import rows_of
from perf.report.runs import onednn
from perf.report.tables import (DECOMPOSITION_HEADER, aligned, decomposition_cells, interval_caption, number,
                                with_interval)


def setting(fssgd: dict) -> str:
    """What else a reader needs to read this run's figures, from its described environment (machine_info.fssgd):
    profile, versions, threads, CPU affinity, and any slowdown or shrink."""
    tensorflow = (fssgd["tensorflow"] or {}).get("version")
    return ", ".join(filter(None, [
        f"profile {fssgd['profile']}",
        tensorflow and f"TensorFlow {tensorflow}",
        f"NumPy {fssgd['numpy']}",
        f"threads: {fssgd['threads_setting']}",
        recorded_affinity(fssgd),
        tensorflow and f"oneDNN: {onednn(fssgd)}",
        fssgd["slowdown"] and f"{words.SLOWED} by {SLOWDOWN_VARIABLE}={fssgd['slowdown']} (test tooling)",
        fssgd["shrink"] and f"{words.SHRUNK} {fssgd['shrink']:,}x by {SHRINK_VARIABLE} (test tooling: not the profile's figures)",
    ]))


def free_on(fssgd: dict) -> int:
    """The CPUs a free run's workers could use, from its described environment; 0 where they were pinned."""
    return (fssgd.get("cpus_available") or 0) if recorded_affinity(fssgd) == FREE else 0


def summary_lines(benchmarks: list[dict], setting: str, free_cpus: int = 0) -> list[str]:
    """Plain-text lines for the terminal from this run's benchmarks (pytest-benchmark's dicts); [] when none was timed.
    free_cpus: free_on() of the run, read from its environment rather than its benchmarks' extra_info, which
    pytest-benchmark completes only when it saves the run."""
    rows = {row.key: row for row in rows_of(benchmarks)[0] if not row.study}
    if not rows:
        return []
    lines = [f"Per step, {setting}. × {analysis.REFERENCE_SOLVER}: the median of the trials' paired ratios, "
             f"with its interval ({interval_caption(rows.values())})."]
    for device in sorted({key.device for key in rows}):
        lines += [""] + device_table(rows, device)
        lines += counted_table(rows, device)
        lines += fewer_steps(rows, device)
        lines += decomposition(rows, device, free_cpus)
    return lines + trials_taken_lines(rows.values())


def trials_taken_lines(rows) -> list[str]:
    """A line on what the budget bought, and which benchmarks stopped out of reach or not yet precise enough to call a
    change (perf/measure/schedule.py); [] where no benchmark says why its trials stopped."""
    judged = [row for row in rows if row.info.get("trials_stopped")]
    if not judged:
        return []
    fewest = min(row.trials for row in judged)
    more = [row for row in judged if row.trials > fewest]
    stopped = lambda *reasons: sorted(row.key.name for row in judged if row.info["trials_stopped"] in reasons)  # noqa: E731
    spent = next((row.info["budget"] for row in judged if row.info.get("budget")), None)
    if spent and spent["passes"]:
        made = [row for row in more if row.info["trials_stopped"] == PRECISE]
        line = (f"Trials: {fewest} a benchmark; the budget's {spent['passes']} passes past them "
                f"({spent['seconds']:.0f} s of {spent['budget_s']:.0f}) bought {spent['trials']} trials: "
                f"{len(made)} of {len(more)} benchmarks made precise enough to call a change"
                + (f" (up to {max(row.trials for row in made)} trials)" if made else ""))
    elif more:
        line = (f"Trials: {fewest} a benchmark; {len(more)} of {len(judged)} took more (up to "
                f"{max(row.trials for row in more)}) to be precise enough to call a change")
    else:
        line = f"Trials: {fewest} a benchmark, none more"
    if out_of_reach := stopped(OUT_OF_REACH):
        line += (f"; {len(out_of_reach)} out of reach ({listed(out_of_reach)}): their spread needs more trials than "
                 f"{MAX_TRIALS} or than the budget could buy")
    if imprecise := stopped(BUDGET_SPENT, MOST_TRIALS):
        line += (f"; {len(imprecise)} {'was' if len(imprecise) == 1 else 'were'} not yet when they stopped "
                 f"({listed(imprecise)})")
    if out_of_reach or imprecise:
        line += (": a comparison may not tell their change (--decide hands it to the gate), and --budget gives them "
                 "more time")
    return ["", line + "."]


def device_table(rows: dict, device: str) -> list[str]:
    """One row per solver, and for each size its µs per step and its ratio to the timing reference."""
    sizes = sorted({key.n for key in rows if key.device == device})
    names = {row.device_name for key, row in rows.items() if key.device == device and row.device_name}
    # Sorted by the size the question is about, so the table reads from the fastest to the slowest there.
    order_n = analysis.question_n(rows, device)
    solvers = sorted({key.solver for key in rows if key.device == device},
                     key=lambda solver: getattr(rows.get((solver, device, order_n)), "per_step_us", float("inf")))
    title = device + (f" ({names.pop()})" if len(names) == 1 else "")
    header = [[title] + [cell for n in sizes for cell in (f"n = {n:,}", "")],
              ["solver"] + [column for _ in sizes for column in ("µs/step", f"× {analysis.REFERENCE_SOLVER}")]]
    cells = []
    for solver in solvers:
        line = [solver]
        for n in sizes:
            row = rows.get((solver, device, n))
            line += [number(row.per_step_us) if row else "—",
                     "reference" if row and row.is_timing_reference else with_interval(row and row.ratio)]
        cells.append(line)
    return aligned(header, cells, numeric=range(1, len(header[0])))


def counted_table(rows: dict, device: str) -> list[str]:
    """Where the run counted (--count): per solver and size its instructions a step, × the timing reference's in
    instructions (more work), and the time ratio over that (a slower rate: time an instruction, × the reference's)."""
    counted = {key: row for key, row in rows.items() if key.device == device and row.instructions}
    failed = [f"{key.name} ({why})" for key, row in sorted(rows.items())
              if key.device == device and (why := (row.info.get("instructions") or {}).get("not_counted"))]
    failed_line = [f"Not counted: {'; '.join(failed)}."] if failed else []
    if not counted:
        return ["", *failed_line] if failed else []
    sizes = sorted({key.n for key in counted})
    order_n = analysis.question_n(rows, device)
    solvers = sorted({key.solver for key in counted},
                     key=lambda solver: getattr(rows.get((solver, device, order_n)), "per_step_us", float("inf")))
    header = [["counted"] + [cell for n in sizes for cell in (f"n = {n:,}", "", "")],
              ["solver"] + [name for _ in sizes for name in ("instructions/step", "× work", "× time/instruction")]]
    cells = []
    for solver in solvers:
        line = [solver]
        for n in sizes:
            row = counted.get((solver, device, n))
            reference = row and row.is_timing_reference
            line += [with_interval(row and row.instructions), "reference" if reference else with_interval(
                row and row.instruction_ratio), "reference" if reference else number(
                row and row.ratio and row.ratio.value / row.instruction_ratio.value)]
        cells.append(line)
    caption = ("Counted under valgrind's callgrind (instructions: the same on every run; blind to waits, cache misses, "
               "system calls and a GPU's work): × work is the instruction ratio to numpy_loop, the median over the "
               "counted processes with their range; × time/instruction, the time ratio over it. Their product is the "
               "time ratio.")
    return ["", *aligned(header, cells, numeric=range(1, len(header[0]))), caption, *failed_line]


def fewer_steps(rows: dict, device: str) -> list[str]:
    """What the solvers that ran fewer steps than the profile asked (a round budget) would take for them all."""
    lines = []
    for key, row in sorted(rows.items()):
        if key.device == device and (asked := row.steps_reduced_from):
            scaled_s = row.per_step_us * asked * 1e-6
            lines.append(f"  {key.solver} at n = {key.n:,} ran {row.iterations:,} steps a round, not {asked:,}: "
                         f"{asked:,} steps at its µs/step would take {number(scaled_s)} s")
    return ["", "Fewer steps, scaled:"] + lines if lines else []


def decomposition(rows: dict, device: str, free_cpus: int) -> list[str]:
    n = analysis.question_n(rows, device)
    if not (found := decomposition_cells(rows, device, n)):
        return []
    whole, cells = found
    lines = ["", f"Where a {analysis.WHOLE_STEP} step goes ({device}, n = {n:,}, {number(whole.value)} µs):"]
    lines += ["  " + line for line in aligned([DECOMPOSITION_HEADER], cells, numeric=(1, 2))]
    if device == "cpu" and free_cpus >= 2:  # no pair of this run's solvers isolates what running free costs
        lines.append(f"  Free on {free_cpus} CPUs, these parts hold what running free costs over one CPU; "
                     "--cpu-affinity quiet leaves it out (what it is: docs/results/handoff/README.md).")
    return lines
