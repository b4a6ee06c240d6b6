"""A/B gate: two versions timed on one machine in one job, trials interleaved, judged by paired ratios with intervals.

A committed baseline only fits the machine it was made on, and CI changes CPU model from one run
to the next; two versions measured side by side need no baseline. A version is

- a git revision of this repository (`HEAD~1`, `main`, a SHA), checked out in a temporary worktree;
- `.`, the working tree as it is (the default candidate);
- a Python interpreter (`.tox/tf212-cpu/bin/python`): this working tree run by it, e.g. another
  TensorFlow release.

    python -m perf.ab_gate HEAD~1                       # the commit before against the working tree
    python -m perf.ab_gate .tox/tf212-cpu/bin/python .tox/tf221-cpu/bin/python
    python -m perf.ab_gate HEAD~1 --solvers numpy_loop,tf1_while_loop --json ab.json

Each version runs in a worker process of its own (perf/trials.py from this tree, importing that
version's `solvers`), so what is compared is the solvers' code and the packages beneath them.
Every benchmark gets `--trials` trials on each side; in each pass the benchmarks are shuffled and
each benchmark's two trials run back to back in random order, so a slow state of the machine
either hits both trials of a pair or a different benchmark each time (randomized interleaved
trials: Abedi & Brecht, ICPE 2017; asv's `continuous`). A trial is a fresh setup, a warm-up and a
few rounds of `iterations` steps (times `loops` calls, for solvers whose run takes microseconds), sized
once per benchmark on the baseline so that a round takes about ROUND_S.

Per pair of trials the ratio is median(candidate rounds) / median(baseline rounds). The verdict
reads the median of those ratios and its 90% distribution-free interval (perf/estimators.py):
REGRESSION when the ratio is above 1 + threshold and the whole interval above 1 (slower by more
than the threshold, and significantly); IMPROVEMENT is the mirror image; INCONCLUSIVE when the
ratio is past a limit but the interval still reaches 1; PASS otherwise. Regressions, errors (a
wrong answer, a crash) and benchmarks the candidate lost fail: exit 1. A run that cannot be
gated (a revision that does not exist, a version that cannot start) exits 2.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from perf import estimators
from perf.profiles import PROFILES
from perf.trials import SLOWDOWN_VARIABLE
from solvers.tensorflow_support import threads_argument

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().parent / "trials.py"
# Short rounds: a pair of trials then spans well under a second, inside one machine state.
ROUND_S = 0.03
MIN_ITERATIONS = 10
ROUNDS_PER_TRIAL = 3
# Eight: the fewest whose 90% interval of the median drops the lowest and the highest trial, so one trial in
# a slow state (or a TF1 session in its slower mode) cannot decide a verdict alone.
DEFAULT_TRIALS = 8
# From the noise study (python -m perf.noise_study): see README "The regression gate".
DEFAULT_THRESHOLD = 0.10
# The gate pins TensorFlow to one thread, unlike the benchmarks (TensorFlow's defaults, as the seed ran): in
# A/A runs here its 90% intervals were a third narrower pinned (median width 7.0-7.5%, against 10.7-13.0%
# with the defaults; two runs each), so a real slowdown clears them sooner. README "The regression gate".
GATE_THREADS = 1
SEED = 20261130  # the shuffles are seeded, so a rerun replays the same order
FAILED, CANNOT_GATE = 1, 2


class GateError(Exception):
    """The versions cannot be compared; the message says why."""


@dataclass(frozen=True)
class Version:
    label: str  # "baseline", "candidate", or a noise-study variant: unique within a session
    description: str  # what it is: a revision and its commit, the working tree, an interpreter
    tree: Path
    python: str
    slowdown: str = ""  # FSSGD_SLOWDOWN for this version's worker: test tooling, empty by default


@dataclass(frozen=True)
class Benchmark:
    solver: str
    device: str
    n: int

    @property
    def name(self) -> str:
        return f"{self.solver}-{self.device}-n{self.n}"


@dataclass
class Outcome:
    """One benchmark's trials on each version, or why it has none."""
    benchmark: Benchmark
    iterations: int = 0
    loops: int = 1  # calls of run(iterations) a round
    trials: dict = field(default_factory=dict)  # version label -> [trial dicts]
    problem: str | None = None  # "missing", "new", "error: ...", "skipped: ..."


# ---------------------------------------------------------------------------- versions


def git(*args, cwd=ROOT) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode:
        raise GateError(f"git {' '.join(args)}: {result.stderr.strip() or 'failed'}")
    return result.stdout.strip()


