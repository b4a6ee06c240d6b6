"""python -m perf.gate.bisect GOOD BAD [gate options]: which first-parent commit between GOOD and BAD made it slower.

    python -m perf.gate.bisect v1.2 HEAD --benchmarks tf1_feed_dict-cpu-n1000 --json bisect.json

How it searches (each step a whole gate of GOOD itself against the midpoint: a drift of small steps is found where its
sum is first flagged), what it says of the culprit, and its exits (1 FOUND, 0 NOTHING TO FIND, 3 UNDECIDED,
10 NOT MEASURED, 2 a usage error): docs/gate.md, "Which commit made it slower: the bisect".
"""

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from perf.gate.decide import gate_process, gate_report
from perf.gate.versions import GateError, git
from perf.judge import words
from perf.judge.outcome import (COUNTED_THRESHOLD, DEFAULT_THRESHOLD, FAILED, NOT_MEASURED, PASSED,
                                threshold_argument)
from perf.step_summary import SummaryError, check_summary_targets, summarized

# Exit statuses (docs/gate.md): FAILED (1) and PASSED (0) as the gate's, NOT_MEASURED (10) and a usage error (2) alike.
FOUND_EXIT, NOTHING_EXIT, UNDECIDED_EXIT, USAGE_EXIT = FAILED, PASSED, 3, 2
ENDINGS = {FOUND_EXIT: words.FOUND, NOTHING_EXIT: words.NOTHING_TO_FIND, UNDECIDED_EXIT: words.UNDECIDED,
           NOT_MEASURED: words.NOT_MEASURED}
BISECT_HINT = "which commit:"  # how a failed gate's line proposing a bisect begins


class BisectUsageError(Exception):
    """The command asks for a search that cannot be made; the message says why."""


@dataclass(frozen=True)
class Step:
    """One gate of the search: its verdict for the selection, its rows as the gate saved them, why where it did not
    decide (step_verdict)."""
    baseline: str
    candidate: str
    verdict: str
    rows: list = field(default_factory=list)
    why: str = ""
    seconds: float = 0.0

    def figures(self) -> str:
        return figures(self.rows) or "no ratio"


def figures(rows: list[dict]) -> str:
    """Each benchmark's ratio candidate / baseline with its interval, as the gate saved them."""
    return "; ".join(f"{row['benchmark']} {row['ratio']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"
                     for row in rows if row.get("ratio"))


def step_verdict(rows: list[dict]) -> tuple[str, str]:
    """The selection's verdict from the gate's rows, and why where it is neither REGRESSION nor CLEAR."""
    if not rows:
        return NOT_MEASURED, "the gate saved no benchmark"
    verdicts = {row["benchmark"]: words.verdict_read(row["verdict"]) for row in rows}
    if words.REGRESSION in verdicts.values():
        return words.REGRESSION, ""
    left = {name: verdict for name, verdict in verdicts.items() if verdict not in (words.CLEAR, words.IMPROVEMENT)}
    if not left:
        return words.CLEAR, ""
    missing = [name for name, verdict in left.items() if verdict in (words.MISSING, words.NEW, words.SKIPPED)]
    return words.INCONCLUSIVE, ("; ".join(f"{name} {words.printed(verdict)}" for name, verdict in left.items())
                                + (": a commit in the range lacks it, or cannot run it here" if missing else ""))


def regressed(step: Step) -> dict[str, dict]:
    """The rows of the benchmarks step's gate flagged (REGRESSION), by benchmark."""
    return {row["benchmark"]: row for row in step.rows if words.verdict_read(row["verdict"]) == words.REGRESSION}


def shown_alone(parent: Step | None, culprit: Step, threshold: float) -> str | None:
    """Where the gates of a commit and of its parent against GOOD already show the commit alone slower by the whole
    threshold in every benchmark it regressed (its low end over its parent's high end), those quotients; else None.
    The whole threshold, not the gate's half: the two come from different gates, whose intervals miss by a few per
    cent between runs (docs/gate.md)."""
    parents = {row["benchmark"]: row for row in parent.rows} if parent else {}
    flagged = regressed(culprit)
    if not flagged or any(not parents.get(name, {}).get("high") for name in flagged):
        return None
    quotients = {name: row["low"] / parents[name]["high"] for name, row in flagged.items()}
    if min(quotients.values()) < 1 + threshold:
        return None
    return "; ".join(f"{name} at least {quotient:.3f}" for name, quotient in quotients.items())


