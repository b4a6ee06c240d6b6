"""Two runs of the suite compared: per benchmark, × numpy_loop then and now, the change with its interval over both
runs' trials, and a verdict: SLOWER, FASTER, UNCHANGED or CAN'T TELL.

Why ratios. Absolute times of identical code move with a shared machine's speed between runs, far past any useful
threshold (docs/results/compare-calibration/README.md), so comparing them (pytest-benchmark's --benchmark-compare-fail)
flags noise; each benchmark's ratio to the timing reference, paired
round by round in the same process, cancels the machine's speed. Why the trials: each ran in a worker process of
its own (perf/measure/trials.py), so the variation between them holds the variation between processes, and the two
runs' trials are independent samples of one benchmark's ratio.

The change is the Hodges-Lehmann shift between the runs' log ratios (the median of every now − then difference),
its interval the distribution-free one that Mann and Whitney's exact null distribution gives: it assumes only that
the trials are independent, not that they are normal, and one stray trial moves it little. With threshold t:

- SLOWER: the whole interval lies above 1 + t: slower by more than t, and surely so;
- FASTER: the mirror image, below 1 / (1 + t);
- UNCHANGED: the interval lies within 1 ± t: a change of t ruled out either way;
- CAN'T TELL: none of these; the row says the smallest slowdown these two runs could have called SLOWER.

Why so strict a rule: a run of identical code that fails CI costs more than a slowdown seen one run later, and with
seven processes a benchmark the looser rules (interval above 1 and estimate beyond 1 + t, or 95%) failed some pairs of
identical quiet runs. CONFIDENCE and the rule were chosen on identical and slowed runs, figures in
docs/results/compare-calibration/README.md.
"""

import math
import statistics
from dataclasses import dataclass
from functools import cache

from perf.measure import TIMING_REFERENCE, Key
from perf.report.rows import trial_ratios
from perf.report.statistics import Interval

DEFAULT_THRESHOLD = 0.10
CONFIDENCE = 0.99  # the least coverage the change's interval is chosen for, two-sided
VERDICTS = ("slower", "faster", "unchanged", "can't tell")


@dataclass(frozen=True)
class Compared:
    key: Key
    then: float  # the median of the trials' ratios to the timing reference
    now: float
    change: Interval  # now / then
    verdict: str
    detectable: float | None = None  # CAN'T TELL: the smallest slowdown these runs could have called SLOWER


