"""Noise study of the gate: its false alarms on identical versions, and how often it catches real slowdowns.

    python -m perf.research.noise_study record --repeats 3 --out .noise-study        # control, copies, slowed copies
    python -m perf.research.noise_study record --out .noise-study --neighbour        # the same beside a noisy neighbour
    python -m perf.research.noise_study record --repeats 2 --code-regressions --slowdowns 1.1
    python -m perf.research.noise_study record --slowdowns 1.1 --slowed-groups 3     # a third slowed at a time
    python -m perf.research.noise_study true-factors --out .noise-study              # what the code regressions cost
    python -m perf.research.noise_study analyze --out .noise-study                   # re-read the saved repeats
    python -m perf.research.noise_study replay --min-passes 5 --out .noise-study     # their passes, another stopping
    python -m perf.research.noise_study resample --draws 1000 --out .noise-study     # their noise, many comparisons

Each repeat times, in the same passes as the gate times its two versions (perf/gate/interleave.py),
a control and variants of this working tree: identical copies (A/A), copies whose every timed call
is slowed for real by a factor (FSSGD_SLOWDOWN, a busy wait inside the call: every solver at once, or with
--slowed-groups K a copy per factor and group that slows one of K groups of the solvers), and with
--code-regressions real changes to the solvers' code, checked out in worktrees (CODE_REGRESSIONS).
The passes follow the gate's rule for every variant at once: each variant keeps the clock of its own gate
(perf/research/side_by_side.py), which times it alone beside the control, and a benchmark is timed in a pass while some
variant's gate would time it; each variant is judged on the passes its own gate gave the benchmark.
Every flagged (variant, benchmark) is then measured again alone, as the gate confirms. A REGRESSION on
an identical copy is a false alarm, one on a slowed or changed copy a catch. With --neighbour a
bounded load runs on the other CPU all through the repeat (perf/research/neighbour.py).
"""

import argparse
import json
import math
import os
import random
import statistics
import sys
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path

from perf import gate
from perf.judge.outcome import DEFAULT_THRESHOLD, threshold_argument
from perf.judge.rules import FALSE_ALARM_RATE, POWER
from perf.judge.statistics import t_quantile
from perf.judge.words import CLEAR, IMPROVEMENT, INCONCLUSIVE, MISSING, NEW, REGRESSION, SKIPPED, verdict_read
from perf.measure import cpus
from perf.measure.environment import threads_argument
from perf.measure.profiles import PROFILES
from perf.measure.trials import SLOWDOWN_VARIABLE, slowdown_factors
from perf.measure.worker import ROOT, Version
from perf.research import side_by_side
from perf.research.neighbour import noisy_neighbour

CONTROL = "control"
SLOWDOWNS = (1.05, 1.1, 1.25)
# Real regressions a commit could make: (name, file, the text it replaces, the text it puts instead, the solvers
# it slows). Each changes only the timed code and keeps every answer.
CODE_REGRESSIONS = (
    ("an extra fetch every Session.run", "solvers/tf1_feed_dict.py",
     "[graph.train, graph.loss]", "[graph.train, graph.loss, graph.W]", ("tf1_feed_dict",)),
    ("an extra pass inside the tf.while_loop body", "solvers/tf1_while_loop.py",
     "return i + 1, w - lr * grad_w, b - lr * grad_b",
     "return i + 1, w - lr * grad_w, b - lr * grad_b + 0.0 * tf.reduce_sum(residual * residual)",
     ("tf1_while_loop", "tf1_while_loop_standardized")),
    ("an extra pass every NumPy step", "solvers/numpy_loop.py",
     "            loss = np.sum((y - y_pred) ** 2) / n\n        return",
     "            loss = np.sum((y - y_pred) ** 2) / n\n            np.sum(y_pred * y_pred)\n        return",
     ("numpy_loop",)),
)
TRUE_FACTOR_PASSES = 24


@contextmanager
def code_regression(name: str, path: str, old: str, new: str):
    """A worktree of HEAD with one real change to the solvers' code, removed on the way out."""
    with gate.checked_out("HEAD", f"code: {name}") as version:
        source = (version.tree / path).read_text()
        if source.count(old) != 1:
            raise SystemExit(f"noise study: {path} no longer holds the text the regression {name!r} replaces")
        (version.tree / path).write_text(source.replace(old, new))
        yield replace(version, description=f"HEAD with {name}")


