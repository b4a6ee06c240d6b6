"""Every profile's timed path end to end, shrunk by FSSGD_SHRINK so that it takes seconds: a crash anywhere between a
benchmark's setup and the run's summary or report fails here, and a shrunk run says so wherever it is read."""

import json

import pytest

from perf.measure import cpus
from perf.measure.profiles import PROFILES, SHRINK_VARIABLE, Profile, shrink_factor
from perf.measure.schedule import PRECISE
from perf.measure.trials import SLOWDOWN_VARIABLE
from perf.report.__main__ import main as report_main
from perf.report.analysis import STEP_PARTS
from perf.report.rows import trial_ratios

SHRINK = 1_000
SEED_STEPS = PROFILES["seed"].steps // SHRINK


def shrunk_run(run_perf_on_a_terminal, tmp_path, profile, solvers, options=(), **variables):
    """(everything it said on a terminal, its JSON): the profile shrunk, these solvers on the CPU, these options."""
    output = run_perf_on_a_terminal("--profile", profile, "--solvers", ",".join(solvers), "--devices", "cpu",
                                    f"--benchmark-json={tmp_path / 'run.json'}", *options, **{SHRINK_VARIABLE: str(SHRINK)},
                                    **variables)
    assert (tmp_path / "run.json").exists(), output[-3000:]
    return output, json.loads((tmp_path / "run.json").read_text())


def by_name(document) -> dict:
    return {bench["name"]: bench["extra_info"] for bench in document["benchmarks"]}


def assert_recorded_as_shrunk(output, document):
    assert document["machine_info"]["fssgd"]["shrink"] == SHRINK
    assert all(info["shrink"] == SHRINK for info in by_name(document).values())
    assert f"SHRUNK {SHRINK:,}x by {SHRINK_VARIABLE}" in output  # the header and the summary's setting


# The seed's own two programs, the solvers whose differences are the parts of a tf1_feed_dict step, and tf2_eager,
# the per-step solver the round budget cuts short.
SEED_SOLVERS = sorted({"numpy_loop", "tf2_eager"} | {name for part in STEP_PARTS for name in part[1:] if name})


@pytest.mark.tensorflow
def test_the_seed_profile_times_its_own_programs_at_the_full_count_and_the_slowest_per_step_solver_at_fewer(
        run_perf_on_a_terminal, tmp_path):
    output, document = shrunk_run(run_perf_on_a_terminal, tmp_path, "seed", SEED_SOLVERS)
    assert f" {len(SEED_SOLVERS)} passed" in output, output[-3000:]
    info = by_name(document)
    for program in ("numpy_loop", "tf1_feed_dict"):
        seed = info[f"test_fssgd[{program}-cpu-n1000]"]
        assert seed["iterations"] == SEED_STEPS and "steps_reduced_from" not in seed
        # Announced like every long round, with its estimated length (every round counts as long here).
        assert f"{program} cpu n=1,000: 3 timed rounds of {SEED_STEPS:,} steps, about " in output
    # An eager step costs far more than the shrunk budget allows for a whole round, on any machine.
    eager = info["test_fssgd[tf2_eager-cpu-n1000]"]
    assert eager["steps_reduced_from"] == SEED_STEPS and eager["iterations"] < SEED_STEPS
    summary = output[output.index("the answer for this run"):]
    for solver in SEED_SOLVERS:
        assert f"\n{solver} " in summary
    assert "tf2_eager at n = 1,000 ran " in summary  # "Fewer steps, scaled"
    assert "Where a tf1_feed_dict step goes (cpu, n = 1,000" in summary
    for part, _, _ in STEP_PARTS:
        assert f"\n  {part} " in summary
    assert_recorded_as_shrunk(output, document)


