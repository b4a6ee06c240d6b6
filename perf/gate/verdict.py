"""A benchmark's verdict from its passes: the ratio candidate / baseline, an interval that holds the variation
between passes (fresh processes each), and what they mean, judged so that a whole gate run raises a false alarm
at a stated rate.

Each pass gives one value per benchmark: the median over its paired rounds of log(candidate / baseline)
(perf/gate/interleave.py). The estimate is their mean, its interval Student's t over the passes: the pass,
not the round, is the unit, so the interval holds whatever a process carries for its whole life.

- REGRESSION: the interval lies above 1 and the ratio is past half the threshold: significantly slower, and
  by enough to matter. The interval's level is Bonferroni's over the benchmarks, so that at most
  FALSE_ALARM_RATE of gate runs on two identical versions flag any benchmark at all (nominally: the gate looks
  again at each pass past the fewest, perf/gate/stages.py; the noise study measures the rate).
- IMPROVEMENT: the mirror image.
- PASS: a slowdown of the threshold is ruled out, one-sided at RULED_OUT.
- INCONCLUSIVE: none of these; the row says the smallest slowdown the run could have detected.
"""

import math
import os
from dataclasses import asdict, dataclass

from perf.judge.outcome import ALLOW_UNAVAILABLE, FAILED, NOT_MEASURED, PASSED
from perf.judge.statistics import mean_and_error, t_quantile
from perf.measure.environment import onednn_setting

FALSE_ALARM_RATE = 0.05  # per gate run across all its benchmarks, before confirmation
# A threshold slowdown ruled out at this level: the benchmark passes, and needs no more passes. The gate looks again
# after every pass and stops at the first verdict, so the chance that a slowdown of exactly the threshold is ruled out
# adds up over the looks a noisy benchmark takes; this level keeps it small where a pass scatters by 0.1 (chosen by
# resampling the noise study's recorded passes: docs/results/gate-design.md section 10).
RULED_OUT = 0.002
POWER = 0.95  # what "the smallest slowdown it could have detected" is detected with
FAILING = ("regression", "error", "missing")
JUDGED = ("pass", "regression", "improvement", "inconclusive", "unconfirmed")  # measured on both versions' passes


def ruled_out(values: list[float], threshold: float) -> bool:
    """Whether these per-pass log ratios rule out a slowdown of threshold, one-sided at RULED_OUT."""
    if len(values) < 2:
        return False
    mean, error = mean_and_error(values)
    return mean + t_quantile(1 - RULED_OUT, len(values)) * error < math.log1p(threshold)


@dataclass(frozen=True)
class Row:
    """A benchmark's verdict, as the gate reports and saves it. The ratio and its interval (at coverage) where it was
    judged on passes; detectable where INCONCLUSIVE; screening (a confirmed flag) or confirmation (an unconfirmed one)
    where it was measured again alone."""

    verdict: str
    benchmark: str = ""
    why: str = ""
    passes: int | None = None  # none where a problem left nothing to judge
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    coverage: float | None = None
    detectable: float | None = None
    steps: int = 0
    calls: int = 1
    screening: "Row | None" = None
    confirmation: "Row | None" = None

    def saved(self) -> dict:
        """As the gate's --json and the noise study write it: the fields that hold something, a confirmation's
        rows alike."""
        return asdict(self, dict_factory=lambda fields: {name: value for name, value in fields
                                                         if value not in (None, "")})


def judged(values: list[float], threshold: float, alpha: float) -> Row:
    """The verdict on per-pass log ratios, its interval two-sided at 1 − 2·alpha."""
    passes = len(values)
    if passes < 2:
        return Row("inconclusive", passes=passes, why="fewer than two passes")
    mean, error = mean_and_error(values)
    reach = t_quantile(1 - alpha, passes) * error
    low, high, half = mean - reach, mean + reach, math.log1p(threshold / 2)
    interval = {"ratio": math.exp(mean), "low": math.exp(low), "high": math.exp(high), "coverage": 1 - 2 * alpha,
                "passes": passes}
    if low > 0 and mean > half:
        return Row("regression", **interval)
    if high < 0 and mean < -half:
        return Row("improvement", **interval)
    if ruled_out(values, threshold):
        return Row("pass", **interval)
    detectable = math.exp(max(half, reach) + t_quantile(POWER, passes) * error)
    return Row("inconclusive", **interval, detectable=detectable,
               why=f"a slowdown of {threshold:.0%} is not ruled out; this run could have detected {detectable:.2f}x")


