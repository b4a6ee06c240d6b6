"""perf.summary: the per-step answer printed after a timed run, from this run's benchmarks alone."""

import copy
import re

from perf import summary
from run_documents import benchmark_entry

SETTING = "profile quick, threads: TF default"


def paired_run():
    """numpy_loop at 10 µs a step (its own trials and the ones beside the others) and exact ratios to it."""
    ratios = {"tf1_feed_dict": 30.0, "tf1_feed_dict_no_loss": 22.0, "tf1_constant": 20.0,
              "tf1_constant_no_loss": 13.0, "tf1_while_loop": 1.0}
    entries = []
    for n in (1_000, 100_000):
        reference = benchmark_entry("numpy_loop", "cpu", n, 99.0, iterations=100)
        reference["extra_info"]["trial_medians_s"] = [10e-6 * 100] * 5
        entries.append(reference)
        for solver, ratio in ratios.items():
            # per_iteration_us as measure.py writes it before the run is anchored: its fastest trial, here off.
            entry = benchmark_entry(solver, "cpu", n, 999.0, iterations=100, ratio=ratio, spread=0.0)
            entry["extra_info"].update(reference_trial_medians_s=[10e-6 * 100] * 5, reference_iterations=100)
            entries.append(entry)
    return entries


def test_per_step_times_come_from_the_paired_ratios_and_the_runs_reference():
    lines = summary.summary_lines(paired_run(), SETTING)
    assert lines[0].startswith(f"Per step, {SETTING}. × numpy_loop: the median of the trials' paired ratios")
    rows = {line.split()[0]: line.split() for line in lines if line.startswith(("numpy_loop", "tf1_"))}
    assert rows["numpy_loop"] == ["numpy_loop", "10.0", "reference", "10.0", "reference"]
    assert rows["tf1_while_loop"] == ["tf1_while_loop", "10.0", "1.00x", "10.0", "1.00x"]
    assert rows["tf1_feed_dict"] == ["tf1_feed_dict", "300", "30.0x", "300", "30.0x"]
    # Fastest first at n = 1,000, the size the question is about (the first two tie).
    order = [line.split()[0] for line in lines if line.split() and line.split()[0] in rows]
    assert set(order[:2]) == {"numpy_loop", "tf1_while_loop"} and order[-1] == "tf1_feed_dict"


def test_where_a_tf1_feed_dict_step_goes():
    lines = summary.summary_lines(paired_run(), SETTING)
    start = lines.index("Where a tf1_feed_dict step goes (cpu, n = 1,000, 300 µs):")
    # Columns: part, µs, interval (none when exact, as here), share of the step, how it was derived.
    parts = [re.split(r"\s{2,}", line.strip()) for line in lines[start + 1:]]
    assert parts == [
        ["loss fetch", "80.0 µs", "27%", "tf1_feed_dict − tf1_feed_dict_no_loss"],
        ["feed_dict copies", "100 µs", "33%", "tf1_feed_dict − tf1_constant"],
        ["Session.run call overhead", "120 µs", "40%", "tf1_constant_no_loss − tf1_while_loop"],
        ["arithmetic", "10.0 µs", "3%", "tf1_while_loop"],
    ]


def test_an_interval_is_shown_with_the_ratio():
    entries = [benchmark_entry("numpy_loop", "cpu", 1_000, 10.0),
               benchmark_entry("tf1_feed_dict", "cpu", 1_000, 300.0, ratio=30.0, spread=0.1)]
    (row,) = [line for line in summary.summary_lines(entries, SETTING) if line.startswith("tf1_feed_dict")]
    assert row.split(maxsplit=2)[2] == "30.0x (27.0–33.0)"


def test_the_runs_own_extra_info_is_left_as_it_was():
    entries = paired_run()
    before = copy.deepcopy(entries)
    summary.summary_lines(entries, SETTING)
    assert entries == before


def test_nothing_to_say_without_timings():
    disabled = benchmark_entry("numpy_loop", "cpu", 1_000, 10.0)
    disabled["extra_info"]["per_iteration_us"] = None  # as under --benchmark-disable
    assert summary.summary_lines([disabled], SETTING) == []
    assert summary.summary_lines([], SETTING) == []


def test_a_solver_that_ran_fewer_steps_says_so_with_the_time_scaled_to_the_full_count():
    eager = benchmark_entry("tf2_eager", "cpu", 1_000, 1_600.0, iterations=3_000, ratio=130.0, spread=0.0)
    eager["extra_info"]["steps_reduced_from"] = 100_000  # the seed profile's round budget
    entries = [benchmark_entry("numpy_loop", "cpu", 1_000, 12.0, iterations=100_000), eager]
    lines = summary.summary_lines(entries, SETTING)
    start = lines.index("Fewer steps, scaled:")
    assert lines[start + 1] == ("  tf2_eager at n = 1,000 ran 3,000 steps a round, not 100,000: "
                                "100,000 steps at its µs/step would take 160 s")
    assert "Fewer steps, scaled:" not in summary.summary_lines(entries[:1], SETTING)
