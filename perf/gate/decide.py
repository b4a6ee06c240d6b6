"""--decide: the gate on the rows a comparison of saved runs could not tell, and its verdicts as the comparison's."""

import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from perf.gate.versions import has_commit
from perf.judge import words
from perf.judge.outcome import FAILED, NOT_MEASURED, PASSED
from perf.judge.statistics import Interval
from perf.measure import cpus
from perf.measure.trials import SLOWDOWN_VARIABLE
from perf.measure.worker import ROOT
from perf.report.compare import Compared

# The gate's verdicts that decide a row, as the comparison says them; the others leave it CAN'T TELL. The two rules
# differ (docs/measurement.md#glossary): a row so decided says "decided by the gate".
CANT_TELL = words.printed(words.CANT_TELL)  # as the comparison's rows print it
GATE_MODULE = ("-m", "perf.gate")
DECIDED_AS = {words.REGRESSION: words.SLOWER, words.IMPROVEMENT: words.FASTER, words.CLEAR: words.UNCHANGED}
# The gate's verdicts that fail the run whatever --fail-on-slower says: an error that repeated (a wrong answer, a
# crash) and a benchmark the working tree lost. A regression is SLOWER, and fails as the comparison's own do.
GATE_ERRORS = tuple(verdict for verdict in words.FAILING if verdict not in DECIDED_AS)

# The gate's screening budget under --decide: a pass costs its workers' start and a trial of each row, so a few rows
# are decided in less time than many; with what comes on top, a quick run and its gate keep within about 10 minutes
# (docs/usage.md, "Comparing saved runs").
GATE_BUDGET_S, GATE_BUDGET_S_BASE, GATE_BUDGET_S_PER_ROW = 180, 60, 10


def gate_budget_s(rows: int) -> int:
    """The gate's screening budget for this many CAN'T TELL rows."""
    return min(GATE_BUDGET_S, GATE_BUDGET_S_BASE + GATE_BUDGET_S_PER_ROW * rows)


@dataclass(frozen=True)
class Decision:
    """What the gate made of a comparison's CAN'T TELL rows: each row it decided, its ratio as the change (candidate
    over baseline: now over then); the lines that say so; why the comparison is NOT MEASURED, or failed, by it."""

    decided: dict = field(default_factory=dict)  # Key -> Compared
    lines: list[str] = field(default_factory=list)
    not_measured: str | None = None
    failed: str | None = None


def gated_commit(then_document: dict, commit_here) -> tuple[str | None, str]:
    """The saved run's commit, where a gate can check it out here, and ""; else None and why not, in a line.
    commit_here(id): whether this repository has that commit."""
    commit = then_document.get("commit_info") or {}
    if commit.get("id") in (None, "", "unversioned", "unknown"):  # pytest-benchmark's words for none
        return None, "The saved run records no commit, so no gate can time its code beside this one."
    if commit.get("dirty"):
        return None, (f"The saved run was made from {commit['id'][:10]} with uncommitted changes, so no gate can time "
                      f"its code beside this one.")
    if not commit_here(commit["id"]):
        return None, (f"The saved run's commit {commit['id'][:10]} is not in this repository, so no gate can time it "
                      f"here.")
    return commit["id"], ""


def gate_line(then_document: dict, undecided: list[Compared], threshold: float, affinity=(), threads: int = 0,
              commit_here=has_commit) -> str:
    """The one command that decides the CAN'T TELL rows, as --decide runs it; or why there is none."""
    commit, why_not = gated_commit(then_document, commit_here)
    if commit is None:
        return why_not
    return (f"{CANT_TELL} is this screen's limit, not a verdict. The gate decides them, timing the saved run's commit "
            f"beside the working tree (--decide runs it): "
            f"{command_line(gate_arguments(commit, undecided, threshold, affinity, threads))}")


def command_line(arguments: list[str]) -> str:
    """The gate's command as a reader pastes it: the CAN'T TELL line's, --decide's and the gate's replay line."""
    return shlex.join(["python", *GATE_MODULE, *arguments])


def gate_arguments(commit: str, undecided: list[Compared], threshold: float, affinity, threads: int) -> list[str]:
    """The gate of the saved run's commit against the working tree, for these rows' benchmarks alone, at the
    comparison's threshold written as given (12.5%, not rounded), on the run's CPUs (where it was pinned; else the
    gate's own one) and threads, within the screening budget for that many rows."""
    arguments = [commit, "--benchmarks", ",".join(result.key.name for result in undecided),
                 "--threshold", f"{threshold * 100:g}%", "--threads", str(threads),
                 "--budget", str(gate_budget_s(len(undecided)))]
    if affinity:
        arguments += ["--cpu-affinity", cpus.compact(affinity)]
    # The comparison judged FSSGD_SLOWDOWN as a code change: the gate slows the working tree alone.
    if slowdown := os.environ.get(SLOWDOWN_VARIABLE):
        arguments += ["--candidate-slowdown", slowdown]
    return arguments


