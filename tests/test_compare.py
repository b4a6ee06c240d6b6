"""Two runs compared by their trials' paired ratios: the shift's distribution-free interval, the verdicts, and what
the terminal says first."""

import math
import random
import shutil

import pytest
from pytest_benchmark.utils import get_machine_id
from scipy.stats import mannwhitneyu

from perf.measure import Key
from perf.measure.worker import ROOT
from perf.report.compare import (DEFAULT_THRESHOLD, compared, comparison_lines, environment_line, rank_sum_cdf,
                                 shift_interval)

KEY = Key("tf1_while_loop", "cpu", 1000)


def info(ratios, processes=True):
    """A benchmark's extra_info whose trials have these ratios to the timing reference."""
    found = {"iterations": 1000, "reference_iterations": 1000, "trial_medians_s": [0.02 * ratio for ratio in ratios],
             "reference_trial_medians_s": [0.02] * len(ratios), "solver": KEY.solver, "device": KEY.device, "n": KEY.n}
    if processes:
        found["trial_processes"] = list(range(len(ratios)))
    return found


def spread(center, width=0.02, trials=7):
    return [center * math.exp(width * (index - trials // 2)) for index in range(trials)]


@pytest.mark.parametrize("first, second", [(5, 5), (3, 7), (8, 8)])
def test_the_rank_sum_distribution_is_mann_and_whitneys_exact_one(first, second):
    cdf = rank_sum_cdf(first, second)
    assert cdf[-1] == pytest.approx(1.0) and len(cdf) == first * second + 1
    rng = random.Random(first * 100 + second)
    for _ in range(20):
        a, b = [rng.random() for _ in range(first)], [rng.random() for _ in range(second)]
        statistic = sum(x > y for x in a for y in b)
        # scipy's exact one-sided p-value is P(U ≥ statistic).
        assert mannwhitneyu(a, b, method="exact", alternative="greater").pvalue == pytest.approx(
            1 - (cdf[statistic - 1] if statistic else 0.0))


def test_the_shift_interval_holds_the_estimate_and_states_its_exact_coverage():
    shift = shift_interval([0.0, 0.01, 0.02, 0.03, 0.04], [0.2, 0.21, 0.22, 0.23, 0.24], 0.95)
    assert shift.value == pytest.approx(0.2) and shift.low == pytest.approx(0.17) and shift.high == pytest.approx(0.23)
    assert shift.coverage == pytest.approx(1 - 2 * 4 / 252)  # the 3rd smallest and largest of 25 differences
    assert shift_interval([0.0, 0.01, 0.02, 0.03, 0.04], [0.2, 0.21, 0.22, 0.23, 0.24], 0.99).coverage == (
        pytest.approx(1 - 2 / 252))  # five trials a run reach 99% only with the whole range of differences
    few = shift_interval([0.0, 0.1], [0.5, 0.6], 0.95)  # too few trials for 95%: the whole range, and its coverage
    assert (few.low, few.high, few.coverage) == (pytest.approx(0.4), pytest.approx(0.6), pytest.approx(1 - 2 / 6))


def test_one_stray_trial_in_seven_moves_the_change_little_and_gives_no_false_verdict():
    steady = compared(KEY, info(spread(1.0)), info(spread(1.0)))
    stray = compared(KEY, info(spread(1.0)[:6] + [1.8]), info(spread(1.0)))
    assert steady.verdict == "unchanged" and abs(math.log(stray.change.value)) < 0.03
    # Its seven differences with the other run's trials are the smallest of 49: the 99% interval's end (the 5th)
    # lies among them, so the verdict is CAN'T TELL, never FASTER; the 95% interval's (the 9th) lies past them.
    assert stray.verdict == "can't tell" and stray.change.high < 1 + DEFAULT_THRESHOLD
    logs = [[math.log(ratio) for ratio in trials] for trials in (spread(1.0)[:6] + [1.8], spread(1.0))]
    assert shift_interval(*logs, 0.95).low > math.log(0.9)


@pytest.mark.parametrize("factor, verdict", [(1.5, "slower"), (1 / 1.5, "faster"), (1.02, "unchanged")])
def test_a_clear_change_of_more_than_the_threshold_is_named_and_a_small_one_is_unchanged(factor, verdict):
    result = compared(KEY, info(spread(1.0, 0.01)), info(spread(factor, 0.01)))
    assert result.verdict == verdict and result.change.value == pytest.approx(factor)
    assert result.then == pytest.approx(1.0) and result.now == pytest.approx(factor)


def test_slower_needs_the_whole_interval_beyond_the_threshold():
    result = compared(KEY, info(spread(1.0, 0.005)), info(spread(1.07, 0.005)))
    assert result.change.low > 1 and result.verdict == "unchanged"
    assert 1.04 < result.change.low < 1.05 < result.change.value
    assert compared(KEY, info(spread(1.0, 0.005)), info(spread(1.07, 0.005)), threshold=0.05).verdict == "can't tell"
    assert compared(KEY, info(spread(1.0, 0.005)), info(spread(1.07, 0.005)), threshold=0.04).verdict == "slower"


def test_noisy_runs_cannot_tell_and_say_what_slowdown_they_could_have_called():
    then, now = spread(1.0, 0.3), spread(1.3, 0.3)
    result = compared(KEY, info(then), info(now))
    assert result.verdict == "can't tell" and result.detectable > 1 + DEFAULT_THRESHOLD
    # Slowed by exactly that much more, the same trials are called SLOWER; a little less, they are not.
    extra = result.detectable / 1.3
    assert compared(KEY, info(then), info([ratio * extra * 1.01 for ratio in now])).verdict == "slower"
    assert compared(KEY, info(then), info([ratio * extra * 0.99 for ratio in now])).verdict == "can't tell"


def test_the_timing_reference_and_untimed_benchmarks_are_not_judged():
    assert compared(Key("numpy_loop", "cpu", 1000), info(spread(1.0)), info(spread(1.0))) is None
    assert compared(KEY, {"solver": "tf1_while_loop"}, info(spread(1.0))) is None


FSSGD = {"cpu_model": "AMD EPYC", "tensorflow": {"distribution": "tensorflow-cpu", "version": "2.21.0"},
         "threads_setting": "TF default", "onednn_setting": "TF default", "profile": "quick"}


def test_a_different_cpu_tensorflow_or_thread_setting_is_said_first_in_one_line():
    assert environment_line(FSSGD, dict(FSSGD)) is None
    other = {**FSSGD, "cpu_model": "Intel Xeon", "threads_setting": "pinned to 1"}
    assert environment_line(FSSGD, other) == ("Not like with like: CPU AMD EPYC then, Intel Xeon now; threads TF "
                                              "default then, pinned to 1 now.")


def document(benchmarks, fssgd=FSSGD):
    return {"machine_info": {"fssgd": fssgd}, "benchmarks": benchmarks}


def bench(name, extra):
    return {"name": name, "fullname": f"perf/test_fssgd.py::{name}", "extra_info": extra}


def test_the_terminal_lines_name_each_verdict_and_the_slower_ones_come_back():
    then = document([bench("test_fssgd[tf1_while_loop-cpu-n1000]", info(spread(1.0))),
                     bench("test_fssgd[numpy_lean-cpu-n1000]", {**info(spread(0.4)), "solver": "numpy_lean"})])
    now = [bench("test_fssgd[tf1_while_loop-cpu-n1000]", info(spread(1.5))),
           bench("test_fssgd[numpy_lean-cpu-n1000]", {**info(spread(0.4)), "solver": "numpy_lean"}),
           bench("test_fssgd[tf2_eager-cpu-n1000]", {**info(spread(100)), "solver": "tf2_eager"})]  # new: not judged
    lines, slower = comparison_lines(then, "0001_run.json", FSSGD, now, 0.10)
    assert lines[0].startswith("Against 0001_run.json: per benchmark, × numpy_loop then and now")
    assert any(line.startswith("test_fssgd[tf1_while_loop-cpu-n1000]") and line.endswith("SLOWER") for line in lines)
    assert any(line.startswith("test_fssgd[numpy_lean-cpu-n1000]") and line.endswith("UNCHANGED") for line in lines)
    assert lines[-1] == "1 SLOWER, 1 UNCHANGED" and [result.key.solver for result in slower] == ["tf1_while_loop"]


def test_a_run_saved_before_trials_had_processes_of_their_own_is_compared_with_a_line_saying_so():
    then = document([bench("test_fssgd[tf1_while_loop-cpu-n1000]", info(spread(1.0), processes=False))])
    now = [bench("test_fssgd[tf1_while_loop-cpu-n1000]", info(spread(1.0)))]
    lines, _ = comparison_lines(then, "old.json", FSSGD, now, 0.10)
    assert any(line.startswith("The saved run's trials shared one process") for line in lines)
    assert lines[-1] == "1 UNCHANGED"


# The comparison as pytest prints it, end to end ------------------------------------------------------------------

TWO_SOLVERS = ("--solvers", "numpy_loop,numpy_lean", "--devices", "cpu")


def test_a_slowed_benchmark_fails_fail_on_slower_naming_it_and_the_other_passes(run_perf, monkeypatch):
    # At n = 1,000 only: at 1e5 a round is short enough that, beside the other tests, one trial can stray by
    # several times and leave the 99% interval too wide for any verdict.
    saved = run_perf(*TWO_SOLVERS, "-k", "not n100000", "--benchmark-autosave")
    saved.assert_outcomes(passed=2)
    monkeypatch.setenv("FSSGD_SLOWDOWN", "numpy_lean=3")  # far beyond any noise: this checks the wiring
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", "--benchmark-compare", "--fail-on-slower=10%")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines([
        "*fssgd-bench: compared with a saved run*",
        "Against *0001_*.json: per benchmark, × numpy_loop then and now*",
        "Not like with like: FSSGD_SLOWDOWN unset then, numpy_lean=3 now.",
        "test_fssgd[[]numpy_lean-cpu-n1000[]] * SLOWER",
        "fssgd-bench: FAILED --fail-on-slower=10%: slower by more than that: numpy_lean-cpu-n1000 (*x)",
    ])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_pytest_benchmarks_own_compare_fail_ends_in_a_message_not_a_traceback(run_perf, monkeypatch):
    run_perf(*TWO_SOLVERS, "-k", "not n100000", "--benchmark-autosave").assert_outcomes(passed=2)
    monkeypatch.setenv("FSSGD_SLOWDOWN", "numpy_lean=3")  # its median far past +50%: pytest-benchmark's check fails
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", "--benchmark-compare", "--benchmark-compare-fail=median:50%")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*fssgd-bench: FAILED --benchmark-compare-fail: pytest-benchmark found the absolute "
                                 "times above regressed*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "PerformanceRegression" not in result.stdout.str() + result.stderr.str()


def test_a_committed_run_from_another_machine_in_storage_outside_the_directory_is_compared(run_perf, tmp_path_factory):
    # docs/results/full/full.json: a full run of 2026-12-01 on the Xeon instance, its trials in one process. Stored
    # outside the working directory, where pytest-benchmark's own warning about another machine raises (#217).
    storage = tmp_path_factory.mktemp("elsewhere")
    (storage / get_machine_id()).mkdir()
    shutil.copy(ROOT / "docs" / "results" / "full" / "full.json", storage / get_machine_id() / "0001_old.json")
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", f"--benchmark-storage=file://{storage}",
                      "--benchmark-compare=0001", "--fail-on-slower=10%")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines([
        "Against *0001_old.json: per benchmark, × numpy_loop then and now*",
        "Not like with like: CPU Intel(R) Xeon(R) Processor then, * now; profile full then, quick now.",
        "The saved run's trials shared one process*",
        "test_fssgd[[]numpy_lean-cpu-n1000[]] *",
    ])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_fail_on_slower_without_a_saved_run_to_compare_with_is_a_usage_error(run_perf):
    result = run_perf(*TWO_SOLVERS, "--fail-on-slower=10%", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fail-on-slower needs --benchmark-compare*"])


def test_a_percentage_that_is_not_one_is_a_usage_error(run_perf):
    result = run_perf(*TWO_SOLVERS, "--benchmark-compare", "--fail-on-slower=fast", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fail-on-slower: expected a percentage above 0, e.g. 10%, got 'fast'*"])
