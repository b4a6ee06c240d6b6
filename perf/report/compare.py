"""Two runs compared: per benchmark, × numpy_loop then and now, the change and its verdict (docs/measurement.md)."""

import math
import statistics
from dataclasses import dataclass

from perf.judge.outcome import ALLOW_UNAVAILABLE, COUNTED_THRESHOLD, DEFAULT_THRESHOLD, FAILED, NOT_MEASURED, PASSED
from perf.judge import words
from perf.judge.rules import CHANGE_CONFIDENCE, change_verdict
from perf.judge.statistics import Interval
from perf.measure import TIMING_REFERENCE, Key
from perf.measure.cpus import FREE, recorded_affinity
from perf.measure.workers import EARLIER_WORKER_PROCESSES
from perf.report.rows import Row, rows_of
from perf.report.tables import markdown


TIME, INSTRUCTIONS = "time", "instructions"  # the measures a verdict may be on


@dataclass(frozen=True)
class Compared:
    key: Key
    then: float  # the median of the trials' ratios to the timing reference
    now: float
    change: Interval  # now / then
    verdict: str
    detectable: float | None  # CAN'T TELL: the smallest slowdown these runs could have called SLOWER
    # Decided by the gate under --decide (perf/gate/decide.py): its REGRESSION is significantly slower by more than
    # half the threshold, not surely by more than the threshold as the comparison's own SLOWER.
    by_gate: bool = False
    measure: str = TIME  # what then and now are ratios of: TIME (trials) or INSTRUCTIONS (counted processes)


def compared(key: Key, then: list[float], now: list[float], threshold: float = DEFAULT_THRESHOLD,
             measure: str = TIME) -> Compared | None:
    """The verdict on one benchmark's ratios in two runs, its trials' (time) or its counted processes' (instructions);
    None for the reference or under two a side."""
    if (key.solver, key.device) == TIMING_REFERENCE or len(then) < 2 or len(now) < 2:
        return None
    return Compared(key, statistics.median(then), statistics.median(now), *change_verdict(then, now, threshold),
                    measure=measure)


# As the terminal prints it, after pytest-benchmark's tables -------------------------------------------------------

# What a saved run records about its environment that moves every ratio when it differs (machine_info.fssgd): two
# runs that differ in any of these are not like with like, and their comparison is NOT MEASURED.
ENVIRONMENT = (("CPU", lambda fssgd: fssgd.get("cpu_model")),
               ("NumPy", lambda fssgd: fssgd.get("numpy")),
               ("TensorFlow", lambda fssgd: " ".join(filter(None, [(fssgd.get("tensorflow") or {}).get(key)
                                                                   for key in ("distribution", "version")])) or "none"),
               ("GPU", lambda fssgd: "; ".join(fssgd.get("nvidia_gpus") or ()) or "none"),
               ("CUDA", lambda fssgd: ", ".join(f"{name} {version}" for name, version in (fssgd.get("cuda") or {}).items()
                                                if version) or "none"),
               ("threads", lambda fssgd: fssgd.get("threads_setting")),
               ("CPU affinity", recorded_affinity),
               ("oneDNN", lambda fssgd: fssgd.get("onednn_setting")),
               ("worker processes", lambda fssgd: fssgd.get("worker_processes", EARLIER_WORKER_PROCESSES)),
               ("malloc", lambda fssgd: ", ".join(f"{name}={value}" for name, value in
                                                  (fssgd.get("malloc_settings") or {}).items()) or "glibc's defaults"),
               ("profile", lambda fssgd: fssgd.get("profile")),
               ("FSSGD_SHRINK", lambda fssgd: fssgd.get("shrink") or "unset"))
# Test tooling that stands in for a code change (perf/measure/trials.py): said, and judged as a change would be.
STAND_INS = (("FSSGD_SLOWDOWN", lambda fssgd: fssgd.get("slowdown") or "unset"),)


def differences(then: dict, now: dict, entries) -> list[str]:
    return [f"{name} {value(then)} then, {value(now)} now" for name, value in entries if value(then) != value(now)]


def environment_line(then: dict, now: dict) -> str | None:
    """One line naming what differs between the two runs' environments, or None. A stand-in is said apart: the
    comparison judges it, where runs not like with like are NOT MEASURED."""
    said = [f"{label}: {'; '.join(found)}." for label, entries in ((words.NOT_LIKE_WITH_LIKE.capitalize(), ENVIRONMENT),
                                                                   (words.SLOWED, STAND_INS))
            if (found := differences(then, now, entries))]
    return " ".join(said) or None


@dataclass(frozen=True)
class Comparison:
    """This run against a saved one, as the terminal says it; each why is None where there is none."""

    lines: list[str]
    slower: list[Compared]  # the rows judged SLOWER
    not_measured: str | None = None  # why it measured nothing it could stand behind
    failed: str | None = None  # why it failed whatever --fail-on-slower says: the --decide gate found an error
    # Why the --decide gate measured nothing to stand behind: its rows stay CAN'T TELL, the comparison's own count.
    gate_not_measured: str | None = None
    results: tuple = ()  # every row's verdict, the gate's where --decide decided it (by_gate): for Markdown
    table_lines: tuple[int, int] | None = None  # where that table stands in lines, (first, past the last); None: none