def gate_process(command: list[str], say) -> tuple[int, str]:
    """Run the gate, each line of its output said as it comes; its exit status and last line. OSError where it
    cannot start."""
    # FSSGD_SLOWDOWN goes to the candidate alone, by --candidate-slowdown: inherited, it would slow both versions.
    environment = {name: value for name, value in os.environ.items() if name != SLOWDOWN_VARIABLE}
    last = ""
    with subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, bufsize=1) as process:
        for line in process.stdout:
            say(line.rstrip("\n"))
            last = line.strip() or last
    return process.returncode, last


def gate_report(arguments: list[str], run_gate=gate_process, say=print) -> tuple[int, str, dict | None]:
    """python -m perf.gate ARGUMENTS, run by run_gate(command, say) with a --json of its own: its exit status, its last
    line, and the report it saved (None where it saved none). OSError where it cannot start."""
    with tempfile.TemporaryDirectory(prefix="fssgd-gate-report-") as folder:
        report = Path(folder) / "gate.json"
        status, last_line = run_gate([sys.executable, *GATE_MODULE, *arguments, "--json", str(report)], say)
        return status, last_line, json.loads(report.read_text()) if report.exists() else None


def decided_by_gate(then_document: dict, undecided: list[Compared], threshold: float, affinity=(), threads: int = 0,
                    say=print, commit_here=has_commit, run_gate=gate_process) -> Decision:
    """The gate run on the undecided rows, and what it decided. Where the saved run's commit cannot be checked out
    here, the line says why and the rows stay CAN'T TELL, with nothing run. run_gate: as gate_process."""
    commit, why_not = gated_commit(then_document, commit_here)
    if commit is None:
        return Decision(lines=[f"--decide: {why_not} The {CANT_TELL} rows stay so."])
    arguments = gate_arguments(commit, undecided, threshold, affinity, threads)
    say(f"fssgd-bench: --decide: the gate times {commit[:10]} beside the working tree for the "
        f"{len(undecided)} {CANT_TELL} row{'s' * (len(undecided) != 1)}, screening within "
        f"{gate_budget_s(len(undecided))} s, then confirming any flag: {command_line(arguments)}")
    try:
        status, last_line, saved = gate_report(arguments, run_gate, say)
    except OSError as error:
        return Decision(not_measured=f"--decide: the gate cannot start: {error}")
    if status not in (PASSED, FAILED) or saved is None:
        why = (saved or {}).get("ending") or last_line or f"it exited {status}"
        return Decision(not_measured=f"--decide: the gate on the {CANT_TELL} rows measured nothing to stand behind: "
                                     f"{why}")
    return decision_of(undecided, {row["benchmark"]: row for row in saved["rows"]})


def decision_of(undecided: list[Compared], rows: dict) -> Decision:
    """The comparison's verdicts from the gate's rows (benchmark name -> its saved Verdict), with a line per row."""
    decided, lines, errors = {}, [], []
    for result in undecided:
        name, row = result.key.name, rows.get(result.key.name)
        if row is None:
            lines.append(f"not decided by the gate: {name} {CANT_TELL} (not in the gate's report)")
        elif verdict := DECIDED_AS.get(row["verdict"]):
            change = Interval(row["ratio"], row["low"], row["high"], row.get("coverage", 1.0))
            decided[result.key] = replace(result, verdict=verdict, change=change, detectable=None, by_gate=True)
            lines.append(f"decided by the gate: {name} {words.printed(verdict)} ({gate_figures(row)})")
        elif row["verdict"] in GATE_ERRORS:
            errors.append(f"{name} ({row.get('why') or row['verdict']})")
            lines.append(f"the gate found an error: {name} {words.printed(row['verdict'])} ({row.get('why', '')})")
        else:
            figures = f"; {gate_figures(row)}" if row.get("ratio") else ""
            lines.append(f"not decided by the gate: {name} {CANT_TELL} (gate {words.printed(row['verdict'])}"
                         + (f": {row['why']}" if row.get("why") else "") + f"{figures})")
    return Decision(decided, lines, failed=f"the gate found errors: {', '.join(errors)}" if errors else None)


def gate_figures(row: dict) -> str:
    return f"gate ratio {row['ratio']:.2f} [{row['low']:.2f}, {row['high']:.2f}], {row['passes']} passes"
