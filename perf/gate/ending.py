"""How a gate run ends: the verdicts that fail it, the devices it measured nothing on, its exit status and last line."""

import os

from perf.judge import words
from perf.judge.outcome import ALLOW_UNAVAILABLE, FAILED, NOT_MEASURED, PASSED
from perf.judge.rules import Verdict
from perf.measure.environment import onednn_setting

FAILING = (words.REGRESSION, words.ERROR, words.MISSING)


def onednn_settings(*versions) -> list[tuple]:
    """(version, how its workers have oneDNN set): the gate's environment, then the version's own."""
    return [(version, onednn_setting({**os.environ, **dict(version.env)})) for version in versions]


def failed(rows: list[Verdict]) -> bool:
    return any(row.verdict in FAILING for row in rows)


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
    """The gate's exit status and its last line. It fails on a confirmed regression, a repeated error or a lost
    benchmark; it is NOT MEASURED where nothing was measured on both versions, or nothing on a device it was asked
    for (unless allow_unavailable: a CPU-only runner in a CPU and GPU matrix); else it passed. The line counts every
    verdict apart (a SKIPPED or NEW benchmark is not CLEAR) and names each device with nothing measured, and why."""
    counts = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
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
