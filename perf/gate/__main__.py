"""python -m perf.gate: two versions timed on one machine in one job, in fresh processes, judged by paired ratios.

A version is a git revision, '.' (the working tree, the default candidate) or a Python interpreter that runs this tree:

    python -m perf.gate HEAD~1                       # the commit before against the working tree
    python -m perf.gate HEAD~5 HEAD --sizes 1000 --budget 150   # CI's drift gate

What it compares, how it measures (perf/gate/interleave.py, stages.py) and decides (perf/judge/rules.py), and how it
ends (perf/gate/ending.py: exit 0, 1 FAILED, 10 NOT MEASURED, 2 a usage error): docs/gate.md.
"""

import argparse
import json
import os
import random
import sys
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from perf.gate import counted, stages
from perf.gate.bisect import bisect_command
from perf.gate.interleave import GATE_THREADS, gate_affinity
from perf.gate.decide import command_line
from perf.gate.ending import USAGE_ERROR, ending, gate_summary, onednn_settings
from perf.gate.versions import GateError, GateUsageError, checked_out
from perf.judge.outcome import (ALLOW_UNAVAILABLE, COUNTED_THRESHOLD, DEFAULT_THRESHOLD, FAILED, NOT_MEASURED,
                                threshold_argument)
from perf.judge import words
from perf.judge.rules import FALSE_ALARM_RATE, RULED_OUT, Verdict
from perf.measure import Key, count, cpus
from perf.measure.environment import cpu_model, threads_argument
from perf.measure.profiles import PROFILES, seconds_argument
from perf.measure.schedule import MAX_TRIALS
from perf.measure.trials import SLOWDOWN_VARIABLE
from perf.measure.worker import WorkerStopped
from perf.step_summary import SUMMARY_VARIABLE, SummaryError, check_summary_targets, summarized
from solvers import DEVICES

# What the gate reads of a profile: its sizes (by default) and the most steps a round at each (rounds are sized to
# interleave.ROUND_S below that); its trials and rounds are the suite's, not the gate's, which has passes of its own.
GATE_PROFILE = PROFILES["quick"]
SIZES = sorted({n for profile in PROFILES.values() for n in profile.sizes})  # every size some profile benchmarks


def format_report(rows: list[Verdict], baseline, candidate, threshold: float, seed: int, confirmed: bool,
                  last_line: str, counting: bool = False) -> str:
    """The gate's report as the terminal prints it: its rule in words, a line per benchmark, then last_line."""
    coverages = sorted({f"{row.coverage:.2%}" for row in rows if row.coverage})
    per_pass = ("the log ratio of its instructions a step, counted under callgrind in a fresh process a version"
                if counting else "the median log ratio of its paired rounds")
    lines = [f"gate: candidate {candidate.description} / baseline {baseline.description}; seed {seed}",
             f"  per benchmark: the mean over passes (fresh processes each) of {per_pass}, with its interval "
             f"({', '.join(coverages) or '-'}, Bonferroni over the benchmarks);",
             f"  {words.printed(words.REGRESSION)}: slower than 1 + {threshold:.0%}/2 with the interval above 1; "
             f"{words.printed(words.CLEAR)}: a {threshold:.0%} slowdown ruled out at {1 - RULED_OUT:.1%}. On identical "
             f"versions at most {FALSE_ALARM_RATE:.0%} of runs flag a benchmark"
             + (f", and {FALSE_ALARM_RATE ** 2:.2%} fail after confirmation" if confirmed else ""),
             "  oneDNN: " + ", ".join(f"{version.label} {setting}"
                                      for version, setting in onednn_settings(baseline, candidate))
             + (f"; counted on every CPU, valgrind {count.settings()['valgrind']}" if counting
                else f"; workers on {cpus.affinity_setting(gate_affinity())}")]
    width = max((len(row.benchmark) for row in rows), default=10)
    lines.append(f"  {'benchmark':<{width}}  {'verdict':<12} {'ratio':>7}  {'interval':<17} {'passes':>6}  "
                 f"{'steps × calls':>13}")
    for row in rows:
        if row.ratio:
            interval = f"[{row.low:.3f}, {row.high:.3f}]"
            cells = f"{row.ratio:>7.3f}  {interval:<17} {row.passes:>6}  {row.steps:>6} × {row.calls:<5}"
        else:
            cells = f"{'-':>7}  {'':<17} {'':>6}  {'':>13}"
        lines.append(f"  {row.benchmark:<{width}}  {words.printed(row.verdict):<12} {cells}"
                     + (f"  ({row.why})" if row.why else ""))
    lines.append(last_line)
    return "\n".join(lines)