def variants(options, stack: ExitStack) -> list[Version]:
    """The control first, then the identical copies, the slowed copies and the code regressions."""
    versions = [Version(CONTROL, "the working tree", ROOT, sys.executable)]
    versions += [Version(f"A/A-{copy + 1}", "the working tree", ROOT, sys.executable) for copy in range(options.identical)]
    versions += [Version(label, "the working tree", ROOT, sys.executable).with_env(**{SLOWDOWN_VARIABLE: spec})
                 for factor in options.slowdowns for label, spec in slowed_copies(factor, options.slowed_groups, options.solvers)]
    if options.code_regressions:
        versions += [stack.enter_context(code_regression(name, path, old, new))
                     for name, path, old, new, _ in CODE_REGRESSIONS]
    return versions


def slowed_copies(factor: float, groups: int, solvers: str | None) -> list[tuple[str, str]]:
    """(label, FSSGD_SLOWDOWN) of the copies slowed by factor: one slowing every solver, or one per group, each slowing
    every groups-th of the solvers (default: the registry's) in turn, so that each group holds every kind. A gate
    that times a few slowed benchmarks among many unchanged spends its passes past the fewest on those few; one with
    every benchmark slowed must share them out."""
    if groups == 1:
        return [(f"x{factor:g}", f"*={factor:g}")]
    if solvers is None:
        import solvers as registry

        solvers = ",".join(registry.REGISTRY)
    names = solvers.split(",")
    return [(f"x{factor:g} ({group + 1} of {groups})", ",".join(f"{name}={factor:g}" for name in names[group::groups]))
            for group in range(min(groups, len(names)))]


def record(repeat: int, out: Path, options) -> Path:
    profile, say = PROFILES[options.profile], (lambda text: print(f"  {text}", flush=True))
    solvers = options.solvers.split(",") if options.solvers else None
    with ExitStack() as stack:
        versions = variants(options, stack)
        labels = [version.label for version in versions]
        cpu = int(options.cpu)
        load = noisy_neighbour(cpu, seed=repeat) if options.neighbour else nullcontext()
        screen = gate.screening(options.threshold, options.budget, options.passes)
        with load:
            timed = side_by_side.measured(versions, options.threads, gate.benchmarks_named(solvers, ["cpu"], profile),
                                          profile, options.seed + repeat, screen, say, preload=solvers)
            outcomes = timed.outcomes
            screening = {label: timed.verdicts(label, screen) for label in labels[1:]}
            flagged = {label: gate.flagged_keys(outcomes, rows) for label, rows in screening.items()}
            confirmation = side_by_side.confirmation(versions, options.threads, flagged, profile,
                                                     gate.confirming(options.threshold), options.seed + 1000 + repeat,
                                                     say)
            screening = {label: {row.benchmark: row.saved() for row in rows} for label, rows in screening.items()}
            confirmation = {label: {name: row.saved() for name, row in rows.items()}
                            for label, rows in confirmation.items()}
    path = out / f"repeat-{repeat:02d}.json"
    # Every pass's value, also those past where the gate would have stopped a variant: the spreads come from them.
    values = {label: {outcome.key.name: [value for *_, value in outcome.log_ratios[label]] for outcome in outcomes
                      if outcome.unjudged is None} for label in labels[1:]}
    path.write_text(json.dumps({"threshold": options.threshold, "neighbour": options.neighbour,
                                "passes": options.passes or "the gate's", "budget_s": options.budget,
                                "screening": screening, "confirmation": confirmation, "values": values,
                                "factors": {version.label: dict(version.env).get(SLOWDOWN_VARIABLE, "") for version in versions}}, indent=1))
    return path


def true_factors(out: Path, options) -> Path:
    """Each code regression against the control on the solvers it slows, in options.passes passes."""
    profile, found = PROFILES[options.profile], {}
    for name, path, old, new, slowed in CODE_REGRESSIONS:
        with code_regression(name, path, old, new) as version:
            control = Version(CONTROL, "the working tree", ROOT, sys.executable)
            each = gate.fixed(gate.Stopping(options.threshold, per_run=False), options.passes)
            outcomes = gate.screened([control, version], options.threads, list(slowed), ["cpu"], profile, each,
                                     options.seed, lambda text: print(f"  {name}: {text}", flush=True))
            found[version.label] = {row.benchmark: row.saved() for row in gate.verdicts(outcomes, version.label, each)}
    target = out / "true-factors.json"
    target.write_text(json.dumps(found, indent=1))
    return target