@contextmanager
def checked_out(spec: str, label: str):
    """The Version that spec names; a revision is checked out in a temporary worktree for the duration."""
    if spec == ".":
        yield Version(label, "the working tree", ROOT, sys.executable)
        return
    if Path(spec).is_file() and os.access(spec, os.X_OK):
        yield Version(label, f"the working tree run by {spec}", ROOT, spec)
        return
    try:
        commit = git("rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}")
    except GateError:
        raise GateError(f"{spec!r} is neither a git revision of this repository (is the history there? a shallow "
                        f"clone lacks the commit before HEAD), nor '.', nor an executable Python interpreter") from None
    with tempfile.TemporaryDirectory(prefix="fssgd-ab-") as folder:
        tree = Path(folder) / "tree"
        git("worktree", "add", "--detach", "--quiet", str(tree), commit)
        try:
            yield Version(label, f"{spec} ({commit[:10]})", tree, sys.executable)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)


class Worker:
    """One version's worker process: a JSON request per line in, a JSON reply per line out."""

    def __init__(self, version: Version, threads: int):
        self.version = version
        env = {key: value for key, value in os.environ.items() if key != SLOWDOWN_VARIABLE}
        env.update(FSSGD_THREADS=str(threads), TF_CPP_MIN_LOG_LEVEL="3", PYTHONDONTWRITEBYTECODE="1")
        if version.slowdown:
            env[SLOWDOWN_VARIABLE] = version.slowdown
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen([version.python, str(WORKER), str(version.tree)], cwd=version.tree, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)

    def ask(self, request: dict) -> dict:
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except OSError:
            line = ""
        if not line:
            self.log.seek(0)
            tail = "\n    ".join(self.log.read().strip().splitlines()[-5:])
            raise GateError(f"the worker for the {self.version.label}, {self.version.description}, stopped:\n    {tail}")
        return json.loads(line)

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


# ---------------------------------------------------------------------------- measuring


def benchmarks_of(available: dict, solvers: list[str] | None, devices: list[str], profile) -> list[Benchmark]:
    names = solvers or list(available)
    return [Benchmark(name, device, n) for name in names for device in devices for n in profile.sizes]


def calibrated(worker: Worker, benchmark: Benchmark, most: int) -> tuple[int, int]:
    """(steps a call, calls a round) for rounds of about ROUND_S: steps within [MIN_ITERATIONS, most] from the
    fastest of three short calls, then calls enough to fill the round where most steps still fall short.
    (0, 0) when the solver fails."""
    def fastest_call_s(iterations):
        reply = worker.ask({"op": "trial", "solver": benchmark.solver, "device": benchmark.device, "n": benchmark.n,
                            "iterations": iterations, "max_rounds": 3})
        return min(reply["trial"]["rounds_s"]) if "trial" in reply else None

    if (short_s := fastest_call_s(MIN_ITERATIONS)) is None:
        return 0, 0
    iterations = max(MIN_ITERATIONS, min(most, int(ROUND_S / (short_s / MIN_ITERATIONS))))
    if iterations < most:
        return iterations, 1
    if (call_s := fastest_call_s(iterations)) is None:
        return 0, 0
    return iterations, max(1, round(ROUND_S / call_s))


def interleaved(workers: dict, benchmarks: list[Benchmark], trials: int, profile, seed: int = SEED,
                progress=None) -> list[Outcome]:
    """Every benchmark's trials on every version, shuffled pass by pass; workers: version label -> Worker."""
    labels = list(workers)
    first = workers[labels[0]]
    listings = {label: worker.ask({"op": "solvers"}) for label, worker in workers.items()}
    outcomes = []
    for benchmark in benchmarks:
        outcome = Outcome(benchmark)
        outcomes.append(outcome)
        present = [label for label in labels if benchmark.device in listings[label]["solvers"].get(benchmark.solver, ())]
        if len(present) < len(labels):
            outcome.problem = "new" if labels[0] not in present else "missing"
            continue
        reasons = {label: listings[label]["unavailable"].get(benchmark.solver)
                   or listings[label].get("devices_unavailable", {}).get(benchmark.device) for label in labels}
        if all(reasons.values()):
            outcome.problem = f"skipped: {reasons[labels[0]]}"
            continue
        if reasons[labels[0]]:
            outcome.problem = f"new: the baseline cannot run it ({reasons[labels[0]]})"
            continue
        if lacking := [label for label in labels if reasons[label]]:
            outcome.problem = f"error on {lacking[0]}: {reasons[lacking[0]]}"
            continue
        outcome.iterations, outcome.loops = calibrated(first, benchmark, profile.iterations_at(benchmark.n))
        if not outcome.iterations:
            outcome.problem = "error: it failed on the baseline while sizing its rounds"
        outcome.trials = {label: [] for label in labels}
    rng = random.Random(seed)
    live = [outcome for outcome in outcomes if outcome.problem is None]
    for trial in range(trials):
        for outcome in rng.sample(live, len(live)):
            for label in rng.sample(labels, len(labels)):
                if outcome.problem:
                    break
                benchmark = outcome.benchmark
                reply = workers[label].ask({"op": "trial", "solver": benchmark.solver, "device": benchmark.device,
                                            "n": benchmark.n, "iterations": outcome.iterations, "loops": outcome.loops,
                                            "max_rounds": ROUNDS_PER_TRIAL})
                if "trial" in reply:
                    outcome.trials[label].append(reply["trial"])
                else:
                    outcome.problem = f"error on {label}: {reply.get('error') or reply.get('missing')}"
        if progress:
            progress(f"pass {trial + 1}/{trials} done")
    return outcomes


