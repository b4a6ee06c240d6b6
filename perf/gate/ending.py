"""How a gate run ends: the verdicts that fail it, the devices it measured nothing on, its exit status and last line,
and its step summary in Markdown."""

import os
from collections import Counter

from perf.judge import words
from perf.judge.outcome import ALLOW_UNAVAILABLE, FAILED, NOT_MEASURED, PASSED
from perf.judge.rules import Verdict
from perf.measure.environment import onednn_setting
from perf.report.tables import markdown

USAGE_ERROR = 2  # argparse's, the gate's too
# The step summary's line for each exit status (perf/step_summary.py writes it).
GATE_EXITS = {PASSED: "exit 0: no confirmed regression, repeated error or lost benchmark",
              FAILED: "exit 1: a confirmed regression, a repeated error or a benchmark the candidate lost",
              NOT_MEASURED: "exit 10: it could not measure what it was asked, which is never a pass",
              USAGE_ERROR: "exit 2: a usage error, reported before anything was timed"}
# Above the full verdict table a page stays short whatever fails: the rest is in the table.
MOST_FLAGGED, MOST_UNMEASURED = 12, 8


def onednn_settings(*versions) -> list[tuple]:
    """(version, how its workers have oneDNN set): the gate's environment, then the version's own."""
    return [(version, onednn_setting({**os.environ, **dict(version.env)})) for version in versions]


def failed(rows: list[Verdict]) -> bool:
    return any(row.verdict in words.FAILING for row in rows)


def unmeasured(rows: list[Verdict], device_of: dict, devices: list[str]) -> dict:
    """Device -> why no benchmark on it was measured on both versions, for each such device the gate was asked for.
    device_of: benchmark name -> its device."""
    found = {}
    for device in devices:
        on_it = [row for row in rows if device_of[row.benchmark] == device]
        if not any(row.verdict in words.JUDGED for row in on_it):
            found[device] = "; ".join(dict.fromkeys(row.why or row.verdict for row in on_it)) or "no benchmark"
    return found


def ending(rows: list[Verdict], device_of: dict, devices: list[str], allow_unavailable: bool) -> tuple[int, str]:
    """The gate's exit status and its last line (every way it ends: docs/gate.md, "How it decides", 5). The line counts
    every verdict apart (SKIPPED or NEW is not CLEAR) and names each device with nothing measured, and why."""
    counts = Counter(row.verdict for row in rows)
    summary = ", ".join(f"{count} {name}" for name, count in counts.items()) or "no benchmark"
    missed = unmeasured(rows, device_of, devices)
    said = "; ".join(f"nothing measured on {device} ({why})" for device, why in missed.items())
    if failed(rows):
        return FAILED, f"gate {words.FAILED}: {summary}" + (f"; {said}" if said else "")
    if not any(row.verdict in words.JUDGED for row in rows):
        return NOT_MEASURED, f"gate {words.NOT_MEASURED}: no benchmark was timed on both versions: {said}"
    if missed and not allow_unavailable:
        return NOT_MEASURED, (f"gate {words.NOT_MEASURED}: {said}; {summary} ({ALLOW_UNAVAILABLE} allows a device with "
                              f"nothing to gate)")
    return PASSED, f"gate {words.PASSED}: {summary}" + (f"; {said}, allowed by {ALLOW_UNAVAILABLE}" if said else "")


def ratio_cells(row: dict) -> list[str]:
    """A saved verdict's ratio, interval and passes, as the gate's terminal report sets them; dashes where unjudged."""
    if row.get("ratio") is None:
        return ["—", "—", str(row.get("passes") or "—")]
    return [f"{row['ratio']:.3f}", f"[{row['low']:.3f}, {row['high']:.3f}]", str(row["passes"])]