def kind_of(label: str, name: str, slowdown: str = "") -> str:
    """What a comparison tests: an identical copy, a slowed copy (all solvers at once or a group of them), a benchmark
    a code regression slows, or one a change leaves alone (which, like an identical copy, must not be flagged).
    slowdown: the variant's FSSGD_SLOWDOWN."""
    if label.startswith("A/A"):
        return "identical copies (A/A)"
    if label.startswith("x"):
        factors = slowdown_factors(slowdown or f"*={label[1:]}")  # a repeat that kept no factors slowed all
        if "*" in factors:
            return f"slowed {factors['*']:g}x"
        solver = name.split("-")[0]
        return f"slowed {factors[solver]:g}x, a group of solvers at a time" if solver in factors else \
            "benchmarks a slowdown of other solvers leaves alone"
    regression = next(entry for entry in CODE_REGRESSIONS if label == f"code: {entry[0]}")
    return label if name.split("-")[0] in regression[4] else "benchmarks a code regression leaves alone"


def comparisons(repeats: list[dict]):
    """(kind and condition, variant label, benchmark, its screening row, its repeat) of every comparison made."""
    for repeat in repeats:
        condition = ", noisy neighbour" if repeat["neighbour"] else ", quiet"
        for label, rows in repeat["screening"].items():
            for name, row in rows.items():
                if row["verdict"] not in (SKIPPED, NEW, MISSING):
                    yield kind_of(label, name, repeat.get("factors", {}).get(label, "")) + condition, label, name, row, repeat


def tallies(repeats: list[dict]) -> dict:
    """kind and condition -> benchmark -> [comparisons, flagged in the screen, confirmed, improvements, inconclusive]."""
    found = {}
    for kind, label, name, row, repeat in comparisons(repeats):
        tally = found.setdefault(kind, {}).setdefault(name, [0, 0, 0, 0, 0])
        again = repeat["confirmation"].get(label, {}).get(name, {}).get("verdict")
        tally[0] += 1
        tally[1] += row["verdict"] == REGRESSION
        tally[2] += row["verdict"] == REGRESSION and again == REGRESSION
        tally[3] += row["verdict"] == IMPROVEMENT
        tally[4] += row["verdict"] == INCONCLUSIVE
    return found


def pass_spreads(repeats: list[dict]) -> dict:
    """benchmark -> the standard deviation of one pass's log ratio on identical copies, over all their passes."""
    variances = {}
    for repeat in repeats:
        for label, by_benchmark in repeat.get("values", {}).items():  # repeats from before 6463890 kept none
            for name, values in by_benchmark.items():
                if label.startswith("A/A") and len(values) > 1:
                    variances.setdefault(name, []).append(statistics.variance(values))
    return {name: math.sqrt(statistics.mean(found)) for name, found in variances.items()}


def passes_taken(repeats: list[dict]) -> dict:
    """kind and condition -> the screening passes each comparison of that kind was judged on."""
    found = {}
    for kind, _, _, row, _ in comparisons(repeats):
        if "passes" in row:  # an error has none
            found.setdefault(kind, []).append(row["passes"])
    return found


def passes_needed(spread: float, threshold: float, benchmarks: int) -> int | str:
    """The fewest passes with which a slowdown of threshold is caught with POWER at the gate's false-alarm rate."""
    alpha = FALSE_ALARM_RATE / benchmarks
    for passes in range(2, 201):
        if (t_quantile(1 - alpha, passes) + t_quantile(POWER, passes)) * spread / math.sqrt(passes) <= math.log1p(threshold):
            return passes
    return "more than 200"


def replayed(repeats: list[dict], min_passes: int, threshold: float = DEFAULT_THRESHOLD) -> dict:
    """Each comparison judged again on its recorded passes as if the screen let a benchmark stop after min_passes:
    at the first pass from there on that decides it, else where it stopped. Passes the screen never timed cannot be
    replayed, so a comparison undecided to its end keeps its verdict. kind and condition -> [comparisons, REGRESSION,
    IMPROVEMENT, INCONCLUSIVE, verdicts changed, passes replayed, passes recorded]."""
    rule = gate.Stopping(threshold, min_passes=min_passes)
    found = {}
    for kind, label, name, row, repeat in comparisons(repeats):
        values = repeat.get("values", {}).get(label, {}).get(name)
        if values is None or "passes" not in row:  # an error, or a repeat that kept no values
            continue
        live = len(repeat["values"][label])
        stop = next((passes for passes in range(min_passes, row["passes"] + 1) if rule.decided(values[:passes], live)),
                    row["passes"])
        verdict = rule.judged(values[:stop], live).verdict
        tally = found.setdefault(kind, [0] * 7)
        for index, hit in enumerate((True, verdict == REGRESSION, verdict == IMPROVEMENT,
                                     verdict == INCONCLUSIVE, verdict != verdict_read(row["verdict"]))):
            tally[index] += hit
        tally[5] += stop
        tally[6] += row["passes"]
    return found