def verdict(outcome: Outcome, baseline: str, candidate: str, threshold: float) -> dict:
    """The row for one benchmark: ratio candidate/baseline with its interval, and what it means."""
    row = {"benchmark": outcome.benchmark.name, "iterations": outcome.iterations, "loops": outcome.loops}
    if outcome.problem:
        kind = outcome.problem.split(":")[0].split(" ")[0]
        return {**row, "verdict": kind, "why": outcome.problem}
    ratios = [statistics.median(b["rounds_s"]) / statistics.median(a["rounds_s"])
              for a, b in zip(outcome.trials[baseline], outcome.trials[candidate])]
    ratio, low, high = estimators.median_interval(ratios)
    row.update(ratio=ratio, low=low, high=high, trials=len(ratios))
    if ratio > 1 + threshold and low > 1:
        row["verdict"] = "regression"
    elif ratio < 1 / (1 + threshold) and high < 1:
        row["verdict"] = "improvement"
    elif ratio > 1 + threshold or ratio < 1 / (1 + threshold):
        row.update(verdict="inconclusive", why="past the threshold, but the interval reaches 1")
    else:
        row["verdict"] = "pass"
    return row


FAILING = ("regression", "error", "missing")


def format_report(rows: list[dict], baseline: Version, candidate: Version, threshold: float) -> str:
    lines = [f"ab-gate: candidate {candidate.description} / baseline {baseline.description}, per benchmark the median of paired trial ratios, "
             f"{estimators.CONFIDENCE:.0%} interval, threshold +{threshold:.0%}"]
    width = max((len(row["benchmark"]) for row in rows), default=10)
    lines.append(f"  {'benchmark':<{width}}  {'verdict':<12} {'ratio':>7}  {'interval':<17} {'steps × calls':>13}")
    for row in rows:
        if "ratio" in row:
            interval = f"[{row['low']:.3f}, {row['high']:.3f}]"
            figures = f"{row['ratio']:>7.3f}  {interval:<17} {row['iterations']:>6} × {row['loops']:<4}"
        else:
            figures = f"{'-':>7}  {'':<17} {'':>13}"
        lines.append(f"  {row['benchmark']:<{width}}  {row['verdict'].upper():<12} {figures}"
                     + (f"  ({row['why']})" if row.get("why") else ""))
    counts = {}
    for row in rows:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    summary = ", ".join(f"{count} {name}" for name, count in counts.items())
    lines.append(f"ab-gate {'FAILED' if failed(rows) else 'passed'}: {summary or 'nothing to compare'}")
    return "\n".join(lines)


def failed(rows: list[dict]) -> bool:
    return any(row["verdict"] in FAILING for row in rows)


@contextmanager
def started(versions: list[Version], threads: int):
    """A worker per version, closed on the way out."""
    with ExitStack() as stack:
        workers = {}
        for version in versions:
            worker = Worker(version, threads)
            stack.callback(worker.close)
            workers[version.label] = worker
        yield workers


# ---------------------------------------------------------------------------- command line


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.ab_gate", description=__doc__.splitlines()[0])
    parser.add_argument("baseline", help="git revision, '.', or a Python interpreter")
    parser.add_argument("candidate", nargs="?", default=".", help="the same kinds (default: '.', the working tree)")
    parser.add_argument("--solvers", help="comma-separated solver names (default: every solver of the candidate)")
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
            available = workers[candidate.label].ask({"op": "solvers"})["solvers"]
            solvers = options.solvers.split(",") if options.solvers else None
            benchmarks = benchmarks_of(available, solvers, options.devices.split(","), profile)
            outcomes = interleaved(workers, benchmarks, options.trials, profile,
                                   progress=lambda text: print(f"ab-gate: {text}", file=sys.stderr, flush=True))
    except GateError as error:
        print(f"ab-gate: cannot gate: {error}", file=sys.stderr)
        return CANNOT_GATE
    rows = [verdict(outcome, baseline.label, candidate.label, options.threshold) for outcome in outcomes]
    print(format_report(rows, baseline, candidate, options.threshold))
    if options.json:
        options.json.write_text(json.dumps({
            "baseline": baseline.description, "candidate": candidate.description, "threshold": options.threshold,
            "rows": rows, "trials": {outcome.benchmark.name: outcome.trials for outcome in outcomes},
        }, indent=1))
    return FAILED if failed(rows) else 0


if __name__ == "__main__":
    sys.exit(main())
