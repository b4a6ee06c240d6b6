"""python -m perf.gate: two versions timed on one machine in one job, trials interleaved, judged by paired ratios.

A committed baseline only fits the machine it was made on, and CI changes CPU model from one run
to the next; two versions measured side by side need no baseline. A version is

- a git revision of this repository (`HEAD~1`, `main`, a SHA), checked out in a temporary worktree;
- `.`, the working tree as it is (the default candidate);
- a Python interpreter (`.tox/tf212-cpu/bin/python`): this working tree run by it, e.g. another
  TensorFlow release.

    python -m perf.gate HEAD~1                       # the commit before against the working tree
    python -m perf.gate .tox/tf212-cpu/bin/python .tox/tf221-cpu/bin/python
    python -m perf.gate HEAD~1 --solvers numpy_loop,tf1_while_loop --json gate.json

Each version runs in a worker process of its own (perf/gate/worker.py: this tree's measurement with
that version's `solvers`), so what is compared is the solvers' code and the packages beneath them.
Every benchmark of either version gets `--trials` trials on each side, interleaved (perf/gate/interleave.py),
and a verdict (perf/gate/verdict.py). Regressions, errors (a wrong answer, a crash) and benchmarks the
candidate lost fail: exit 1. A run that cannot be gated (a revision that does not exist, a version that
cannot start) exits 2.
"""

import argparse
import json
import sys
from contextlib import ExitStack
from pathlib import Path

from perf.gate.interleave import DEFAULT_TRIALS, benchmarks_of, interleaved, listings
from perf.gate.verdict import DEFAULT_THRESHOLD, failed, format_report, verdict
from perf.gate.versions import GateError, Version, checked_out
from perf.gate.worker import GATE_THREADS, started
from perf.measure.profiles import PROFILES
from perf.measure.trials import SLOWDOWN_VARIABLE
from solvers.tensorflow_support import threads_argument

FAILED, CANNOT_GATE = 1, 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.gate", description=__doc__.splitlines()[0])
    parser.add_argument("baseline", help="git revision, '.', or a Python interpreter")
    parser.add_argument("candidate", nargs="?", default=".", help="the same kinds (default: '.', the working tree)")
    parser.add_argument("--solvers", help="comma-separated solver names (default: every solver of either version)")
    parser.add_argument("--devices", default="cpu", help="comma-separated devices (default: cpu)")
    parser.add_argument("--profile", default="quick", choices=sorted(PROFILES), help="sizes and the most steps a round")
    parser.add_argument("--trials", type=int, default=DEFAULT_TRIALS, help=f"trials per version and benchmark "
                        f"(default: {DEFAULT_TRIALS})")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                        help=f"slowdown that fails, as a fraction (default: {DEFAULT_THRESHOLD})")
    parser.add_argument("--threads", type=threads_argument, default=GATE_THREADS,
                        help=f"TensorFlow threads in both versions, 0 for TensorFlow's defaults (default: {GATE_THREADS})")
    parser.add_argument("--json", type=Path, help="also write every trial and verdict here")
    parser.add_argument("--candidate-slowdown", default="", metavar="SPEC",
                        help=f"test tooling: {SLOWDOWN_VARIABLE} for the candidate only, e.g. '*=1.25'")
    options = parser.parse_args(argv)
    if options.trials < 1 or options.threshold <= 0:
        parser.error("--trials must be at least 1 and --threshold above 0")
    profile = PROFILES[options.profile]
    try:
        with ExitStack() as stack:
            baseline = stack.enter_context(checked_out(options.baseline, "baseline"))
            candidate = stack.enter_context(checked_out(options.candidate, "candidate"))
            if options.candidate_slowdown:
                candidate = Version(candidate.label, f"{candidate.description}, slowed by {options.candidate_slowdown}",
                                    candidate.tree, candidate.python, options.candidate_slowdown)
            workers = stack.enter_context(started([baseline, candidate], options.threads))
            solvers = options.solvers.split(",") if options.solvers else None
            found = listings(workers)
            benchmarks = benchmarks_of(found, solvers, options.devices.split(","), profile)
            outcomes = interleaved(workers, found, benchmarks, options.trials, profile,
                                   progress=lambda text: print(f"gate: {text}", file=sys.stderr, flush=True))
    except GateError as error:
        print(f"gate: cannot gate: {error}", file=sys.stderr)
        return CANNOT_GATE
    rows = [verdict(outcome, baseline.label, candidate.label, options.threshold) for outcome in outcomes]
    print(format_report(rows, baseline, candidate, options.threshold))
    if options.json:
        options.json.write_text(json.dumps({
            "baseline": baseline.description, "candidate": candidate.description, "threshold": options.threshold,
            "rows": rows, "trials": {outcome.key.name: outcome.trials for outcome in outcomes},
        }, indent=1))
    return FAILED if failed(rows) else 0


if __name__ == "__main__":
    sys.exit(main())