@pytest.mark.tensorflow
def test_a_plain_free_run_says_its_parts_hold_what_running_free_costs(run_perf_on_a_terminal):
    """Neither saved nor written as JSON: pytest-benchmark completes a run's extra_info only when it writes it, so the
    line must come from the run's environment."""
    if len(cpus.allowed()) < 2:
        pytest.skip("this process may use one CPU: a free run is a one-CPU run here")
    parts = sorted({name for part in STEP_PARTS for name in part[1:] if name} | {"numpy_loop"})
    output = run_perf_on_a_terminal("--profile", "quick", "--solvers", ",".join(parts), "--devices", "cpu",
                                    "-k", "n1000", **{SHRINK_VARIABLE: str(SHRINK)})
    summary = output[output.index("the answer for this run"):]
    assert "Where a tf1_feed_dict step goes (cpu, n = 1,000" in summary, output[-3000:]
    assert f"Free on {len(cpus.allowed())} CPUs, these parts hold what running free costs over one CPU" in summary


@pytest.mark.tensorflow
def test_the_quick_profile_caps_the_large_size_warms_up_at_the_full_count_and_records_a_slowdown(
        run_perf_on_a_terminal, tmp_path):
    output, document = shrunk_run(run_perf_on_a_terminal, tmp_path, "quick", ["numpy_loop", "tf1_while_loop"],
                                  **{SLOWDOWN_VARIABLE: "tf1_while_loop=1.5"})
    assert " 4 passed" in output, output[-3000:]
    quick = PROFILES["quick"].shrunk(SHRINK)
    for name, info in by_name(document).items():
        assert info["iterations"] == quick.steps_at(info["n"]), name
        # The shrunk budget leaves no time for more trials than the profile's.
        assert info["trials"] == quick.trials and info["first_run_s"] is not None  # the full-count warm-up
        assert info.get("slowdown") == (1.5 if info["solver"] == "tf1_while_loop" else None), name
    assert document["machine_info"]["fssgd"]["slowdown"] == "tf1_while_loop=1.5"
    assert f"SLOWED on purpose by {SLOWDOWN_VARIABLE}=tf1_while_loop=1.5" in output
    assert "n = 1,000" in output and "n = 100,000" in output  # the summary's columns
    assert_recorded_as_shrunk(output, document)


# Two trials more than the quick profile's make a benchmark precise enough, whatever the machine: a plugin in place of
# the rule, so that the budget's passes certainly run.
EXTRA_PASSES = 2
IMPRECISE_PLUGIN = f"""
import perf.measure.schedule as schedule
schedule.precise_enough = lambda ratios, threshold: len(ratios) >= {PROFILES["quick"].trials + EXTRA_PASSES}
schedule.trials_needed = lambda ratios, threshold: {PROFILES["quick"].trials + EXTRA_PASSES}.0
"""


@pytest.mark.tensorflow
def test_a_budget_takes_more_trials_of_the_benchmarks_not_yet_precise_enough_each_pass_in_fresh_workers(
        run_perf_on_a_terminal, tmp_path):
    (tmp_path / "imprecise_for_two_passes.py").write_text(IMPRECISE_PLUGIN)
    output, document = shrunk_run(run_perf_on_a_terminal, tmp_path, "quick",
                                  ["numpy_loop", "numpy_lean", "numpy_affine_limit"],
                                  ["--budget", "60", "-p", "imprecise_for_two_passes"])
    assert "and more within 60 s of passes where they cannot yet call 10%" in output
    profile_trials, judged = PROFILES["quick"].trials, 0
    for name, info in by_name(document).items():
        processes = info["trial_processes"]
        if info["solver"] == "numpy_loop":  # the timing reference is not judged: the profile's trials
            assert info["trials"] == profile_trials and info["trials_stopped"] is None, name
            continue
        judged += 1
        assert info["trials"] == len(trial_ratios(info)) == profile_trials + EXTRA_PASSES, name
        assert info["trials_stopped"] == PRECISE, name
        # Each pass past the profile's ran on a worker of its own (Pool.extra), none of the profile's.
        assert len(set(processes[profile_trials:])) == EXTRA_PASSES, name
        assert not set(processes[profile_trials:]) & set(processes[:profile_trials]), name
    assert judged == 4  # numpy_lean and numpy_affine_limit at both sizes
    spent = next(iter(by_name(document).values()))["budget"]
    assert spent["passes"] == EXTRA_PASSES and spent["trials"] == EXTRA_PASSES * judged and spent["start_s"] > 0
    assert output.count("a trial more of ") == EXTRA_PASSES


