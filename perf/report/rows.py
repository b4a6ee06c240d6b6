"""What a saved run's benchmarks mean (docs/extra-info.md): one Row each, its ratio and µs per step derived once."""

import statistics
from dataclasses import dataclass, field

from perf.judge.statistics import Interval, median_interval
from perf.measure import TIMING_REFERENCE, Key
from perf.measure.trials import paired_ratios


@dataclass(frozen=True)
class Row:
    """One timed benchmark of a run: all that the report, the history, the comparison and the studies read of it."""

    key: Key
    name: str  # pytest-benchmark's, as the comparison prints it
    study: str | None  # extra_info["figure"]: the iteration sweep or time to accuracy; None in the per-step tables
    per_step_us: float
    ratio: Interval | None  # × the timing reference, paired trial by trial; exactly 1 for the reference itself
    trial_ratios: tuple[float, ...]  # per trial, × the timing reference beside it (ratio: their median); () unpaired
    trial_processes: tuple[int, ...]  # per trial, its worker process
    iterations: int
    rounds: int | None
    median_s: float | None  # pytest-benchmark's median round
    reference_us: float | None  # the anchor of per_step_us: the timing reference's lower-quartile µs per step at n
    reference_trials: int  # the run's trials of the timing reference at n that quartile is taken over
    info: dict = field(repr=False)  # the benchmark's own extra_info: a study's own keys, and where derived keys go
    # RECORDED: read as the benchmark recorded them (docs/extra-info.md), None where it recorded none.
    trials: int | None
    setup_s: float | None
    first_run_s: float | None
    dtype: str | None
    device_name: str | None
    tensorflow: str | None
    steps_reduced_from: int | None
    # COUNTED (--count): instructions a step over the counted processes, and × the timing reference's in the same
    # processes, each their median between the lowest and the highest; None where the run did not count it.
    instructions: Interval | None = None
    instruction_ratio: Interval | None = None
    instruction_ratios: tuple[float, ...] = ()  # per counted process, × the timing reference's count beside it

    @property
    def is_timing_reference(self) -> bool:
        return (self.key.solver, self.key.device) == TIMING_REFERENCE


RECORDED = ("trials", "setup_s", "first_run_s", "dtype", "device_name", "tensorflow", "steps_reduced_from")


def rows_of(benchmarks: list) -> tuple[list[Row], list[str]]:
    """The run's timed benchmarks as rows (µs per step: docs/measurement.md#µs-per-step), and a note for each
    benchmark left out."""
    entries, notes = [], []
    for benchmark in benchmarks:
        benchmark = benchmark if isinstance(benchmark, dict) else {}
        info, name = benchmark.get("extra_info") or {}, benchmark.get("name", "?")
        solver, device, n = info.get("solver"), info.get("device"), info.get("n")
        if not (solver and device and isinstance(n, int)):
            notes.append(f"{name}: not an FSSGD benchmark (no solver, device, n in extra_info), skipped")
        elif not info.get("trial_medians_s"):
            notes.append(f"{name}: no timed trials (run with --benchmark-disable, or saved before trials), skipped")
        else:
            entries.append((Key(solver, device, n), info, benchmark))
    pools = reference_pools(entries)
    rows, seen = [], set()
    for key, info, benchmark in entries:
        study = info.get("figure")
        if not study and key in seen:
            notes.append(f"{benchmark.get('name', '?')}: a second {key.name} in one run, skipped")
            continue
        seen.add(key)
        ratios = trial_ratios(info)
        ratio = median_interval(ratios) if ratios and not study else None
        if not study and (key.solver, key.device) == TIMING_REFERENCE:
            ratio = Interval(1.0, 1.0, 1.0)
        pool = pools.get(key.n, []) if not study and ratio else []
        reference_us = lower_quartile(pool) * 1e6 if pool else None
        if reference_us:
            per_step_us = ratio.value * reference_us
        else:  # a study's, or unpaired: a slow state only adds time, so its cleanest trial
            per_step_us = min(info["trial_medians_s"]) / info["iterations"] * 1e6
        stats = benchmark.get("stats") or {}
        rows.append(Row(key, benchmark.get("name", "?"), study, per_step_us, ratio, tuple(ratios),
                        tuple(info.get("trial_processes") or ()), info["iterations"], stats.get("rounds"),
                        stats.get("median"), reference_us, len(pool), info,
                        **{name: info.get(name) for name in RECORDED}, **counted(info)))
    return rows, notes


def counted(info: dict) -> dict:
    """Row's instructions and instruction_ratio from extra_info["instructions"]; {} where the run did not count."""
    found = info.get("instructions") or {}
    if not found.get("per_step"):
        return {}
    ratios = [own / beside for own, beside in zip(found["per_step"], found["reference_per_step"], strict=True)]
    return {"instructions": median_interval(found["per_step"]), "instruction_ratio": median_interval(ratios),
            "instruction_ratios": tuple(ratios)}


def reference_pools(entries) -> dict[int, list[float]]:
    """n -> the per-step seconds of every timing reference trial of the run at n."""
    pools = {}
    for key, info, _ in entries:
        if info.get("figure"):
            continue
        pool = pools.setdefault(key.n, [])
        if (key.solver, key.device) == TIMING_REFERENCE:
            pool.extend(median / info["iterations"] for median in info.get("trial_medians_s") or [])
        steps = info.get("reference_iterations", info["iterations"])
        pool.extend(median / steps for median in info.get("reference_trial_medians_s") or [])
    return pools


def lower_quartile(values: list[float]) -> float:
    return statistics.quantiles(values, n=4, method="inclusive")[0] if len(values) > 1 else values[0]


def trial_ratios(info: dict) -> list[float]:
    """Each trial's ratio to the timing reference rounds beside it, per step on both sides; [] where unpaired."""
    medians, beside = info.get("trial_medians_s"), info.get("reference_trial_medians_s")
    if not (medians and beside):
        return []
    return paired_ratios(medians, beside, info["iterations"], info.get("reference_iterations", info["iterations"]))


def derived_keys(row: Row) -> dict:
    """What a saved run carries besides the trials, for readers of its JSON (docs/extra-info.md)."""
    keys = {"per_iteration_us": row.per_step_us}
    if row.reference_us:
        keys.update(reference_per_iteration_us=row.reference_us, reference_trials_pooled=row.reference_trials)
    if row.ratio and not row.is_timing_reference:
        keys["ratio_to_reference"] = dict(zip(("ratio", "low", "high", "coverage"), row.ratio))
    return keys