def slower_before(parent: Step | None, culprit: Step) -> str | None:
    """Where the culprit's parent is itself slower than GOOD, its interval above 1, in a benchmark the culprit
    regressed: those benchmarks' figures (a drift before the culprit); else None."""
    flagged = regressed(culprit)
    return figures([row for row in (parent.rows if parent else [])
                    if row["benchmark"] in flagged and (row.get("low") or 0) > 1]) or None


def gated(baseline: str, candidate: str, options: list[str], run_gate=gate_process, say=print) -> Step:
    """One step: python -m perf.gate BASELINE CANDIDATE OPTIONS, its rows read from the report it saves. A usage error
    of the gate's (exit 2) is the search's: BisectUsageError."""
    began = time.perf_counter()
    try:
        status, last_line, saved = gate_report([baseline, candidate, *options], run_gate, say)
    except OSError as error:
        return Step(baseline, candidate, NOT_MEASURED, why=f"the gate cannot start: {error}")
    seconds = time.perf_counter() - began
    if status == USAGE_EXIT:
        raise BisectUsageError(f"the gate refused the command: {last_line}")
    if status not in (PASSED, FAILED) or saved is None:
        return Step(baseline, candidate, NOT_MEASURED, why=(saved or {}).get("ending") or last_line or
                    f"the gate exited {status}", seconds=seconds)
    verdict, why = step_verdict(saved["rows"])
    return Step(baseline, candidate, verdict, saved["rows"], why, seconds)


@dataclass
class Search:
    """The search's steps so far and how it ended: its exit status and its lines."""
    steps: list[Step] = field(default_factory=list)
    status: int | None = None
    lines: list[str] = field(default_factory=list)
    culprit: str | None = None