@pytest.mark.tensorflow
def test_the_full_profile_times_every_size_and_the_studies_and_its_report_is_written(run_perf_on_a_terminal,
                                                                                      tmp_path, capsys):
    # tf2_function takes the step-count sweep and numpy_standardized the time to accuracy (31 steps): the studies'
    # step counts are the studies, never shrunk, so these are the solvers whose studies stay short.
    output, document = shrunk_run(run_perf_on_a_terminal, tmp_path, "full", ["tf2_function", "numpy_standardized"])
    sizes = len(PROFILES["full"].sizes)
    assert f" {2 * sizes + 4 + 1} passed" in output, output[-3000:]
    figures = [info.get("figure") for info in by_name(document).values()]
    assert figures.count("iteration_sweep") == 4 and figures.count("time_to_accuracy") == 1
    (accuracy,) = [info["time_to_accuracy"] for info in by_name(document).values() if "time_to_accuracy" in info]
    assert accuracy["reached"] and accuracy["iterations"] < PROFILES["full"].steps
    assert_recorded_as_shrunk(output, document)

    assert report_main([str(tmp_path / "run.json"), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert f"shrunk on purpose: {SHRINK_VARIABLE}={SHRINK}" in report
    for section in ("Overhead model", "Step-count sweep", "Time to accuracy"):
        assert f"## {section}" in report
    assert "plot:" in capsys.readouterr().out


def test_a_shrunk_profile_keeps_its_sizes_trials_and_branches_and_divides_its_steps_and_budget():
    seed = PROFILES["seed"].shrunk(SHRINK)
    assert (seed.sizes, seed.trials, seed.full_count_solvers) == (PROFILES["seed"].sizes, 3, ("numpy_loop", "tf1_feed_dict"))
    assert (seed.steps, seed.probe_steps, seed.shrink) == (100, 1, SHRINK)
    assert seed.max_round_s == pytest.approx(PROFILES["seed"].max_round_s / SHRINK)
    # No cap stays no cap; a cap is shrunk like the steps, so the same sizes are capped.
    assert PROFILES["seed"].shrunk(SHRINK).max_sample_steps is None
    quick = PROFILES["quick"].shrunk(SHRINK)
    assert [quick.steps_at(n) for n in quick.sizes] == [1, 1]
    assert PROFILES["quick"].shrunk(1) is PROFILES["quick"]
    assert quick.budget_s == pytest.approx(PROFILES["quick"].budget_s / SHRINK)
    # full runs every step up to n = 1e5 and caps only n = 1e6 (to 100 steps), shrunk or not.
    for factor in (1, SHRINK):
        full = PROFILES["full"].shrunk(factor)
        assert [full.steps_at(n) for n in full.sizes] == [full.steps] * 4 + [max(1, full.steps // 10)]
    assert Profile(sizes=(1,), steps=5, trials=1, rounds_per_trial=1).shrunk(10).steps == 1  # never no steps


@pytest.mark.parametrize("text, factor", [("", 1), ("1000", 1_000), (" 10 ", 10)])
def test_the_shrink_is_a_whole_number(text, factor):
    assert shrink_factor(text) == factor


@pytest.mark.parametrize("text", ["0", "-5", "0.5", "fast"])
def test_a_shrink_that_is_not_a_whole_number_of_1_or_more_is_refused(text):
    with pytest.raises(ValueError, match=f"{SHRINK_VARIABLE}: '{text}' is not a whole number of 1 or more"):
        shrink_factor(text)


def test_a_budget_that_is_not_a_number_of_seconds_is_a_usage_error(run_perf):
    result = run_perf("--collect-only", "--budget", "-5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--budget: expected a number of seconds, 0 or more, e.g. 120, got '-5'*"])


def test_a_bad_shrink_is_a_usage_error_before_anything_runs(run_perf, monkeypatch):
    monkeypatch.setenv(SHRINK_VARIABLE, "fast")
    result = run_perf("--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{SHRINK_VARIABLE}: 'fast' is not a whole number of 1 or more*"])