def format_replay(found: dict, min_passes: int) -> str:
    replayed_passes, recorded = sum(tally[5] for tally in found.values()), sum(tally[6] for tally in found.values())
    lines = [f"replayed with {min_passes} passes before a benchmark may stop: {recorded - replayed_passes} of "
             f"{recorded} passes saved ({1 - replayed_passes / max(1, recorded):.0%}); REGRESSION, IMPROVEMENT, "
             f"INCONCLUSIVE, verdicts changed"]
    lines += [f"{kind}: {tally[1]}, {tally[2]}, {tally[3]} of {tally[0]}; {tally[4]} changed"
              for kind, tally in sorted(found.items())]
    return "\n".join(lines)


def drawn_verdict(rng: random.Random, pool: list[float], shift: float, stopping: gate.Stopping,
                  live: int) -> tuple[str, int]:
    """(verdict, passes) of one comparison whose passes are drawn from pool and moved by shift, judged pass by pass
    with stopping as the gate judges, to where it stops (no budget: at its most passes)."""
    values = []
    while stopping.keeps(values, len(values), 0.0, 1, live):
        values.append(rng.choice(pool) + shift)
    return stopping.judged(values, live).verdict, len(values)


def exchangeable_pools(repeats: list[dict]) -> dict:
    """condition -> benchmark -> every pass its identical copies recorded, each also negated. A copy and its control
    are the same code, so a pass is as likely to read log(control / copy) as log(copy / control): the pool has no
    offset, and the control's slow passes, which a repeat shares among all its copies (docs/results/gate-design.md
    section 8), fall on either side as the baseline's or the candidate's do in a gate."""
    found = {}
    for repeat in repeats:
        condition = "noisy neighbour" if repeat["neighbour"] else "quiet"
        for label, by_name in repeat.get("values", {}).items():
            if label.startswith("A/A"):
                for name, values in by_name.items():
                    found.setdefault(condition, {}).setdefault(name, []).extend(
                        signed for value in values for signed in (value, -value))
    return found


def resampled(repeats: list[dict], draws: int, threshold: float = DEFAULT_THRESHOLD, seed: int = 0) -> dict:
    """Each benchmark's verdicts under the gate's rule, the screen then the confirmation of a flag, on passes drawn at
    random from the passes its identical copies recorded (exchangeable_pools): as they are, and each moved by a
    slowdown of the threshold, as the study's busy wait moves them. So every benchmark gets as many comparisons as asked, on the
    noise a machine showed, where a live repeat gives it one or two. Passes are drawn independently and the budget is
    not modelled (a comparison stops at the most passes). condition -> benchmark -> factor -> [(outcome, screening
    passes)], the outcome confirmed, unconfirmed, clear, improvement or inconclusive."""
    rng, screen, again = random.Random(seed), gate.screening(threshold), gate.confirming(threshold)
    found = {}
    for condition, pools in exchangeable_pools(repeats).items():
        for name, pool in pools.items():
            for factor in (1.0, 1 + threshold):
                comparisons = found.setdefault(condition, {}).setdefault(name, {}).setdefault(factor, [])
                for _ in range(draws):
                    verdict, passes = drawn_verdict(rng, pool, math.log(factor), screen, len(pools))
                    if verdict == REGRESSION:
                        confirmed = drawn_verdict(rng, pool, math.log(factor), again, 1)[0] == REGRESSION
                        verdict = "confirmed" if confirmed else "unconfirmed"
                    comparisons.append((verdict, passes))
    return found


