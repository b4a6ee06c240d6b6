"""The studies beyond the per-step tables, and their report sections: the step-count sweep and time to accuracy."""

from statistics import median
from typing import NamedTuple

from perf.report.analysis import weighted_line
from perf.report.rows import Row
from perf.report.tables import markdown, number

SWEEP, ACCURACY = "iteration_sweep", "time_to_accuracy"  # extra_info["figure"] of perf/test_iterations.py, ...


class SweepFit(NamedTuple):
    setup_s: float  # the one-off cost each benchmark recorded (prepare + run(1)), median over K
    first_run_extra_s: float  # what the first run(K) cost beyond a steady one (XLA compiles per K), median over K
    per_call_us: float  # the steady-state line run(K) = per-call + K·per-step: its intercept
    per_step_us: float  # and its slope
    max_relative_residual: float
    one_off_s: float  # the intercept of a line through the totals (setup + first run(K)): a check on the above
    step_counts: tuple[int, ...]

    @property
    def setup_in_steps(self) -> float | None:
        """How many steps cost as much as the setup; None when noise left no positive slope."""
        return self.setup_s / (self.per_step_us * 1e-6) if self.per_step_us > 0 else None

    def total_s(self, steps):
        return self.setup_s + self.first_run_extra_s + (self.per_call_us + steps * self.per_step_us) * 1e-6


def measured_total_s(row: Row) -> float:
    """From nothing to an answer at K: setup, then the first run(K) (the median run where the setup's own call was
    the warm-up and no first run(K) was recorded)."""
    return row.setup_s + (row.first_run_s or row.median_s)


def fit_sweep(rows: list[Row]) -> dict:
    """Per (solver, device) measured at two or more K: setup apart, and the line through the timed runs."""
    series = {}
    for row in rows:
        if isinstance(row.setup_s, (int, float)) and row.median_s:
            series.setdefault((row.key.solver, row.key.device), []).append(row)
    fits = {}
    for pair, points in sorted(series.items()):
        counts = [point.iterations for point in points]
        if len(set(counts)) < 2:
            continue
        # The timed runs are medians of several rounds; a setup is one measurement, noisy by more than
        # thousands of steps cost, so the per-step slope comes from the runs alone.
        per_call_s, per_step_s, residual = weighted_line(counts, [point.median_s for point in points])
        one_off_s, _, _ = weighted_line(counts, [measured_total_s(point) for point in points])
        fits[pair] = SweepFit(median(point.setup_s for point in points),
                              median(measured_total_s(point) - point.setup_s - point.median_s for point in points),
                              per_call_s * 1e6, per_step_s * 1e6, residual, one_off_s, tuple(sorted(set(counts))))
    return fits


def sweep_section(rows: list[Row]) -> list[str]:
    cells = [[f"`{solver}`", device, number(fit.setup_s), number(fit.first_run_extra_s), number(fit.one_off_s),
              number(fit.per_call_us), number(fit.per_step_us), number(fit.setup_in_steps),
              f"{fit.step_counts[0]:,}–{fit.step_counts[-1]:,} ({len(fit.step_counts)})",
              f"{fit.max_relative_residual:.1%}"]
             for (solver, device), fit in fit_sweep(rows).items()]
    if not cells:
        return []
    return ["Time to an answer for K steps from nothing = setup (prepare + run(1)) + what the first run(K) costs "
            "beyond a steady one (XLA compiles once per distinct K) + per-call cost + K × per-step cost. "
            "Setup and first-run extra are medians over the K; per-call and per-step are the intercept and "
            "slope of the timed run(K) medians (max rel. residual: of that line); the one-off fit is the intercept "
            "of a line through the totals, a check on setup + extra. \"Setup = K steps\" is where the loop has cost "
            "as much as its setup.", ""] + markdown(
        ["solver", "device", "setup s", "first-run extra s", "one-off s (fit of totals)", "µs / call",
         "µs / step", "setup = K steps", "K (count)", "max rel. residual"], cells)


def accuracy_section(rows: list[Row]) -> list[str]:
    rows = [row for row in rows if row.median_s]
    if not rows:
        return []
    # What raw x is compared with: the fastest standardized-x solver's median wall time of the same dtype and device,
    # the same precision asked of both, on the same hardware.
    standardized_s = {}
    for row in rows:
        if row.info.get("x_scaling") == "standardized":
            key = row.key.device, row.dtype
            standardized_s[key] = min(standardized_s.get(key, row.median_s), row.median_s)
    cells = []
    for row in sorted(rows, key=lambda row: (row.key.device, row.info.get("x_scaling") != "raw", row.median_s)):
        reached, fastest_s = row.info.get("time_to_accuracy") or {}, standardized_s.get((row.key.device, row.dtype))
        steps = number(reached.get("iterations"))
        cells.append([f"`{row.key.solver}`", row.key.device, row.info.get("x_scaling", "—"),
                      f"{row.info['lr']:g}" if row.info.get("lr") else "—",
                      steps if reached.get("reached") else f"not reached within {steps}",
                      number(row.median_s), number(row.per_step_us),
                      f"{'yes' if reached.get('reached') else 'no'} ({reached.get('error', float('nan')):.5g})",
                      number(row.median_s / fastest_s) if fastest_s else "—"])
    targets = {(row.info.get("time_to_accuracy") or {}).get("target") for row in rows} - {None}
    target = ", ".join(f"{value:g}" for value in sorted(targets)) or "?"
    return [f"Wall time to (w, b) within a relative error of {target} of the closed form (least squares), both "
            "coefficients. Steps are the float64 expected answer's first step within the target, tightened by the "
            "dtype's tolerance for float32 so that its answer is within it too; the timed answer's own error is "
            "in brackets. The last column divides by the fastest standardized solver of the same dtype and device.",
            ""] + markdown(["solver", "device", "x", "lr", f"steps to {target}", "wall time s (median)",
                            "µs / step", "reached? (error)", "× standardized"], cells)