def searched(good: str, commits: list[str], run_step, say=print, subject=lambda commit: "",
             parents=lambda commit: git_parents(commit), threshold: float = DEFAULT_THRESHOLD) -> Search:
    """The binary search over the commits after GOOD up to BAD, a gate each step: run_step(baseline, candidate)."""
    search = Search()

    def step(baseline, candidate, why):
        found = run_step(baseline, candidate)
        search.steps.append(found)
        say(f"bisect: step {len(search.steps)} ({why}): {candidate[:10]} against {baseline[:10]}: "
            f"{words.printed(found.verdict)} ({found.figures()}{'; ' + found.why if found.why else ''}), "
            f"{found.seconds:.0f} s")
        return found

    def ended(status, *lines):
        search.status, search.lines = status, list(lines)
        return search

    first = step(good, commits[-1], "is BAD slower than GOOD?")
    if first.verdict == NOT_MEASURED:
        return ended(NOT_MEASURED, f"bisect: {words.NOT_MEASURED}: GOOD against BAD measured nothing: {first.why}")
    if first.verdict == words.CLEAR:
        return ended(NOTHING_EXIT, f"bisect: {words.NOTHING_TO_FIND}: {commits[-1][:10]} is not slower than "
                                      f"{good[:10]} by the threshold ({first.figures()})")
    if first.verdict != words.REGRESSION:
        return ended(UNDECIDED_EXIT, f"bisect: {words.UNDECIDED}: the gate could not tell whether BAD is slower "
                                     f"than GOOD: {first.why}")
    low, high, at = -1, len(commits) - 1, {len(commits) - 1: first}  # -1: GOOD itself
    while high - low > 1:
        middle = (low + high) // 2
        left = high - low - 1
        found = step(good, commits[middle], f"{left} commit{'s' if left > 1 else ''} left")
        if found.verdict == words.REGRESSION:
            high = middle
        elif found.verdict == words.CLEAR:
            low = middle
        else:
            lower = good if low < 0 else commits[low]
            status = NOT_MEASURED if found.verdict == NOT_MEASURED else UNDECIDED_EXIT
            return ended(status, f"bisect: {ENDINGS[status]}: the first slower commit lies after {lower[:10]}, up to "
                                 f"{commits[high][:10]}; the gate of {commits[middle][:10]} could not tell: {found.why}")
        at[middle] = found
    culprit, parent = commits[high], good if high == 0 else commits[high - 1]
    search.culprit = culprit
    lines = [f"bisect: {words.FOUND}: {culprit[:10]} {subject(culprit)} is the first commit the gate flags against "
             f"GOOD: {at[high].figures()}",
             f"  its parent {parent[:10]} against GOOD: " + (at[low].figures() if low >= 0 else "it is GOOD")]
    shown = shown_alone(at.get(low), at[high], threshold) if low >= 0 else None
    alone = None if shown else at[high] if high == 0 else step(parent, culprit, "did it alone?")
    if shown:
        lines.append(f"  {culprit[:10]} against its parent, by their gates against GOOD: {shown}, past the whole "
                     f"threshold: this commit did it (no gate of its own needed)")
    elif alone.verdict == words.REGRESSION and (before := slower_before(at.get(low), at[high])):
        lines.append(f"  {culprit[:10]} against its parent: REGRESSION ({alone.figures()}), but the commits before it "
                     f"had already made {before} against GOOD: small steps added up, and this one's is flagged too "
                     f"(a drift and a step: see each step above)")
    elif alone.verdict == words.REGRESSION:
        lines.append(f"  {culprit[:10]} against its parent: REGRESSION ({alone.figures()}): this commit did it")
    else:
        lines.append(f"  {culprit[:10]} against its parent: {words.printed(alone.verdict)} ({alone.figures()}): no "
                     f"one commit did it; small steps added up since GOOD, and {culprit[:10]} is where their sum "
                     f"is first flagged (a drift: see each step above)")
    if len(parents(culprit)) > 1:
        lines.append(f"  {culprit[:10]} is a merge: search inside it with python -m perf.gate.bisect {culprit[:10]}^1 "
                     f"{culprit[:10]}^2 (the same options)")
    return ended(FOUND_EXIT, *lines)


def bisect_command(baseline: str, candidate: str, rows: list, threshold: float,
                   counted: bool = False) -> str | None:
    """The bisect that finds which commit made a failed gate's regressions (counted where the gate counted), where
    both versions are two different commits, a line to search; else None."""
    regressed = [row.benchmark for row in rows if row.verdict == words.REGRESSION]
    if not regressed or any(spec == "." or ":" in spec or Path(spec).is_file() for spec in (baseline, candidate)):
        return None
    try:
        if git("rev-parse", f"{baseline}^{{commit}}") == git("rev-parse", f"{candidate}^{{commit}}"):
            return None
    except (GateError, OSError):
        return None
    options = ["--benchmarks", ",".join(regressed), *["--count"][:counted]]
    options += [] if threshold == default_threshold(counted) else ["--threshold", f"{threshold:.0%}"]
    return f"{BISECT_HINT} python -m perf.gate.bisect {baseline} {candidate} {' '.join(options)} (docs/gate.md)"


def default_threshold(counted: bool) -> float:
    """The gate's threshold where none is given: its counted one where it counts (--count)."""
    return COUNTED_THRESHOLD if counted else DEFAULT_THRESHOLD


def git_parents(commit: str) -> list[str]:
    try:
        return git("rev-list", "--parents", "-n", "1", commit).split()[1:]
    except (GateError, OSError):
        return []


