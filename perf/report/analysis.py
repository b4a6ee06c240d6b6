"""What a run's per-step rows say: the model t = α + β·n, crossovers with the timing reference, a step's parts."""

import math
from typing import NamedTuple

import numpy as np

from perf.judge.statistics import MEDIAN_CONFIDENCE, Interval, t_interval
from perf.measure import TIMING_REFERENCE, Key
from perf.report.rows import Row

REFERENCE_SOLVER = TIMING_REFERENCE[0]
# What a step could cost: every step one fused, vectorized sweep (the CPU's roofline), and the algebraic limit,
# which needs no sweep over the data per step at all (a 2x2 affine map on five sums).
ROOFLINE_SOLVER, ALGEBRAIC_LIMIT_SOLVER = "numba_fused", "numpy_affine_limit"
QUESTION_N = 1_000  # the size the question is about
# "Slightly outside" the measured sizes: within one decade, as the sizes are spaced by decades.
EXTRAPOLATION_FACTOR = 10
NONE_IN_RANGE = "none in range"
WHOLE_STEP = "tf1_feed_dict"
# Where a tf1_feed_dict step goes: (part, minuend, subtrahend or None), each a difference of two solvers' steps.
STEP_PARTS = (
    ("loss fetch", "tf1_feed_dict", "tf1_feed_dict_no_loss"),
    ("feed_dict copies", "tf1_feed_dict", "tf1_constant"),
    ("Session.run call", "tf1_constant_no_loss", "tf1_while_loop"),
    ("arithmetic", "tf1_while_loop", None),
)
# The two parts above that depend on each other, measured the other way round: the loss fetch on constant data,
# the feed without the loss. What these differ from the parts above by is the remainder.
OTHER_WAY_ROUND = (
    ("loss fetch, on constant data", "tf1_constant", "tf1_constant_no_loss"),
    ("feed_dict copies, without the loss fetch", "tf1_feed_dict_no_loss", "tf1_constant_no_loss"),
)
REMAINDER = "remainder: the parts interact"


class Model(NamedTuple):
    alpha_us: float  # fixed cost of one step, whatever n
    beta_ns: float  # cost of one sample in one step
    max_relative_residual: float
    sizes: tuple[int, ...]

    def per_step_us(self, n):
        return self.alpha_us + self.beta_ns * 1e-3 * n


def weighted_line(x, t) -> tuple[float, float, float]:
    """(intercept, slope, max relative residual) of t ≈ intercept + slope·x, fitted to relative errors.

    x spans decades, so plain least squares would let the largest x set the line and leave the
    intercept, the whole story at small x, to its rounding error. Weighting squared residuals by 1/t²
    makes every point count by its relative error; polyfit squares w itself, hence w = 1/t.
    """
    x, t = np.asarray(x, dtype=float), np.asarray(t, dtype=float)
    slope, intercept = np.polyfit(x, t, 1, w=1 / t)
    return float(intercept), float(slope), float(np.max(np.abs(intercept + slope * x - t) / t))


def fit_overhead(sizes, per_step_us) -> Model:
    """Weighted least-squares fit of t_step(n) = α + β·n over at least two distinct sizes."""
    if len(set(sizes)) < 2:
        raise ValueError("the overhead model needs at least two distinct sizes")
    alpha_us, beta_us, max_relative_residual = weighted_line(sizes, per_step_us)
    return Model(alpha_us, beta_us * 1e3, max_relative_residual, tuple(sorted(set(sizes))))


def fit_models(rows: dict[Key, Row]) -> dict:
    """A model per (solver, device) measured at two or more sizes."""
    series = {}
    for key, row in sorted(rows.items()):
        series.setdefault((key.solver, key.device), []).append((key.n, row.per_step_us))
    return {pair: fit_overhead(*zip(*points)) for pair, points in series.items() if len(points) >= 2}


def crossover_n(model: Model, reference: Model, low: float, high: float) -> tuple[float | None, str]:
    """Where α + β·n meets the reference's line: (n*, 'in range' | 'extrapolated'), else (None, 'none in range')."""
    slope_gap_ns = model.beta_ns - reference.beta_ns
    if slope_gap_ns == 0:
        return None, NONE_IN_RANGE
    n = (reference.alpha_us - model.alpha_us) * 1e3 / slope_gap_ns
    if low <= n <= high:
        return n, "in range"
    if low / EXTRAPOLATION_FACTOR <= n <= high * EXTRAPOLATION_FACTOR:
        return n, "extrapolated"
    return None, NONE_IN_RANGE


