"""A benchmark's verdict from its paired trials: the ratio candidate / baseline, its interval, and what they mean.

Per pair of trials the ratio is median(candidate rounds) / median(baseline rounds); the verdict
reads the median of those ratios and its distribution-free interval (perf/report/statistics.py):
REGRESSION when the ratio is above 1 + threshold and the whole interval above 1 (slower by more
than the threshold, and significantly); IMPROVEMENT is the mirror image; INCONCLUSIVE when the
ratio is past a limit but the interval still reaches 1; PASS otherwise. Regressions, errors (a
wrong answer, a crash) and benchmarks the candidate lost fail.
"""

import statistics

from perf.gate.interleave import Outcome
from perf.report.statistics import coverage_wording, median_interval

# From the noise study (python -m perf.gate.noise_study): see README "The regression gate".
DEFAULT_THRESHOLD = 0.10
FAILING = ("regression", "error", "missing")


def verdict(outcome: Outcome, baseline: str, candidate: str, threshold: float) -> dict:
    """The row for one benchmark: ratio candidate/baseline with its interval, and what it means."""
    row = {"benchmark": outcome.key.name, "steps": outcome.steps, "calls": outcome.calls}
    if outcome.problem:
        kind = outcome.problem.split(":")[0].split(" ")[0]
        return {**row, "verdict": kind, "why": outcome.problem}
    ratios = [statistics.median(b["rounds_s"]) / statistics.median(a["rounds_s"])
              for a, b in zip(outcome.trials[baseline], outcome.trials[candidate])]
    ratio = median_interval(ratios)
    row.update(ratio=ratio.value, low=ratio.low, high=ratio.high, coverage=ratio.coverage, trials=len(ratios))
    if ratio.value > 1 + threshold and ratio.low > 1:
        row["verdict"] = "regression"
    elif ratio.value < 1 / (1 + threshold) and ratio.high < 1:
        row["verdict"] = "improvement"
    elif ratio.value > 1 + threshold or ratio.value < 1 / (1 + threshold):
        row.update(verdict="inconclusive", why="past the threshold, but the interval reaches 1")
    else:
        row["verdict"] = "pass"
    return row


def failed(rows: list[dict]) -> bool:
    return any(row["verdict"] in FAILING for row in rows)


def format_report(rows: list[dict], baseline, candidate, threshold: float) -> str:
    coverages = sorted({coverage_wording(row["coverage"], row["trials"]) for row in rows if "coverage" in row})
    lines = [f"gate: candidate {candidate.description} / baseline {baseline.description}, per benchmark the median "
             f"of paired trial ratios with its interval (it covers with {'; '.join(coverages) or '-'}), "
             f"threshold +{threshold:.0%}"]
    width = max((len(row["benchmark"]) for row in rows), default=10)
    lines.append(f"  {'benchmark':<{width}}  {'verdict':<12} {'ratio':>7}  {'interval':<17} {'steps × calls':>13}")
    for row in rows:
        if "ratio" in row:
            interval = f"[{row['low']:.3f}, {row['high']:.3f}]"
            cells = f"{row['ratio']:>7.3f}  {interval:<17} {row['steps']:>6} × {row['calls']:<4}"
        else:
            cells = f"{'-':>7}  {'':<17} {'':>13}"
        lines.append(f"  {row['benchmark']:<{width}}  {row['verdict'].upper():<12} {cells}"
                     + (f"  ({row['why']})" if row.get("why") else ""))
    counts = {}
    for row in rows:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    summary = ", ".join(f"{count} {name}" for name, count in counts.items())
    lines.append(f"gate {'FAILED' if failed(rows) else 'passed'}: {summary or 'nothing to compare'}")
    return "\n".join(lines)
