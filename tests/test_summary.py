"""perf.report.summary: the per-step answer printed after a timed run, from this run's benchmarks alone."""

import copy
import re

import pytest
from helpers import benchmark_entry

from perf.measure import environment
from perf.measure.trials import SLOWDOWN_VARIABLE
from perf.report import summary
from perf.report.tables import coverage_wording

SETTING = "profile quick, threads: TF default"
RATIOS = {"tf1_feed_dict": 30.0, "tf1_feed_dict_no_loss": 22.0, "tf1_constant": 20.0, "tf1_constant_no_loss": 13.0,
          "tf1_while_loop": 1.0}


def paired_run():
    """numpy_loop at 10 µs a step (its own trials and the ones beside the others) and exact ratios to it."""
    return [entry for n in (1_000, 100_000) for entry in
            [benchmark_entry("numpy_loop", "cpu", n, 10.0, iterations=100)]
            + [benchmark_entry(solver, "cpu", n, 10.0 * ratio, iterations=100, ratio=ratio, spread=0.0)
               for solver, ratio in RATIOS.items()]]


def test_per_step_times_come_from_the_paired_ratios_and_the_runs_reference():
    lines = summary.summary_lines(paired_run(), SETTING)
    assert lines[0] == (f"Per step, {SETTING}. × numpy_loop: the median of the trials' paired ratios, with its "
                        "interval (93.8%, the range of 5 trials).")
    rows = {line.split()[0]: line.split() for line in lines if line.startswith(("numpy_loop", "tf1_"))}
    assert rows["numpy_loop"] == ["numpy_loop", "10.0", "reference", "10.0", "reference"]
    assert rows["tf1_while_loop"] == ["tf1_while_loop", "10.0", "1.00", "10.0", "1.00"]
    assert rows["tf1_feed_dict"] == ["tf1_feed_dict", "300", "30.0", "300", "30.0"]
    # Fastest first at n = 1,000, the size the question is about (the first two tie).
    order = [line.split()[0] for line in lines if line.split() and line.split()[0] in rows]
    assert set(order[:2]) == {"numpy_loop", "tf1_while_loop"} and order[-1] == "tf1_feed_dict"


def test_where_a_tf1_feed_dict_step_goes_with_the_remainder_and_the_other_way_round():
    lines = summary.summary_lines(paired_run(), SETTING)
    start = lines.index("Where a tf1_feed_dict step goes (cpu, n = 1,000, 300 µs):")
    # Columns: part, µs (no interval where exact, as here), share of the step, how it was derived.
    parts = [re.split(r"\s{2,}", line.strip()) for line in lines[start + 2:]]
    assert parts == [
        ["loss fetch", "80.0", "27%", "tf1_feed_dict − tf1_feed_dict_no_loss"],
        ["feed_dict copies", "100", "33%", "tf1_feed_dict − tf1_constant"],
        ["Session.run call", "120", "40%", "tf1_constant_no_loss − tf1_while_loop"],
        ["arithmetic", "10.0", "3%", "tf1_while_loop"],
        # 300 − (80 + 100 + 120 + 10): the loss fetch on constant data (70) less the one on fed data (80).
        ["remainder: the parts interact", "-10.0", "-3%", "whole − the parts above"],
        ["(loss fetch, on constant data)", "70.0", "23%", "tf1_constant − tf1_constant_no_loss"],
        ["(feed_dict copies, without the loss fetch)", "90.0", "30%", "tf1_feed_dict_no_loss − tf1_constant_no_loss"],
    ]


@pytest.mark.parametrize("affinity, cpus, said", [("free", 2, True), ("CPUs 1", 1, False), ("free", 1, False)])
def test_a_free_run_on_several_cpus_says_its_parts_hold_what_free_costs(affinity, cpus, said):
    lines = summary.summary_lines(paired_run(), SETTING, summary.free_on({"cpu_affinity": affinity,
                                                                          "cpus_available": cpus}))
    assert any("these parts hold what running free costs over one CPU" in line for line in lines) is said


def test_an_interval_is_shown_with_the_ratio():
    entries = [benchmark_entry("numpy_loop", "cpu", 1_000, 10.0),
               benchmark_entry("tf1_feed_dict", "cpu", 1_000, 300.0, ratio=30.0, spread=0.1)]
    (row,) = [line for line in summary.summary_lines(entries, SETTING) if line.startswith("tf1_feed_dict")]
    assert row.split(maxsplit=2)[2] == "30.0 (27.0 to 33.0)"