def measured_crossover(rows: dict[Key, Row], solver: str, device: str, between: bool = True) -> str:
    """Where the measured ratio to the timing reference first crosses 1, interpolated on log-log between two sizes
    (named, unless between is False).

    The straight line α + β·n fits the per-sample cost badly across cache sizes, so the model's
    n* can mislead; this one uses only the measured points either side of the crossing.
    """
    points = sorted((key.n, row.per_step_us / reference.per_step_us) for key, row in rows.items()
                    if (key.solver, key.device) == (solver, device) and (reference := reference_row(rows, key.n)))
    if len(points) < 2:
        return "—"
    for (n_low, ratio_low), (n_high, ratio_high) in zip(points, points[1:]):
        if (ratio_low - 1) * (ratio_high - 1) < 0:
            fraction = math.log(ratio_low) / (math.log(ratio_low) - math.log(ratio_high))
            crossing = math.exp(math.log(n_low) + fraction * (math.log(n_high) - math.log(n_low)))
            # Two significant digits: the crossing is read off a line between two sizes a decade apart, and says so.
            sizes = f"; interpolated between {n_low:,} and {n_high:,}" if between else ""
            return f"≈{float(f'{crossing:.2g}'):,.0f} ({'faster' if ratio_high < 1 else 'slower'} above{sizes})"
    return "faster at every size" if points[0][1] < 1 else "slower at every size"


def reference_row(rows: dict[Key, Row], n: int) -> Row | None:
    """The timing reference at n (on the CPU: every device's benchmarks are timed beside it, as the question does)."""
    return rows.get(Key(*TIMING_REFERENCE, n))


def question_n(rows, device: str | None = None) -> int:
    """QUESTION_N when measured (on device), else the measured size nearest to it on a log scale."""
    sizes = {key.n for key in rows if device in (None, key.device)}
    return min(sizes, key=lambda n: abs(math.log(n / QUESTION_N)))


def combination(rows: dict[Key, Row], terms: list[tuple[str, int]], device: str, n: int) -> Interval | None:
    """Σ sign × µs per step of each (solver, sign) in terms, with its interval (why over the worker processes:
    docs/measurement.md#the-parts-of-a-tf1_feed_dict-step); None where a solver was not measured."""
    reference = reference_row(rows, n)
    found = [rows.get(Key(solver, device, n)) for solver, _ in terms]
    if reference is None or any(row is None or row.ratio is None for row in found):
        return None
    by_process = [dict(zip(row.trial_processes, row.trial_ratios))
                  if len(row.trial_processes) == len(row.trial_ratios) else {} for row in found]
    shared = set.intersection(*(set(ratios) for ratios in by_process))
    if len(shared) >= 2:
        # At the medians' level: a part reads beside the benchmarks it is taken from.
        return t_interval([sum(sign * ratios[process] for (_, sign), ratios in zip(terms, by_process))
                           for process in shared], MEDIAN_CONFIDENCE).scaled(reference.per_step_us)
    total = Interval(0.0, 0.0, 0.0)
    for (_, sign), row in zip(terms, found):
        scaled = row.ratio.scaled(reference.per_step_us)
        total = total + scaled if sign > 0 else total - scaled
    return total


def signed_terms(minuend: str, subtrahend: str | None) -> list[tuple[str, int]]:
    """A part as (solver, sign) terms: minuend − subtrahend, or the minuend alone."""
    return [(minuend, 1)] + ([(subtrahend, -1)] if subtrahend else [])


def remainder_terms() -> list[tuple[str, int]]:
    """whole − Σ parts is, term by term, (tf1_constant − tf1_constant_no_loss) − (tf1_feed_dict −
    tf1_feed_dict_no_loss): taken as that, each benchmark counts once."""
    (_, on_constant, less_on_constant), (_, fed, less_fed) = OTHER_WAY_ROUND[0], STEP_PARTS[0]
    return [(on_constant, 1), (less_on_constant, -1), (fed, -1), (less_fed, 1)]


def step_parts(rows: dict[Key, Row], device: str, n: int, parts=STEP_PARTS) -> list[tuple[str, Interval, str]]:
    """(part, µs per step with its interval, how it is derived) for each part whose solvers were measured; with
    the remainder, whole − the parts, when all of STEP_PARTS were."""
    found = []
    for part, minuend, subtrahend in parts:
        if value := combination(rows, signed_terms(minuend, subtrahend), device, n):
            found.append((part, value, f"{minuend} − {subtrahend}" if subtrahend else minuend))
    if parts is STEP_PARTS and len(found) == len(STEP_PARTS):
        found.append((REMAINDER, combination(rows, remainder_terms(), device, n), "whole − the parts above"))
    return found


def whole_step(rows: dict[Key, Row], device: str, n: int) -> Interval | None:
    """A tf1_feed_dict step in µs with its interval, the whole that step_parts splits; None where not measured."""
    row, reference = rows.get(Key(WHOLE_STEP, device, n)), reference_row(rows, n)
    if row is None or row.ratio is None or reference is None:
        return None
    return row.ratio.scaled(reference.per_step_us)