def listed_devices(parser, text: str) -> list[str]:
    devices = [device.strip() for device in text.split(",") if device.strip()]
    if not devices or set(devices) - set(DEVICES):
        parser.error(f"--devices: {text!r} is not a list of {', '.join(DEVICES)}")
    return devices


def sized_profile(parser, text: str | None):
    """The gate's profile at the sizes --sizes names (default: its own)."""
    if not text:
        return GATE_PROFILE
    try:
        sizes = tuple(int(size) for size in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or not set(sizes) <= set(SIZES):
        parser.error(f"--sizes: {text!r} is not among the suite's sizes ({','.join(map(str, SIZES))})")
    return replace(GATE_PROFILE, sizes=sizes)


def listed_benchmarks(parser, options) -> list[Key]:
    """The Keys --benchmarks names, each a device and size the gate knows; their solvers are checked by the versions
    themselves, as --solvers' are."""
    if options.solvers or options.devices or options.sizes:
        parser.error("--benchmarks names each benchmark's solver, device and size: give it without --solvers, "
                     "--devices and --sizes")
    try:
        keys = [Key.named(name.strip()) for name in options.benchmarks.split(",") if name.strip()]
    except ValueError as error:
        parser.error(f"--benchmarks: {error}")
    if not keys:
        parser.error(f"--benchmarks: {options.benchmarks!r} names none")
    for key in keys:
        if key.device not in DEVICES or key.n not in SIZES:
            parser.error(f"--benchmarks: {key.name} is not on a device of {', '.join(DEVICES)} at one of the suite's "
                         f"sizes ({','.join(map(str, SIZES))})")
    return list(dict.fromkeys(keys))


class GateParser(argparse.ArgumentParser):
    """argparse's parser, whose errors once the command's summary can be written go there too: a CI page that shows
    nothing reads as nothing wrong."""
    summary_report = None  # (the report so far, the --summary path), set once the targets are checked

    def usage_error(self, message) -> int:
        """USAGE_ERROR, once the summary says so where it can be written: for the parser's errors and the versions'."""
        if not self.summary_report:
            return USAGE_ERROR
        report, path = self.summary_report
        return ended({**report, "status": USAGE_ERROR, "ending": f"gate {words.USAGE_ERROR}: {message}"}, path)

    def error(self, message):
        self.usage_error(message)
        super().error(message)


def replaying(argv: list[str], seed: int | None) -> str:
    """The command that replays this gate here: its arguments with this seed (where one is drawn yet), less --summary
    (a file of CI's)."""
    dropped = ("--seed", "--summary")  # with their values, given apart or after "="
    kept = [argument for before, argument in zip([None, *argv], argv)
            if before not in dropped and not argument.startswith(dropped)]
    return command_line([*kept, *(["--seed", str(seed)] if seed is not None else [])])


def error_said(why: str) -> None:
    print(f"python -m perf.gate: error: {why}", file=sys.stderr)


def ended(report: dict, path: Path | None) -> int:
    """The gate's exit status, once the report's summary is written where asked (--summary, $GITHUB_STEP_SUMMARY)."""
    return summarized(gate_summary(report), path, report["status"], USAGE_ERROR, error_said)


def main(argv=None) -> int:
    parser = GateParser(prog="python -m perf.gate", description=__doc__.splitlines()[0])
    parser.add_argument("baseline", help="git revision, '.', or a Python interpreter")
    parser.add_argument("candidate", nargs="?", default=".", help="the same kinds (default: '.', the working tree)")
    parser.add_argument("--solvers", help="comma-separated solver names (default: every solver of either version)")
    parser.add_argument("--devices", help=f"comma-separated devices, of {','.join(DEVICES)} (default: cpu)")
    parser.add_argument(ALLOW_UNAVAILABLE, action="store_true",
                        help="a device that nothing could be timed on (no GPU visible) is allowed, said in the report, "
                             "instead of NOT MEASURED: for a CPU-only runner in a CPU and GPU matrix")
    parser.add_argument("--sizes", help=f"comma-separated sizes n, among the suite's ({','.join(map(str, SIZES))}) "
                                        f"(default: {','.join(map(str, GATE_PROFILE.sizes))})")
    parser.add_argument("--benchmarks", metavar="NAMES",
                        help="exactly these benchmarks, comma-separated, as SOLVER-DEVICE-nN "
                             "(tf1_feed_dict-cpu-n1000), instead of --solvers, --devices and --sizes")
    parser.add_argument("--budget", type=seconds_argument, metavar="SECONDS",
                        help=f"no screening pass starts after this, once each benchmark has had "
                             f"{stages.MIN_PASSES} ({counted.COUNTED_MIN_PASSES} counted); the undecided get passes "
                             f"until then, up to {MAX_TRIALS} ({counted.COUNTED_MAX_PASSES}) "
                             f"(default: {stages.DEFAULT_BUDGET_S:.0f}; {counted.COUNTED_BUDGET_S} counted)")
    parser.add_argument("--passes", type=int, help="exactly this many screening passes, none stopped early")
    parser.add_argument("--no-confirm", action="store_true", help="report the screen's verdicts as they are")
    parser.add_argument("--seed", type=int, help="replay a run's shuffles and orders (default: a new one, printed)")
    parser.add_argument("--threshold", type=threshold_argument, metavar="PCT",
                        help=f"the slowdown the gate must catch, e.g. 10%% (default: {DEFAULT_THRESHOLD:.0%}%; "
                             f"{COUNTED_THRESHOLD:.0%}% counted)")
    parser.add_argument("--count", action="store_true",
                        help="judge instructions a step counted under valgrind's callgrind instead of time: both "
                             "versions in fresh processes at once, on every CPU (CPU benchmarks only; docs/gate.md)")
    parser.add_argument("--threads", type=threads_argument, default=GATE_THREADS,
                        help=f"TensorFlow threads in both versions, 0 for TensorFlow's defaults "
                             f"(default: {GATE_THREADS})")
    parser.add_argument("--cpu-affinity", type=cpus.affinity_argument, metavar="LIST",
                        help="the CPUs every worker is timed on, as taskset -c takes them: 1, 0,1, 0-1 (default: the "
                             "quiet CPU: of those this process may use, the one taking the fewest block-device "
                             "interrupts, the last on a tie; 'quiet' names it; why one: docs/gate.md)")
    parser.add_argument("--json", type=Path, help="also write every pass's ratios and every verdict here")
    parser.add_argument("--summary", type=Path, metavar="FILE",
                        help=f"also write the ending in Markdown here (${SUMMARY_VARIABLE}, where set, is appended to "
                             "without it): the verdict, the flagged benchmarks, what was not measured, the machine, "
                             "the command that replays it, every verdict")
    parser.add_argument("--candidate-slowdown", default="", metavar="SPEC",
                        help=f"test tooling: {SLOWDOWN_VARIABLE} for the candidate only, e.g. '*=1.25'")
    options = parser.parse_args(argv)  # --help first: it works wherever Python runs
    if options.threshold is None:
        options.threshold = COUNTED_THRESHOLD if options.count else DEFAULT_THRESHOLD
    if options.budget is None:
        options.budget = counted.COUNTED_BUDGET_S if options.count else stages.DEFAULT_BUDGET_S
    try:
        cpus.allowed()  # the gate always pins its workers
        check_summary_targets(options.summary)  # before anything is timed
    except (ValueError, SummaryError) as error:
        parser.error(str(error))
    arguments = sys.argv[1:] if argv is None else list(argv)
    # What every ending says, a usage error alike, filled in as the gate learns it: the machine, how to replay it (no
    # drawn seed yet), and below what was asked and where its workers ran.
    report = {"rows": [], "machine": cpu_model(), "command": replaying(arguments, options.seed)}
    parser.summary_report = (report, options.summary)
    if options.cpu_affinity:
        os.environ[cpus.AFFINITY_VARIABLE] = cpus.compact(options.cpu_affinity)
    if options.passes is not None and options.passes < 2:
        parser.error("--passes must be at least 2")
    if options.count:
        if reason := count.unavailable_reason():
            parser.error(f"--count: cannot count here: {reason}")
        if options.candidate_slowdown:
            parser.error("--count with --candidate-slowdown: the slowdown stretches time, which a count does not "
                         "measure; slow the candidate's code instead")
    if options.benchmarks:
        only = listed_benchmarks(parser, options)
        solvers = list(dict.fromkeys(key.solver for key in only))
        devices = list(dict.fromkeys(key.device for key in only))
        profile = replace(GATE_PROFILE, sizes=tuple(sorted({key.n for key in only})))
    else:
        only, solvers = None, options.solvers.split(",") if options.solvers else None
        devices, profile = listed_devices(parser, options.devices or "cpu"), sized_profile(parser, options.sizes)
    if options.count and "gpu" in devices:
        parser.error(f"--count with a GPU benchmark: {counted.NOT_COUNTED}")
    seed = random.SystemRandom().randrange(2**32) if options.seed is None else options.seed
    say = lambda text: print(f"gate: {text}", file=sys.stderr, flush=True)  # noqa: E731
    say(f"seed {seed} (--seed {seed} replays it)")
    asked = (f"benchmarks {options.benchmarks}" if options.benchmarks else
             f"{'solvers ' + options.solvers if options.solvers else 'every solver'} on {', '.join(devices)} at n = "
             f"{', '.join(f'{n:,}' for n in profile.sizes)}")
    report.update(baseline=options.baseline, candidate=options.candidate, threshold=options.threshold, seed=seed,
                  asked=asked, cpu_affinity=cpus.affinity_setting(gate_affinity()), confirmed=not options.no_confirm,
                  command=replaying(arguments, seed), measure="instructions" if options.count else "time")
    if options.count:
        report["count"] = count.settings()
    try:
        with ExitStack() as stack:
            baseline = stack.enter_context(checked_out(options.baseline, "baseline"))
            candidate = stack.enter_context(checked_out(options.candidate, "candidate"))
            if options.candidate_slowdown:
                candidate = candidate.with_env(**{SLOWDOWN_VARIABLE: options.candidate_slowdown})
            versions = [baseline, candidate]
            if options.count:
                screen = counted.screening(options.threshold, options.budget, options.passes)
                outcomes = counted.screened(versions, options.threads, solvers, devices, profile, screen, seed, say,
                                            only)
            else:
                screen = stages.screening(options.threshold, options.budget, options.passes)
                outcomes = stages.screened(versions, options.threads, solvers, devices, profile, screen, seed, say,
                                           only)
            rows = stages.verdicts(outcomes, candidate.label, screen)
            if not options.no_confirm and options.count:
                rows = counted.confirmed(versions, options.threads, outcomes, rows, options.threshold, seed + 1, say)
            elif not options.no_confirm:
                rows = stages.confirmed(versions, options.threads, outcomes, rows, profile, options.threshold,
                                        seed + 1, say)
    except GateUsageError as error:
        error_said(str(error))
        return parser.usage_error(str(error))
    except (GateError, WorkerStopped) as error:
        print(last_line := f"gate {words.NOT_MEASURED}: {error}")
        return ended({**report, "status": NOT_MEASURED, "ending": last_line}, options.summary)
    status, last_line = ending(rows, {outcome.key.name: outcome.key.device for outcome in outcomes}, devices,
                               options.allow_unavailable_devices)
    print(format_report(rows, baseline, candidate, options.threshold, seed, not options.no_confirm, last_line,
                        options.count))
    # A failed gate between two commits: the command that finds which commit between them did it.
    # Not where the candidate is slowed on purpose: that slowdown is in no commit.
    if status == FAILED and not options.candidate_slowdown and (
            line := bisect_command(options.baseline, options.candidate, rows, options.threshold, options.count)):
        print(line)
    report.update({
        "baseline": baseline.description, "candidate": candidate.description, "status": status, "ending": last_line,
        "rows": [row.saved() for row in rows],
        "onednn": {version.label: setting for version, setting in onednn_settings(baseline, candidate)},
        "passes": {outcome.key.name: outcome.log_ratios for outcome in outcomes},
    })
    if options.json:
        options.json.write_text(json.dumps(report, indent=1))
    return ended(report, options.summary)


if __name__ == "__main__":
    sys.exit(main())