def test_coverage_reads_as_a_range_where_it_is_one():
    assert coverage_wording(0.9375, 5) == "93.8%, the range of 5 trials"
    assert coverage_wording(0.9296875, 8) == "93%"
    assert coverage_wording(1.0) == "exact"


def test_the_runs_own_extra_info_is_left_as_it_was():
    entries = paired_run()
    before = copy.deepcopy(entries)
    summary.summary_lines(entries, SETTING)
    assert entries == before


def test_nothing_to_say_without_timings():
    disabled = benchmark_entry("numpy_loop", "cpu", 1_000, 10.0)
    del disabled["extra_info"]["trial_medians_s"]  # as under --benchmark-disable
    assert summary.summary_lines([disabled], SETTING) == []
    assert summary.summary_lines([], SETTING) == []


def test_a_solver_that_ran_fewer_steps_says_so_with_the_time_scaled_to_the_full_count():
    eager = benchmark_entry("tf2_eager", "cpu", 1_000, 1_560.0, iterations=3_000, ratio=130.0, spread=0.0)
    eager["extra_info"]["steps_reduced_from"] = 100_000  # the seed profile's round budget
    entries = [benchmark_entry("numpy_loop", "cpu", 1_000, 12.0, iterations=100_000), eager]
    lines = summary.summary_lines(entries, SETTING)
    start = lines.index("Fewer steps, scaled:")
    assert lines[start + 1] == ("  tf2_eager at n = 1,000 ran 3,000 steps a round, not 100,000: "
                                "100,000 steps at its µs/step would take 156 s")
    assert "Fewer steps, scaled:" not in summary.summary_lines(entries[:1], SETTING)


def test_a_run_slowed_on_purpose_says_so(monkeypatch):
    monkeypatch.delenv(SLOWDOWN_VARIABLE, raising=False)
    assert "SLOWED" not in summary.setting(environment.describe("quick"))
    monkeypatch.setenv(SLOWDOWN_VARIABLE, "*=1.1")
    assert summary.setting(environment.describe("quick")).endswith(f"SLOWED on purpose by {SLOWDOWN_VARIABLE}=*=1.1 (test tooling)")


def test_the_answer_says_which_benchmarks_took_more_trials_and_which_were_still_imprecise():
    run = paired_run()
    for entry in run:
        if entry["extra_info"]["solver"] != "numpy_loop":
            entry["extra_info"]["trials_stopped"] = "precise"
    assert summary.summary_lines(run, SETTING)[-1] == "Trials: 5 a benchmark, none more."
    slow = [entry for entry in run if entry["extra_info"]["solver"] == "tf1_feed_dict"]
    slow[0]["extra_info"].update(benchmark_entry("tf1_feed_dict", "cpu", 1_000, 300.0, iterations=100, ratio=30.0,
                                                 trials=12)["extra_info"], trials_stopped="budget")
    slow[1]["extra_info"].update(trials=9, trials_stopped="precise")
    assert summary.summary_lines(run, SETTING)[-1] == (
        "Trials: 5 a benchmark; 2 of 10 took more (up to 12) to be precise enough to call a change; 1 was not yet "
        "when they stopped (tf1_feed_dict-cpu-n1000): a comparison may not tell their change (--decide hands it to "
        "the gate), and --budget gives them more time.")
    # A run that records what its budget bought says it, and which benchmark it gave up on, and why.
    for entry in run:
        entry["extra_info"]["budget"] = {"budget_s": 120.0, "passes": 7, "seconds": 61.2, "trials": 11, "start_s": 3.0}
    slow[0]["extra_info"]["trials_stopped"] = "out_of_reach"
    assert summary.summary_lines(run, SETTING)[-1] == (
        "Trials: 5 a benchmark; the budget's 7 passes past them (61 s of 120) bought 11 trials: 1 of 2 benchmarks made "
        "precise enough to call a change (up to 9 trials); 1 out of reach (tf1_feed_dict-cpu-n1000): their spread "
        "needs more trials than 40 or than the budget could buy: a comparison may not tell their change (--decide "
        "hands it to the gate), and --budget gives them more time.")
    # A run made without a budget's record (before it, or --benchmark-disable) says nothing of it.
    assert not summary.summary_lines(paired_run(), SETTING)[-1].startswith("Trials:")
