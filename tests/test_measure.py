"""perf.measure's run-wide figures: per-step times anchored to the reference timed all through the run."""

import pytest

from perf.measure import anchor_to_reference


def bench(solver, n=1000, iterations=1000, trial_medians=(0.02,), reference_medians=None, ratio=None, **extra):
    info = {"solver": solver, "device": "cpu", "n": n, "iterations": iterations, "per_iteration_us": 99.0,
            "trial_medians_s": list(trial_medians), **extra}
    if reference_medians is not None:
        info.update(reference_trial_medians_s=list(reference_medians), ratio_to_reference={"ratio": ratio},
                    reference_iterations=iterations)
    return {"name": f"test_fssgd[{solver}-cpu-n{n}]", "extra_info": info}


def test_per_step_times_are_paired_ratios_times_the_median_of_every_reference_trial_at_that_size():
    run = [bench("numpy_loop", trial_medians=[0.010, 0.011, 0.030]),
           bench("tf1_while_loop", reference_medians=[0.012, 0.013], ratio=0.5),
           bench("numpy_lean", reference_medians=[0.014], ratio=2.0),
           bench("numpy_lean", n=100_000, iterations=100, reference_medians=[0.5], ratio=0.25),
           bench("tf1_callable", n=100_000, iterations=100, reference_medians=[0.5], ratio=0.25)]
    run[-1]["extra_info"]["reference_iterations"] = 50  # a reference timed over fewer steps: 0.5 s / 50
    anchor_to_reference(run)
    info = {(b["extra_info"]["solver"], b["extra_info"]["n"]): b["extra_info"] for b in run}
    # n = 1000 pools six reference trials (three its own, three beside others): median 0.0125 s / 1000 steps.
    assert info["numpy_loop", 1000]["per_iteration_us"] == pytest.approx(12.5)
    assert info["numpy_loop", 1000]["reference_trials_pooled"] == 6
    assert info["tf1_while_loop", 1000]["per_iteration_us"] == pytest.approx(6.25)
    assert info["numpy_lean", 1000]["per_iteration_us"] == pytest.approx(25.0)
    # Another size has its own pool of per-step times, 5 ms and 10 ms: median 7.5 ms × 0.25.
    assert info["numpy_lean", 100_000]["per_iteration_us"] == pytest.approx(1875.0)


def test_unpaired_benchmarks_and_figures_keep_their_own_per_step_time():
    run = [bench("numpy_loop", figure="iteration_sweep"), bench("tf1_while_loop", figure="iteration_sweep")]
    anchor_to_reference(run)
    assert [b["extra_info"]["per_iteration_us"] for b in run] == [99.0, 99.0]


def test_a_reference_timed_over_fewer_steps_is_compared_per_step(monkeypatch):
    from types import SimpleNamespace

    from perf import measure
    from perf.trials import Trial

    monkeypatch.setattr(measure, "REFERENCE_MAX_SAMPLE_STEPS", 1_000 * 100)  # n = 1000: 100 reference steps
    trial = Trial(setup_s=0.1, first_run_s=0.02, rounds_s=[0.02] * 3, reference_rounds_s=[0.001] * 3)
    trials = SimpleNamespace(trials=[trial] * 5, rounds_per_trial=3, warm_up_each_trial=False, open_reference=object())
    figures = measure.trial_figures(trials, n=1_000, iterations=1_000)
    # 20 µs a step against the reference's 10 µs a step (1 ms over 100 steps).
    assert figures["reference_iterations"] == 100
    assert figures["ratio_to_reference"] == {"ratio": pytest.approx(2.0), "low": pytest.approx(2.0),
                                             "high": pytest.approx(2.0)}


@pytest.mark.parametrize("count, rounded", [(3_750.0, 3_000), (100_000, 100_000), (99_999.9, 90_000), (7.9, 7),
                                            (0.2, 1)])
def test_a_reduced_step_count_keeps_one_significant_digit(count, rounded):
    from perf.measure import one_significant_digit

    assert one_significant_digit(count) == rounded


def test_a_round_budget_runs_fewer_steps_except_for_the_seeds_own_programs():
    import solvers
    from perf.measure import round_plan
    from perf.profiles import Profile
    from solvers.problem import seed_problem

    # 1e5 numpy_loop steps take about a second (12 µs each here); a 10 ms budget leaves about 1% of them.
    budget = Profile(sizes=(1_000,), iterations=100_000, trials=1, rounds_per_trial=1, max_round_s=0.01)
    problem = seed_problem(1_000, iterations=100_000)
    steps, round_s = round_plan(solvers.get("numpy_loop"), "cpu", problem, 100_000, budget)
    assert 1 <= steps < 100_000 and str(steps).rstrip("0") in "123456789"
    assert round_s <= 0.01
    exempt = Profile(sizes=(1_000,), iterations=100_000, trials=1, rounds_per_trial=1, max_round_s=0.01,
                     full_count_solvers=("numpy_loop",))
    assert round_plan(solvers.get("numpy_loop"), "cpu", problem, 100_000, exempt)[0] == 100_000