def first_parent_line(good: str, bad: str) -> tuple[str, list[str]]:
    """GOOD's full hash and the first-parent commits after it up to BAD, oldest first; BisectUsageError where the
    two do not make such a line."""
    if bad == "." or good == ".":
        raise BisectUsageError("GOOD and BAD must be commits: the search gates commits, and the working tree's "
                               "uncommitted changes are in none (commit them first)")
    resolved = []
    for name, spec in (("GOOD", good), ("BAD", bad)):
        try:
            resolved.append(git("rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"))
        except GateError:
            raise BisectUsageError(f"{name} {spec!r} is not a commit of this repository (a shallow clone lacks "
                                   f"history)") from None
    good_id, bad_id = resolved
    line = git("rev-list", "--first-parent", "--reverse", f"{good_id}..{bad_id}").split()
    if not line:
        raise BisectUsageError(f"BAD {bad!r} has no commit after GOOD {good!r}: nothing to search")
    if git("rev-parse", f"{line[0]}^1") != good_id:
        raise BisectUsageError(f"GOOD {good!r} is not on BAD's first-parent line (it came in through a merge): name "
                               f"a commit of that line, e.g. the merge's first parent")
    return good_id, line


def subject_of(commit: str) -> str:
    try:
        return f"({git('log', '-1', '--format=%s', commit)[:72]})"
    except (GateError, OSError):
        return ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.gate.bisect", description=__doc__.splitlines()[0],
                                     epilog="Any other option is the gate's, passed to every step: python -m "
                                            "perf.gate --help lists them.")
    parser.add_argument("good", metavar="GOOD", help="a commit that is not slower")
    parser.add_argument("bad", metavar="BAD", help="a later commit on its first-parent line that is")
    parser.add_argument("--json", type=Path, help="write every step and the ending there")
    parser.add_argument("--summary", type=Path, help="write the ending in Markdown there (and to $GITHUB_STEP_SUMMARY)")
    options, gate_options = parser.parse_known_args(argv)
    gate_threshold = argparse.ArgumentParser(prog=parser.prog, add_help=False)  # the gate's, passed on as it is
    gate_threshold.add_argument("--threshold", type=threshold_argument)
    gate_threshold.add_argument("--count", action="store_true")
    asked = gate_threshold.parse_known_args(gate_options)[0]
    threshold = default_threshold(asked.count) if asked.threshold is None else asked.threshold
    try:
        check_summary_targets(options.summary)
        good, commits = first_parent_line(options.good, options.bad)
    except (BisectUsageError, SummaryError, GateError) as error:
        parser.error(str(error))
    most = 2 + math.ceil(math.log2(len(commits))) if len(commits) > 1 else 1
    print(f"bisect: {len(commits)} first-parent commits after {good[:10]} up to {commits[-1][:10]}: at most {most} "
          f"gates (GOOD against BAD, {most - 2 if len(commits) > 1 else 0} halvings, one of the culprit against "
          f"its parent where those do not show it)")
    began, timed = time.perf_counter(), []

    def say(line):  # a step's gate as it prints, less the bisect it proposes: this is that bisect
        if not line.startswith(BISECT_HINT):
            print(f"  {line}")

    def run_step(baseline, candidate):
        found = gated(baseline, candidate, gate_options, say=say)
        if not timed and most > 1:
            more = found.seconds * (most - 1)
            print(f"bisect: a step took {found.seconds:.0f} s: at most about "
                  f"{f'{more / 60:.0f} minutes' if more >= 90 else f'{more:.0f} s'} more")
        timed.append(found)
        return found

    try:
        search = searched(good, commits, run_step, subject=subject_of, threshold=threshold)
    except BisectUsageError as error:
        parser.error(str(error))
    wall = time.perf_counter() - began
    search.lines.append(f"bisect: {len(search.steps)} gates in {wall / 60:.1f} minutes")
    print("\n".join(search.lines))
    ending = {"good": good, "bad": commits[-1], "commits": commits, "status": search.status,
              "ending": ENDINGS[search.status], "culprit": search.culprit, "lines": search.lines, "wall_s": wall,
              "steps": [asdict(step) for step in search.steps]}
    if options.json:
        options.json.write_text(json.dumps(ending, indent=1) + "\n")
    text = "\n".join([f"**bisect {ENDINGS[search.status]}** (exit {search.status})", "",
                      *(f"- {line.strip()}" for line in search.lines)])
    return summarized(text, options.summary, search.status, USAGE_EXIT,
                      lambda why: print(f"python -m perf.gate.bisect: error: {why}", file=sys.stderr))


if __name__ == "__main__":
    sys.exit(main())