def reference_moves(then_rows: list[Row], now_rows: list[Row], threshold: float) -> list[str]:
    """A line for each size where the timing reference's µs per step moved past threshold (docs/usage.md)."""
    then, now = ({row.key.n: row.per_step_us for row in rows if row.is_timing_reference} for rows in (then_rows, now_rows))
    lines = []
    for n in sorted(then.keys() & now.keys()):
        factor = now[n] / then[n]
        if abs(math.log(factor)) > math.log1p(threshold):
            lines.append(f"{TIMING_REFERENCE[0]} itself {max(factor, 1 / factor):.2f}x "
                         f"{'slower' if factor > 1 else 'faster'} at n = {n:,} than in the saved run: the ratios cancel "
                         f"the machine's speed, but not a change of its own (its code's, NumPy's), which moves every "
                         f"ratio at that size the other way.")
    return lines


def comparison(then_document: dict, then_name: str, now_fssgd: dict, now_benchmarks: list[dict], threshold: float,
               devices: list[str] = (), allow_unavailable: bool = False, gate_line=None, decide=None) -> Comparison:
    """This run against a saved one: every benchmark both runs timed, judged. NOT MEASURED where the runs are not like
    with like, where they have no benchmark in common to judge, or where nothing was judged on one of devices (the
    devices the run was asked for by name). Where given (perf/gate/decide.py's), gate_line(then_document, undecided,
    threshold) is the line naming the gate that decides the CAN'T TELL rows, and decide(then_document, undecided,
    threshold) runs it in a comparison that counts (a Decision)."""
    then_fssgd = then_document["machine_info"].get("fssgd") or {}
    then_rows, now_rows = rows_of(then_document["benchmarks"])[0], rows_of(now_benchmarks)[0]
    then_by_key = {row.key: row for row in then_rows if not row.study}
    found = [(row.name, result) for row in now_rows if not row.study and row.key in then_by_key
             if (result := compared(row.key, then_by_key[row.key].trial_ratios, row.trial_ratios, threshold))]
    counted = [(row.name, result) for row in now_rows if not row.study and row.key in then_by_key
               if (result := compared(row.key, then_by_key[row.key].instruction_ratios, row.instruction_ratios,
                                      COUNTED_THRESHOLD, INSTRUCTIONS))]
    lines = [f"Against {then_name}: per benchmark, × {TIMING_REFERENCE[0]} then and now (the median of the trials' "
             f"paired ratios) and the change, with its interval over both runs' trials "
             f"({min((result.change.coverage for _, result in found), default=CHANGE_CONFIDENCE):.1%}); threshold "
             f"{threshold:.0%}."]
    if counted:
        lines.append(f"Both runs counted (--count): the rows measured in {INSTRUCTIONS} judge × {TIMING_REFERENCE[0]} "
                     f"in instructions a step, over both runs' counted processes; threshold {COUNTED_THRESHOLD:.0%}.")
    if line := environment_line(then_fssgd, now_fssgd):
        lines.append(line)
    lines += reference_moves(then_rows, now_rows, threshold)
    if not found:
        return Comparison(lines, [], f"no benchmark of this run has trials in both runs to judge ({len(now_benchmarks)} "
                                     f"timed now, {len(then_document['benchmarks'])} in {then_name}; "
                                     f"{TIMING_REFERENCE[0]}, the timing reference, is not judged)")
    if recorded_affinity(then_fssgd) == recorded_affinity(now_fssgd) == FREE:
        lines.append("Both runs ran free: trials on one CPU scatter less, so runs saved with --cpu-affinity 1 could "
                     "call smaller slowdowns (docs/usage.md, Comparing saved runs).")
    width, before = max(len(name) for name, _ in found), len(lines)
    measure = lambda text: f"{text:<12}  " if counted else ""  # noqa: E731  (a column only where both counted)
    lines.append(f"{'benchmark':<{width}}  {measure('measure')}{'then':>9}  {'now':>9}  {'change':<24}  verdict")
    for name, result in found + counted:
        change = f"{result.change.value:.3f} ({result.change.low:.3f} to {result.change.high:.3f})"
        verdict = words.printed(result.verdict)
        if result.detectable:
            verdict += f" (these runs could call a slowdown of {result.detectable - 1:.0%} or more)"
        lines.append(f"{name:<{width}}  {measure(result.measure)}{result.then:>9.4g}  {result.now:>9.4g}  "
                     f"{change:<24}  {verdict}")
    results, after = [result for _, result in found + counted], len(lines)
    undecided = [result for result in results if result.verdict == words.CANT_TELL and result.measure == TIME]
    why_not, allowed = uncounted(then_fssgd, now_fssgd, results, devices, allow_unavailable)
    # A gate is minutes: it runs only where its verdicts would count.
    decision = decide(then_document, undecided, threshold) if decide and undecided and not why_not else None
    if decision:
        lines += decision.lines
        results = [decision.decided.get(result.key, result) for result in results]
    for each in (TIME, INSTRUCTIONS)[:1 + bool(counted)]:
        mine = [result for result in results if result.measure == each]
        lines.append((f"In {each}: " if counted else "") + ", ".join(
            f"{count} {words.printed(verdict)}" for verdict in words.COMPARISON_VERDICTS
            if (count := sum(result.verdict == verdict for result in mine))))
    if undecided and not decision and gate_line:
        lines.append(gate_line(then_document, undecided, threshold))
    lines += allowed
    slower = [result for result in results if result.verdict == words.SLOWER]
    return Comparison(lines, slower, why_not, decision.failed if decision else None,
                      decision.not_measured if decision else None, tuple(results), (before, after))