def confirmation_cell(row: dict, confirmed: bool | None) -> str:
    """What measuring a flagged benchmark again alone found (perf/gate/stages.py: confirmed), with why where the
    benchmark has no ratio (an error, a lost benchmark)."""
    if (screen := row.get("screening")) and screen.get("ratio") is not None:
        return f"confirmed alone; the screen's: {' '.join(ratio_cells(screen)[:2])}, {screen['passes']} passes"
    if check := row.get("confirmation"):
        verdict = words.printed(words.verdict_read(check["verdict"]))
        measured = f", {' '.join(ratio_cells(check)[:2])}, {check.get('passes')} passes" if check.get("ratio") else ""
        return f"not confirmed: {verdict} alone{measured}"
    return row.get("why") or ("none (--no-confirm)" if confirmed is False else "—")


def gate_summary(report: dict) -> str:
    """A gate's summary from its report as --json saves it (what it says: docs/gate.md#in-ci, "The step summary")."""
    rows = [{**row, "verdict": words.verdict_read(row["verdict"])} for row in report.get("rows", [])]
    status = report["status"]
    lines = [f"**{report['ending']}** ({GATE_EXITS.get(status, f'exit {status}')})", ""]
    if report.get("candidate"):
        lines += [f"Candidate {report['candidate']} against baseline {report['baseline']}"
                  + (f", threshold {report['threshold']:.0%}" if report.get("threshold") else "") + ".", ""]
    if not rows:
        lines += [f"Nothing was timed: the gate could not measure {report.get('asked') or 'what it was asked'}.", ""]
    flagged = [row for row in rows if row["verdict"] in words.FAILING + (words.UNCONFIRMED,)]
    if flagged:
        lines += [f"Flagged ({len(flagged)}):", ""]
        lines += markdown(["benchmark", "verdict", "ratio", "interval", "passes", "confirmation, or why"], [
            [f"`{row['benchmark']}`", words.printed(row["verdict"]), *ratio_cells(row),
             confirmation_cell(row, report.get("confirmed"))] for row in flagged[:MOST_FLAGGED]])
        if len(flagged) > MOST_FLAGGED:
            lines += [f"And {len(flagged) - MOST_FLAGGED} more, in the table of every verdict below.", ""]
    elif rows:
        lines += ["Flagged: none.", ""]
    unmeasured = {}
    for row in rows:
        if row["verdict"] in (words.SKIPPED, words.NEW):
            why = row.get("why", "").removeprefix(f"{row['verdict']}: ")  # the bullet says its verdict once
            unmeasured.setdefault((row["verdict"], why), []).append(row["benchmark"])
    if unmeasured:
        lines += ["Not measured or skipped:", ""]
        lines += [f"- {words.printed(verdict)}" + (f" ({why})" if why else "") + ": "
                  + ", ".join(f"`{name}`" for name in names)
                  for (verdict, why), names in list(unmeasured.items())[:MOST_UNMEASURED]]
        if len(unmeasured) > MOST_UNMEASURED:
            lines.append(f"- and {len(unmeasured) - MOST_UNMEASURED} more reasons, in the table of every verdict below")
        lines.append("")
    elif rows:
        lines += ["Not measured or skipped: none.", ""]
    if report.get("machine"):
        workers = f"; workers on {report['cpu_affinity']}" if report.get("cpu_affinity") else ""
        lines += [f"Machine: {report['machine']}{workers}.", ""]
    else:
        lines += ["Machine and CPU affinity: not recorded in this report.", ""]
    if report.get("command"):
        lines += [f"Replay it locally: `{report['command']}`", ""]
    else:
        lines += [f"Replay it locally: the command is not recorded in this report; its seed was {report['seed']}.", ""]
    if rows:
        lines += [f"<details><summary>Every verdict ({len(rows)} benchmarks)</summary>", ""]
        lines += markdown(["benchmark", "verdict", "ratio", "interval", "passes", "steps × calls", "why"], [
            [f"`{row['benchmark']}`", words.printed(row["verdict"]), *ratio_cells(row),
             f"{row['steps']} × {row.get('calls', 1)}" if row.get("steps") else "—", row.get("why") or ""]
            for row in rows])
        lines += ["</details>"]
    return "\n".join(lines).rstrip("\n") + "\n"