def format_resampled(found: dict, draws: int, threshold: float = DEFAULT_THRESHOLD) -> str:
    slowed = 1 + threshold

    def share(comparisons, *outcomes):
        return sum(outcome in outcomes for outcome, _ in comparisons) / len(comparisons)

    lines = [f"resampled: {draws} comparisons of each benchmark, on passes drawn from its identical copies' recorded "
             f"passes (each also negated), judged with the gate's rule (screen, then confirmation of a flag; no "
             f"budget)"]
    for condition, by_name in sorted(found.items()):
        flagged = sum(share(factors[1.0], "confirmed", "unconfirmed") for factors in by_name.values())
        failing = sum(share(factors[1.0], "confirmed") for factors in by_name.values())
        trials = sum(statistics.fmean(passes for _, passes in factors[1.0]) for factors in by_name.values())
        lines.append(f"{condition}: on identical versions a gate run of {len(by_name)} benchmarks flags one "
                     f"{flagged:.1%} of the time (the sum over them), fails {failing:.2%}, and times {trials:.0f} "
                     f"trials in its screen (the sum of their means); each benchmark, lowest "
                     f"catch first: a {slowed:g}x slowdown caught and confirmed, its wrong CLEAR, and the median "
                     f"screening passes on identical versions")
        for name, factors in sorted(by_name.items(), key=lambda item: share(item[1][slowed], "confirmed")):
            passes = statistics.median(passes for _, passes in factors[1.0])
            lines.append(f"    {name} {share(factors[slowed], 'confirmed'):.1%}, {share(factors[slowed], CLEAR):.1%}, "
                         f"{passes:g}")
    return "\n".join(lines)


def saved_repeats(out: Path, pattern: str = "repeat-*.json") -> list[dict]:
    """The repeats saved in out, in order (with pattern "**/repeat-*.json", those in its folders too)."""
    return [json.loads(path.read_text()) for path in sorted(out.glob(pattern))]