def onednn_settings(*versions) -> list[tuple]:
    """(version, how its workers have oneDNN set): the gate's environment, then the version's own."""
    return [(version, onednn_setting({**os.environ, **dict(version.env)})) for version in versions]


def failed(rows: list[Row]) -> bool:
    return any(row.verdict in FAILING for row in rows)


def unmeasured(rows: list[Row], device_of: dict, devices: list[str]) -> dict:
    """Device -> why no benchmark on it was measured on both versions, for each such device the gate was asked for.
    device_of: benchmark name -> its device."""
    found = {}
    for device in devices:
        on_it = [row for row in rows if device_of[row.benchmark] == device]
        if not any(row.verdict in JUDGED for row in on_it):
            found[device] = "; ".join(dict.fromkeys(row.why or row.verdict for row in on_it)) or "no benchmark"
    return found


def ending(rows: list[Row], device_of: dict, devices: list[str], allow_unavailable: bool) -> tuple[int, str]:
    """The gate's exit status and its last line. It fails on a confirmed regression, a repeated error or a lost
    benchmark; it is NOT MEASURED where nothing was measured on both versions, or nothing on a device it was asked
    for (unless allow_unavailable: a CPU-only runner in a CPU and GPU matrix); else it passed. The line counts every
    verdict apart (a SKIPPED or NEW benchmark is no PASS) and names each device with nothing measured, and why."""
    counts = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    summary = ", ".join(f"{count} {name}" for name, count in counts.items()) or "no benchmark"
    missed = unmeasured(rows, device_of, devices)
    said = "; ".join(f"nothing measured on {device} ({why})" for device, why in missed.items())
    if failed(rows):
        return FAILED, f"gate FAILED: {summary}" + (f"; {said}" if said else "")
    if not any(row.verdict in JUDGED for row in rows):
        return NOT_MEASURED, f"gate NOT MEASURED: no benchmark was timed on both versions: {said}"
    if missed and not allow_unavailable:
        return NOT_MEASURED, (f"gate NOT MEASURED: {said}; {summary} ({ALLOW_UNAVAILABLE} passes a device with "
                              f"nothing to gate)")
    return PASSED, f"gate passed: {summary}" + (f"; {said}, allowed by {ALLOW_UNAVAILABLE}" if said else "")


def format_report(rows: list[Row], baseline, candidate, threshold: float, seed: int, confirmed: bool,
                  last_line: str) -> str:
    coverages = sorted({f"{row.coverage:.2%}" for row in rows if row.coverage})
    lines = [f"gate: candidate {candidate.description} / baseline {baseline.description}; seed {seed}",
             f"  per benchmark: the mean over passes (fresh processes each) of the median log ratio of its paired "
             f"rounds, with its interval ({', '.join(coverages) or '-'}, Bonferroni over the benchmarks);",
             f"  REGRESSION: slower than 1 + {threshold:.0%}/2 with the interval above 1; PASS: a {threshold:.0%} "
             f"slowdown ruled out at {1 - RULED_OUT:.1%}. On identical versions at most {FALSE_ALARM_RATE:.0%} of "
             f"runs flag a benchmark" + (f", and {FALSE_ALARM_RATE ** 2:.2%} fail after confirmation" if confirmed else ""),
             "  oneDNN: " + ", ".join(f"{version.label} {setting}" for version, setting in onednn_settings(baseline, candidate))]
    width = max((len(row.benchmark) for row in rows), default=10)
    lines.append(f"  {'benchmark':<{width}}  {'verdict':<12} {'ratio':>7}  {'interval':<17} {'passes':>6}  "
                 f"{'steps × calls':>13}")
    for row in rows:
        if row.ratio:
            interval = f"[{row.low:.3f}, {row.high:.3f}]"
            cells = f"{row.ratio:>7.3f}  {interval:<17} {row.passes:>6}  {row.steps:>6} × {row.calls:<5}"
        else:
            cells = f"{'-':>7}  {'':<17} {'':>6}  {'':>13}"
        lines.append(f"  {row.benchmark:<{width}}  {row.verdict.upper():<12} {cells}" + (f"  ({row.why})" if row.why else ""))
    lines.append(last_line)
    return "\n".join(lines)
