"""perf.report.rows: a run's benchmarks as rows, ratios from the paired trials, per-step times anchored once."""

import pytest

from helpers import benchmark_entry
from perf.measure import Key
from perf.report.rows import derived_keys, rows_of


def bench(solver, n=1000, iterations=1000, trial_medians=(0.02,), reference_medians=None, reference_iterations=None,
          **extra):
    info = {"solver": solver, "device": "cpu", "n": n, "iterations": iterations, "trial_medians_s": list(trial_medians),
            **extra}
    if reference_medians is not None:
        info.update(reference_trial_medians_s=list(reference_medians),
                    reference_iterations=reference_iterations or iterations)
    return {"name": f"test_fssgd[{solver}-cpu-n{n}]", "extra_info": info, "stats": {"median": 0.02, "rounds": 1}}


def by_key(benchmarks):
    rows, notes = rows_of(benchmarks)
    return {(row.key.solver, row.key.n): row for row in rows}, notes


def test_per_step_times_are_paired_ratios_times_the_lower_quartile_of_every_reference_trial_at_that_size():
    run = [bench("numpy_loop", trial_medians=[0.010, 0.011, 0.030]),
           bench("tf1_while_loop", trial_medians=[0.006, 0.0065], reference_medians=[0.012, 0.013]),
           bench("numpy_lean", trial_medians=[0.028], reference_medians=[0.014]),
           bench("numpy_lean", n=100_000, iterations=100, trial_medians=[0.125], reference_medians=[0.5]),
           # A reference timed over fewer steps: 0.5 s / 50.
           bench("tf1_callable", n=100_000, iterations=100, trial_medians=[0.25], reference_medians=[0.5],
                 reference_iterations=50)]
    rows, notes = by_key(run)
    assert notes == []
    # n = 1000 pools six reference trials (three its own, three beside others), 10-14 ms and 30 ms: lower quartile
    # 11.25 ms / 1000 steps.
    assert rows["numpy_loop", 1000].per_step_us == pytest.approx(11.25)
    assert rows["numpy_loop", 1000].reference_trials == 6
    assert rows["tf1_while_loop", 1000].ratio.value == pytest.approx(0.5)
    assert rows["tf1_while_loop", 1000].per_step_us == pytest.approx(5.625)
    assert rows["numpy_lean", 1000].per_step_us == pytest.approx(22.5)
    # Another size has its own pool of per-step times, 5 ms and 10 ms: lower quartile 6.25 ms, × 0.25.
    assert rows["tf1_callable", 100_000].ratio.value == pytest.approx(0.25)  # 2.5 ms a step against 10 ms
    assert rows["numpy_lean", 100_000].per_step_us == pytest.approx(1562.5)


def test_the_anchor_stays_on_the_reference_fast_mode_while_a_quarter_of_its_trials_are_in_it():
    fast, slow = [0.0110, 0.0111, 0.0112], [0.0175, 0.0176, 0.0177, 0.0178, 0.0179]
    for modes in (fast + slow, slow + fast + fast):  # fast in 3 of 8 trials, then in 6 of 11
        rows, _ = by_key([bench("numpy_loop", trial_medians=modes)])
        assert 11.0 <= rows["numpy_loop", 1000].per_step_us <= 11.2


def test_a_studys_benchmark_keeps_its_fastest_trial_and_is_not_paired():
    rows, _ = by_key([bench("numpy_loop", trial_medians=[0.03, 0.02], figure="iteration_sweep"),
                      bench("tf1_while_loop", trial_medians=[0.01], figure="iteration_sweep")])
    assert rows["numpy_loop", 1000].per_step_us == pytest.approx(20.0) and rows["numpy_loop", 1000].ratio is None
    assert rows["tf1_while_loop", 1000].study == "iteration_sweep"


def test_benchmarks_that_cannot_be_read_are_named_and_left_out():
    untimed = bench("numpy_lean")
    del untimed["extra_info"]["trial_medians_s"]  # as under --benchmark-disable
    foreign = {"name": "test_other", "extra_info": {}}
    rows, notes = by_key([bench("numpy_loop"), bench("numpy_loop"), untimed, foreign])
    assert list(rows) == [("numpy_loop", 1000)]
    assert notes == ["test_fssgd[numpy_lean-cpu-n1000]: no timed trials (run with --benchmark-disable, or saved before trials), skipped",
                     "test_other: not an FSSGD benchmark (no solver, device, n in extra_info), skipped",
                     "test_fssgd[numpy_loop-cpu-n1000]: a second numpy_loop-cpu-n1000 in one run, skipped"]


def test_what_a_saved_run_carries_beside_its_trials():
    rows, _ = rows_of([benchmark_entry("numpy_loop", "cpu", 1_000, 10.0),
                       benchmark_entry("tf1_feed_dict", "cpu", 1_000, 300.0, ratio=30.0, spread=0.1)])
    reference, paired = (derived_keys(row) for row in rows)
    assert "ratio_to_reference" not in reference and reference["per_iteration_us"] == pytest.approx(10.0)
    assert paired["per_iteration_us"] == pytest.approx(300.0)
    assert paired["ratio_to_reference"] == {"ratio": pytest.approx(30.0), "low": pytest.approx(27.0),
                                            "high": pytest.approx(33.0), "coverage": 0.9375}
    assert (paired["reference_per_iteration_us"], paired["reference_trials_pooled"]) == (pytest.approx(10.0), 10)


def test_a_key_names_a_benchmark_as_its_id_does():
    assert Key("tf1_while_loop", "cpu", 1000).name == "tf1_while_loop-cpu-n1000"