def uncounted(then_fssgd: dict, now_fssgd: dict, results: list[Compared], devices: list[str],
              allow_unavailable: bool) -> tuple[str | None, list[str]]:
    """Why a comparison's verdicts do not count (NOT MEASURED), or None; and the lines that say what was allowed."""
    if unlike := differences(then_fssgd, now_fssgd, ENVIRONMENT):
        return f"{words.NOT_LIKE_WITH_LIKE} ({'; '.join(unlike)}): its verdicts do not count", []
    if missed := [device for device in devices if not any(result.key.device == device for result in results)]:
        said = f"nothing judged on {', '.join(missed)}, which --devices asked for"
        if not allow_unavailable:
            return f"{said} ({ALLOW_UNAVAILABLE} allows a device with nothing to compare)", []
        return None, [f"{said[0].upper()}{said[1:]}: allowed by {ALLOW_UNAVAILABLE}."]
    return None, []


def run_ending(endings: list[Comparison], fail_on_slower: float | None) -> tuple[int, list[str], list[str]]:
    """How the comparisons end the run (docs/usage.md, how a gate or a comparison ends): its status, why it failed,
    and why what was asked was not measured. A --decide gate that measured nothing takes nothing from the SLOWER rows
    the comparison found itself: a run may fail and leave rows unmeasured, and both are said."""
    if not endings:
        return NOT_MEASURED, [], ["--benchmark-compare: pytest-benchmark loaded no saved run to compare with"]
    if why := next((found.not_measured for found in endings if found.not_measured), None):
        return NOT_MEASURED, [], [why]
    failures = [f"--decide: {found.failed}" for found in endings if found.failed]
    slower = [result for found in endings for result in found.slower]
    if fail_on_slower and slower:
        said = []
        for by_gate, what in ((False, "slower by more than that"),
                              (True, "the gate's regressions (slower, surely, and by more than half of it)")):
            if names := ", ".join(f"{result.key.name} ({result.change.value:.2f}x)" for result in slower
                                  if result.by_gate == by_gate):
                said.append(f"{what}: {names}")
        failures.append(f"--fail-on-slower={fail_on_slower:.0%}: {'; '.join(said)}")
    undecided = [found.gate_not_measured for found in endings if found.gate_not_measured]
    return (FAILED if failures else NOT_MEASURED if undecided else PASSED), failures, undecided


# The step summary's line for each exit status (perf/step_summary.py writes the summary).
COMPARISON_EXITS = {PASSED: "exit 0: nothing it stands behind failed",
                    FAILED: "exit 1: slower past --fail-on-slower, an error the gate found under --decide, a failed "
                            "test or pytest-benchmark's --benchmark-compare-fail",
                    NOT_MEASURED: "exit 10: it could not judge what it was asked, which is never a pass"}


def comparison_summary(status: int, failures: list[str], unmeasured: list[str], comparisons: list,
                       answer: list[str]) -> str:
    """A comparison of saved runs' step summary: its ending (run_ending's) and exit status, each comparison's lines
    with its verdicts as a table, then this run's answer as the terminal prints it."""
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
            counted = any(result.measure == INSTRUCTIONS for result in found.results)
            lines += markdown(["benchmark", *["measure"][:counted], "then", "now", "change (interval)", "verdict"], [
                [f"`{result.key.name}`", *[result.measure][:counted], f"{result.then:.4g}", f"{result.now:.4g}",
                 f"{result.change.value:.3f} ({result.change.low:.3f} to {result.change.high:.3f})",
                 words.printed(result.verdict) + (" (the gate's)" if result.by_gate else "")]
                for result in found.results])
        lines += [line for note in after for line in (note, "")]
    if answer:
        lines += ["<details><summary>The answer for this run, as the terminal prints it</summary>", "", "```text"]
        lines += answer + ["```", "", "</details>"]
    return "\n".join(lines).rstrip("\n") + "\n"