def analyze(out: Path) -> str:
    repeats = saved_repeats(out)
    true = json.loads((out / "true-factors.json").read_text()) if (out / "true-factors.json").exists() else {}
    lines = [f"{len(repeats)} repeats, {sum(repeat['neighbour'] for repeat in repeats)} of them under the noisy "
             f"neighbour, {', '.join(sorted({str(repeat['passes']) for repeat in repeats}))} screening passes each; "
             f"comparisons: REGRESSION in the screen / confirmed alone, then IMPROVEMENT and INCONCLUSIVE"]
    taken = passes_taken(repeats)
    for kind, by_benchmark in sorted(tallies(repeats).items()):
        total = [sum(tally[index] for tally in by_benchmark.values()) for index in range(5)]
        passes = taken.get(kind) or [0]
        lines.append(f"{kind}: {total[1]} / {total[2]} of {total[0]}; {total[3]} improvements, {total[4]} inconclusive; "
                     f"passes {min(passes)}-{max(passes)}, median {statistics.median(passes):g}")
        if kind.startswith(("identical", "benchmarks a code")):
            lines += [f"    flagged: {name} {tally[1]} in the screen, {tally[2]} confirmed"
                      for name, tally in by_benchmark.items() if tally[1]]
        else:
            least = sorted(by_benchmark.items(), key=lambda item: item[1][2] / item[1][0])[:5]
            lines.append("    least often confirmed: " + ", ".join(f"{name} {tally[2]}/{tally[0]}" for name, tally in least))
    conditions = {condition: spreads for condition, neighbour in (("quiet", False), ("noisy neighbour", True))
                  if (spreads := pass_spreads([repeat for repeat in repeats if repeat["neighbour"] == neighbour]))}
    if conditions:
        lines.append("spread of one pass's log ratio on identical copies (RMS over them), and the passes a 10% slowdown "
                     "needs to be caught 95% of the time at this gate's false-alarm rate, noisiest first; "
                     + ", then ".join(conditions))
        names = {name for spreads in conditions.values() for name in spreads}
        for name in sorted(names, key=lambda name: -max(spreads.get(name, 0) for spreads in conditions.values())):
            cells = [f"{spreads[name]:.3f}: {passes_needed(spreads[name], 0.10, len(spreads))}" if name in spreads else "-"
                     for spreads in conditions.values()]
            lines.append(f"    {name} " + "; ".join(cells))
    for label, rows in true.items():
        lines.append(f"true factor of the {label}: " + ", ".join(
            f"{name} {row['ratio']:.3f} [{row['low']:.3f}, {row['high']:.3f}]" for name, row in rows.items() if "ratio" in row))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.research.noise_study", description=__doc__.splitlines()[0])
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    saved = argparse.ArgumentParser(add_help=False)
    saved.add_argument("--out", type=Path, default=Path(".noise-study"), help="the repeats' folder (default: %(default)s)")
    judged = argparse.ArgumentParser(add_help=False)  # analyze counts the saved verdicts: it judges nothing
    judged.add_argument("--threshold", type=threshold_argument, default=DEFAULT_THRESHOLD, metavar="PCT")
    timed = argparse.ArgumentParser(add_help=False)
    timed.add_argument("--solvers", help="comma-separated solver names (default: all)")
    timed.add_argument("--profile", default="quick", choices=sorted(PROFILES))
    timed.add_argument("--threads", type=threads_argument, default=gate.GATE_THREADS)
    timed.add_argument("--seed", type=int, default=20261201)
    timed.add_argument("--cpu", default=None, help="the workers' CPU affinity, one CPU; the neighbour runs on another "
                                                   "(default: the last one)")

    record_action = actions.add_parser("record", parents=[saved, judged, timed], help="time repeats of the control "
                                       "and its variants, add them to --out, then analyze them all")
    record_action.add_argument("--repeats", type=int, default=1)
    record_action.add_argument("--identical", type=int, default=2, help="identical copies of the control (default: 2)")
    record_action.add_argument("--slowdowns", type=lambda text: tuple(float(f) for f in text.split(",") if f),
                               default=SLOWDOWNS, help="factors of the slowed copies, comma-separated (default: "
                                                       "1.05,1.1,1.25; '' for none)")
    record_action.add_argument("--slowed-groups", type=int, default=1, metavar="K",
                               help="a slowed copy per factor and group of the solvers, each slowing one of K groups "
                                    "(default: 1, every solver at once)")
    record_action.add_argument("--code-regressions", action="store_true", help="add the real code regressions, in "
                                                                               "worktrees")
    record_action.add_argument("--neighbour", action="store_true", help="a bounded load on the other CPU all through")
    record_action.add_argument("--passes", type=int, help="exactly this many screening passes (default: the gate's "
                               f"rule: {gate.MIN_PASSES}, then more for the undecided while the budget lasts)")
    record_action.add_argument("--budget", type=float, default=gate.DEFAULT_BUDGET_S, metavar="SECONDS",
                               help="the screening budget of each variant's own gate, which times two versions: a "
                                    "pass of n versions counts 2/n of its time to each (default: %(default)s)")
    true_action = actions.add_parser("true-factors", parents=[saved, judged, timed],
                                     help="what each code regression costs, measured alone against the control")
    true_action.add_argument("--passes", type=int, default=TRUE_FACTOR_PASSES, help="(default: %(default)s)")
    actions.add_parser("analyze", parents=[saved], help="the repeats in --out, counted and summarised")
    replay_action = actions.add_parser("replay", parents=[saved, judged], help="the repeats in --out judged again on "
                                       "their passes, with another count of passes before a benchmark may stop")
    replay_action.add_argument("--min-passes", type=int, required=True, metavar="N")
    resample_action = actions.add_parser("resample", parents=[saved, judged], help="DRAWS comparisons of each "
                                         "benchmark, on passes drawn from its identical copies' recorded passes in "
                                         "--out and its folders, as they are and slowed by the threshold")
    resample_action.add_argument("--draws", type=int, default=1000)
    resample_action.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(argv)
    if options.action == "record" and options.slowed_groups < 1:
        parser.error("--slowed-groups must be at least 1")
    if options.action in ("record", "true-factors"):
        options.cpu = options.cpu or os.environ.get(cpus.AFFINITY_VARIABLE) or str(max(os.sched_getaffinity(0)))
        os.environ[cpus.AFFINITY_VARIABLE] = options.cpu
        options.out.mkdir(parents=True, exist_ok=True)
    if options.action == "true-factors":
        print(f"true factors -> {true_factors(options.out, options)}")
        return 0
    if options.action == "record":
        start = len(list(options.out.glob("repeat-*.json")))  # more repeats add to the ones already there
        for repeat in range(start, start + options.repeats):
            print(f"repeat {repeat + 1 - start}/{options.repeats} -> {record(repeat, options.out, options)}", flush=True)
    # The resampling draws on the noise of every repeat kept there, in its folders too, whatever rule it ran with.
    pattern = "**/repeat-*.json" if options.action == "resample" else "repeat-*.json"
    if not list(options.out.glob(pattern)) and not (options.out / "true-factors.json").exists():
        print(f"noise study: no repeats in {options.out}", file=sys.stderr)
        return 2
    if options.action == "replay":
        print(format_replay(replayed(saved_repeats(options.out), options.min_passes, options.threshold),
                            options.min_passes))
    elif options.action == "resample":
        found = resampled(saved_repeats(options.out, pattern), options.draws, options.threshold, options.seed)
        print(format_resampled(found, options.draws, options.threshold))
    else:
        print(analyze(options.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