@cache
def rank_sum_cdf(m: int, n: int) -> tuple[float, ...]:
    """P(U ≤ u) for u = 0 … m·n: the Mann-Whitney statistic's exact distribution when neither sample is shifted
    (scipy computes it only inside its test, not as a public distribution)."""
    counts = [[[1] if i == 0 or j == 0 else None for j in range(n + 1)] for i in range(m + 1)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            # The largest of the i + j values is from the first sample (it exceeds all j of the second) or not.
            with_first, without = counts[i - 1][j], counts[i][j - 1]
            ways = [0] * (i * j + 1)
            for u, count in enumerate(with_first):
                ways[u + j] += count
            for u, count in enumerate(without):
                ways[u] += count
            counts[i][j] = ways
    total, running, cdf = math.comb(m + n, m), 0, []
    for count in counts[m][n]:
        running += count
        cdf.append(running / total)
    return tuple(cdf)


def shift_interval(then: list[float], now: list[float], confidence: float = CONFIDENCE) -> Interval:
    """The shift now − then: the Hodges-Lehmann estimate, between the k-th smallest and k-th largest of the pairwise
    differences, k the largest that covers with at least confidence (or 1, the whole range, where none does)."""
    differences = sorted(b - a for a in then for b in now)
    cdf = rank_sum_cdf(len(then), len(now))
    k = 1
    while k < len(differences) // 2 and 1 - 2 * cdf[k] >= confidence:
        k += 1  # one more difference off each end still covers with at least confidence
    return Interval(statistics.median(differences), differences[k - 1], differences[-k], 1 - 2 * cdf[k - 1])


def compared(key: Key, then_info: dict, now_info: dict, threshold: float = DEFAULT_THRESHOLD) -> Compared | None:
    """The verdict on one benchmark of both runs; None where it is the timing reference or either run lacks trials."""
    then, now = trial_ratios(then_info), trial_ratios(now_info)
    if (key.solver, key.device) == TIMING_REFERENCE or len(then) < 2 or len(now) < 2:
        return None
    log_shift = shift_interval([math.log(ratio) for ratio in then], [math.log(ratio) for ratio in now])
    change = Interval(*(math.exp(value) for value in log_shift[:3]), log_shift.coverage)
    limit = math.log1p(threshold)
    if log_shift.low > limit:
        verdict = "slower"
    elif log_shift.high < -limit:
        verdict = "faster"
    elif -limit < log_shift.low and log_shift.high < limit:
        verdict = "unchanged"
    else:
        verdict = "can't tell"
    # A true slowdown s moves the whole interval by s: it is called SLOWER once s exceeds the limit by the interval's
    # reach below its estimate.
    reach = log_shift.value - log_shift.low
    return Compared(key, statistics.median(then), statistics.median(now), change, verdict,
                    math.exp(limit + reach) if verdict == "can't tell" else None)


# As the terminal prints it, after pytest-benchmark's tables -------------------------------------------------------

# What a saved run records about its environment that moves every ratio when it differs (machine_info.fssgd).
ENVIRONMENT = (("CPU", lambda fssgd: fssgd.get("cpu_model")),
               ("TensorFlow", lambda fssgd: " ".join(filter(None, [(fssgd.get("tensorflow") or {}).get(key)
                                                                   for key in ("distribution", "version")])) or "none"),
               ("threads", lambda fssgd: fssgd.get("threads_setting")),
               ("oneDNN", lambda fssgd: fssgd.get("onednn_setting")),
               ("profile", lambda fssgd: fssgd.get("profile")),
               ("FSSGD_SLOWDOWN", lambda fssgd: fssgd.get("slowdown") or "unset"),
               ("FSSGD_SHRINK", lambda fssgd: fssgd.get("shrink") or "unset"))


def environment_line(then: dict, now: dict) -> str | None:
    """One line naming what differs between the two runs' environments, or None."""
    differences = [f"{name} {value(then)} then, {value(now)} now" for name, value in ENVIRONMENT
                   if value(then) != value(now)]
    return f"Not like with like: {'; '.join(differences)}." if differences else None


def comparison_lines(then_document: dict, then_name: str, now_fssgd: dict, now_benchmarks: list[dict],
                     threshold: float) -> tuple[list[str], list[Compared]]:
    """The terminal's lines for this run against a saved one, and every benchmark judged SLOWER."""
    then_by_name = {bench.get("fullname"): bench for bench in then_document["benchmarks"]}
    found = []
    for bench in now_benchmarks:
        info, then = bench.get("extra_info") or {}, then_by_name.get(bench.get("fullname"))
        if then and info.get("solver"):
            key = Key(info["solver"], info["device"], info["n"])
            if result := compared(key, then.get("extra_info") or {}, info, threshold):
                found.append((bench["name"], result))
    lines = [f"Against {then_name}: per benchmark, × {TIMING_REFERENCE[0]} then and now (the median of the trials' "
             f"paired ratios) and the change, with its interval over both runs' trials "
             f"({min((result.change.coverage for _, result in found), default=CONFIDENCE):.1%}); threshold "
             f"{threshold:.0%}."]
    if line := environment_line(then_document["machine_info"].get("fssgd") or {}, now_fssgd):
        lines.append(line)
    then_infos = [bench.get("extra_info") or {} for bench in then_document["benchmarks"]]
    if any("trial_medians_s" in info and "trial_processes" not in info for info in then_infos):
        lines.append("The saved run's trials shared one process (it was made before each trial had a worker process "
                     "of its own): its intervals miss the variation between processes, so a verdict against it is "
                     "less sure than its interval says.")
    if not found:
        return lines + ["No benchmark of this run has trials in both runs to compare."], []
    width = max(len(name) for name, _ in found)
    lines.append(f"{'benchmark':<{width}}  {'then':>9}  {'now':>9}  {'change':<24}  verdict")
    for name, result in found:
        change = f"{result.change.value:.3f} ({result.change.low:.3f} to {result.change.high:.3f})"
        verdict = result.verdict.upper()
        if result.detectable:
            verdict += f" (these runs could call a slowdown of {result.detectable - 1:.0%} or more)"
        lines.append(f"{name:<{width}}  {result.then:>9.4g}  {result.now:>9.4g}  {change:<24}  {verdict}")
    counts = {verdict: sum(result.verdict == verdict for _, result in found) for verdict in VERDICTS}
    lines.append(", ".join(f"{count} {verdict.upper()}" for verdict, count in counts.items() if count))
    return lines, [result for _, result in found if result.verdict == "slower"]
