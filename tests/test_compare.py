"""Two runs compared by their trials' paired ratios (the rule: tests/test_rules.py): each benchmark's verdict and what
the terminal says first."""

import json
import os
import subprocess
import sys
from functools import partial
from types import SimpleNamespace

import pytest
from helpers import FSSGD, benchmark_entry, bench, document, info, result_document, spread, write_run
from helpers import COMPARED_KEY as KEY
from pytest_benchmark.utils import get_machine_id

from perf.gate.versions import has_commit
from perf.judge.outcome import NOT_MEASURED, NotMeasured
from perf.measure import Key
from perf.measure.environment import describe
from perf.measure.worker import ROOT
from perf import storage
from perf.report.__main__ import main as report_main
from perf.gate.decide import gate_line
from perf.report.compare import ENVIRONMENT, comparison, compared, differences, environment_line


def test_a_benchmark_is_compared_by_the_medians_of_its_trial_ratios_and_the_rules_verdict():
    result = compared(KEY, spread(1.0, 0.01), spread(1.5, 0.01))
    assert result.key == KEY and result.verdict == "slower" and result.change.value == pytest.approx(1.5)
    assert result.then == pytest.approx(1.0) and result.now == pytest.approx(1.5)


def test_the_timing_reference_and_untimed_benchmarks_are_not_judged():
    assert compared(Key("numpy_loop", "cpu", 1000), spread(1.0), spread(1.0)) is None
    assert compared(KEY, [], spread(1.0)) is None
    assert compared(KEY, spread(1.0)[:1], spread(1.0)) is None


@pytest.mark.tensorflow
def test_the_environment_a_run_records_is_the_same_before_tensorflow_is_imported_and_after():
    # pytest-benchmark compares machine_info as a run starts, before any benchmark imported TensorFlow in the pytest
    # process, with the saved run's, recorded as that run ended: a difference warns on every comparison. In a process
    # of its own, as this test process may have imported TensorFlow already.
    check = ("from perf.measure import environment; from solvers import tensorflow_support; "
             "before = environment.describe('quick'); tensorflow_support.import_tensorflow(); "
             "assert environment.describe('quick') == before, before")
    result = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]


def test_a_different_cpu_numpy_gpu_or_thread_setting_is_said_first_in_one_line():
    assert environment_line(FSSGD, dict(FSSGD)) is None
    other = {**FSSGD, "cpu_model": "Intel Xeon", "threads_setting": "pinned to 1", "numpy": "2.3.0",
             "nvidia_gpus": ["NVIDIA H200, 570.86"]}
    assert environment_line(FSSGD, other) == ("Not like with like: CPU AMD EPYC then, Intel Xeon now; NumPy 2.4.6 "
                                              "then, 2.3.0 now; GPU none then, NVIDIA H200, 570.86 now; threads TF "
                                              "default then, pinned to 1 now.")


def test_the_terminal_lines_name_each_verdict_and_the_slower_ones_come_back():
    then = document([bench("test_fssgd[tf1_while_loop-cpu-n1000]", info(spread(1.0))),
                     bench("test_fssgd[numpy_lean-cpu-n1000]", {**info(spread(0.4)), "solver": "numpy_lean"})])
    now = [bench("test_fssgd[tf1_while_loop-cpu-n1000]", info(spread(1.5))),
           bench("test_fssgd[numpy_lean-cpu-n1000]", {**info(spread(0.4)), "solver": "numpy_lean"}),
           bench("test_fssgd[tf2_eager-cpu-n1000]", {**info(spread(100)), "solver": "tf2_eager"})]  # new: not judged
    found = comparison(then, "0001_run.json", FSSGD, now, 0.10)
    lines, slower = found.lines, found.slower
    assert found.not_measured is None and lines[0].startswith("Against 0001_run.json: per benchmark, × numpy_loop then and now")
    assert any(line.startswith("test_fssgd[tf1_while_loop-cpu-n1000]") and line.endswith("SLOWER") for line in lines)
    assert any(line.startswith("test_fssgd[numpy_lean-cpu-n1000]") and line.endswith("UNCHANGED") for line in lines)
    assert lines[-1] == "1 SLOWER, 1 UNCHANGED" and [result.key.solver for result in slower] == ["tf1_while_loop"]
    assert FREE_LINE in lines  # both runs ran free


FREE_LINE = ("Both runs ran free: trials on one CPU scatter less, so runs saved with --cpu-affinity 1 could call smaller "
             "slowdowns (docs/usage.md, Comparing saved runs).")


def test_runs_on_one_cpu_are_compared_without_the_line_that_free_runs_get():
    pinned = {**FSSGD, "cpu_affinity": "CPUs 1"}
    then = document([bench("test_fssgd[tf1_while_loop-cpu-n1000]", info(spread(1.0)))], pinned)
    found = comparison(then, "0001_run.json", pinned, [bench("test_fssgd[tf1_while_loop-cpu-n1000]",
                                                             info(spread(1.0)))], 0.10)
    assert found.not_measured is None and FREE_LINE not in found.lines and found.lines[-1] == "1 UNCHANGED"


WHILE_LOOP = "test_fssgd[tf1_while_loop-cpu-n1000]"


def test_runs_not_like_with_like_are_not_measured_their_verdicts_printed_but_not_counted():
    then = document([bench(WHILE_LOOP, info(spread(1.0)))])
    found = comparison(then, "0001_run.json", {**FSSGD, "numpy": "2.3.0"}, [bench(WHILE_LOOP, info(spread(1.5)))], 0.10)
    assert [result.key.solver for result in found.slower] == ["tf1_while_loop"]  # printed as SLOWER ...
    assert found.not_measured == "not like with like (NumPy 2.4.6 then, 2.3.0 now): its verdicts do not count"


def test_a_run_saved_before_each_framework_had_its_own_worker_process_is_not_like_with_like():
    then = document([bench(WHILE_LOOP, info(spread(1.0)))])  # it recorded no worker_processes
    described = describe("quick")
    now = {**FSSGD, **{key: described[key] for key in ("worker_processes", "malloc_settings")}}
    found = comparison(then, "0001_run.json", now, [bench(WHILE_LOOP, info(spread(1.0)))], 0.10)
    assert found.not_measured == ("not like with like (worker processes every selected framework in each then, one "
                                  "framework each now; malloc glibc's defaults then, MALLOC_MMAP_THRESHOLD_=33554432, "
                                  "MALLOC_TRIM_THRESHOLD_=67108864 now): its verdicts do not count")


def test_the_slowdown_tooling_stands_in_for_a_code_change_said_but_judged():
    then = document([bench(WHILE_LOOP, info(spread(1.0)))])
    found = comparison(then, "0001_run.json", {**FSSGD, "slowdown": "tf1_while_loop=1.5"},
                       [bench(WHILE_LOOP, info(spread(1.5)))], 0.10)
    assert found.not_measured is None and len(found.slower) == 1
    assert "SLOWED on purpose: FSSGD_SLOWDOWN unset then, tf1_while_loop=1.5 now." in found.lines


def test_runs_with_no_benchmark_to_judge_in_common_are_not_measured():
    then = document([bench(WHILE_LOOP, info(spread(1.0)))])
    reference = bench("test_fssgd[numpy_loop-cpu-n1000]", {**info(spread(1.0)), "solver": "numpy_loop"})
    found = comparison(then, "0001_run.json", FSSGD, [reference], 0.10)
    assert found.not_measured == ("no benchmark of this run has trials in both runs to judge (1 timed now, 1 in "
                                  "0001_run.json; numpy_loop, the timing reference, is not judged)")


def test_a_device_named_by_devices_with_nothing_judged_is_not_measured_unless_allowed():
    then = document([bench(WHILE_LOOP, info(spread(1.0)))])
    now = [bench(WHILE_LOOP, info(spread(1.0)))]
    assert comparison(then, "0001_run.json", FSSGD, now, 0.10, ["cpu"]).not_measured is None
    found = comparison(then, "0001_run.json", FSSGD, now, 0.10, ["cpu", "gpu"])
    assert found.not_measured == ("nothing judged on gpu, which --devices asked for (--allow-unavailable-devices "
                                  "allows a device with nothing to compare)")
    allowed = comparison(then, "0001_run.json", FSSGD, now, 0.10, ["cpu", "gpu"], allow_unavailable=True)
    assert allowed.not_measured is None
    assert allowed.lines[-1] == "Nothing judged on gpu, which --devices asked for: allowed by --allow-unavailable-devices."


def reference_run(step_s, n=1000):
    return bench(f"test_fssgd[numpy_loop-cpu-n{n}]", {"solver": "numpy_loop", "device": "cpu", "n": n,
                                                       "iterations": 1000, "trial_medians_s": [step_s * 1000] * 5})


def test_a_reference_whose_own_time_moved_past_the_threshold_is_named_without_failing():
    then = document([bench(WHILE_LOOP, info(spread(1.0))), reference_run(10e-6), reference_run(1e-3, 100_000)])
    now = [bench(WHILE_LOOP, info(spread(1.0))), reference_run(13e-6), reference_run(1.05e-3, 100_000)]
    found = comparison(then, "0001_run.json", FSSGD, now, 0.10)
    moved = [line for line in found.lines if line.startswith("numpy_loop itself")]
    assert moved == ["numpy_loop itself 1.30x slower at n = 1,000 than in the saved run: the ratios cancel the "
                     "machine's speed, but not a change of its own (its code's, NumPy's), which moves every ratio at "
                     "that size the other way."]  # 1.05x at 1e5 is within 10%
    assert found.not_measured is None and not found.slower


def test_cant_tell_names_the_gate_of_the_saved_runs_commit_for_the_undecided_benchmarks_alone(monkeypatch):
    monkeypatch.delenv("FSSGD_SLOWDOWN", raising=False)
    then = document([bench(WHILE_LOOP, info(spread(1.0, 0.3))),
                     bench("test_fssgd[numpy_lean-cpu-n1000]", {**info(spread(0.4)), "solver": "numpy_lean"})])
    then["commit_info"] = {"id": "0123456789abcdef", "dirty": False}
    now = [bench(WHILE_LOOP, info(spread(1.3, 0.3))),
           bench("test_fssgd[numpy_lean-cpu-n1000]", {**info(spread(0.4)), "solver": "numpy_lean"})]
    found = comparison(then, "0001_run.json", FSSGD, now, 0.10, gate_line=partial(gate_line, commit_here=lambda _: True))
    assert found.lines[-1] == ("CAN'T TELL is this screen's limit, not a verdict. The gate decides them, timing the "
                               "saved run's commit beside the working tree (--decide runs it): python -m perf.gate "
                               "0123456789abcdef --benchmarks tf1_while_loop-cpu-n1000 --threshold 10% --threads 0 "
                               "--budget 70")
    assert found.not_measured is None


@pytest.mark.parametrize("commit, here, said", [
    ({}, True, "The saved run records no commit, so no gate can time its code beside this one."),
    ({"id": "unversioned", "dirty": False}, True, "The saved run records no commit, so no gate can time its code "
                                                   "beside this one."),
    ({"id": "0123456789abcdef", "dirty": True}, True, "The saved run was made from 0123456789 with uncommitted "
                                                      "changes, so no gate can time its code beside this one."),
    ({"id": "0123456789abcdef", "dirty": False}, False, "The saved run's commit 0123456789 is not in this "
                                                        "repository, so no gate can time it here."),
])
def test_where_no_gate_can_rebuild_the_saved_run_the_line_says_why(commit, here, said):
    then = {**document([], {**FSSGD, "profile": "full"}), "commit_info": commit}
    undecided = compared(KEY, spread(1.0, 0.3), spread(1.3, 0.3))
    assert gate_line(then, [undecided], 0.10, commit_here=lambda _: here) == said


def test_the_gate_line_names_exactly_the_undecided_benchmarks_and_the_comparisons_threshold(monkeypatch):
    monkeypatch.delenv("FSSGD_SLOWDOWN", raising=False)
    then = {**document([], {**FSSGD, "profile": "full"}), "commit_info": {"id": "0123456789abcdef", "dirty": False}}
    undecided = [compared(Key("tf1_callable", "gpu", 10_000), spread(1.0, 0.3), spread(1.3, 0.3)),
                 compared(KEY, spread(1.0, 0.3), spread(1.3, 0.3))]
    assert gate_line(then, undecided, 0.05, commit_here=lambda _: True).endswith(
        "python -m perf.gate 0123456789abcdef --benchmarks tf1_callable-gpu-n10000,tf1_while_loop-cpu-n1000 "
        "--threshold 5% --threads 0 --budget 80")
    # The threshold as the comparison used it, as --decide's gate gets it: 12.5%, not rounded to 12%.
    assert gate_line(then, undecided[:1], 0.125, commit_here=lambda _: True).endswith(
        "--benchmarks tf1_callable-gpu-n10000 --threshold 12.5% --threads 0 --budget 70")
    assert "--threshold 10%" in gate_line(then, undecided, 0.10, commit_here=lambda _: True)


def test_this_repositorys_own_commits_can_be_gated_and_a_made_up_one_cannot():
    assert has_commit("HEAD") and not has_commit("0" * 40)


# Which saved run --benchmark-compare takes when none is named ---------------------------------------------------

PINNED = {**FSSGD, "cpu_affinity": "CPUs 0"}


def shared_storage(tmp_path, runs: dict) -> SimpleNamespace:
    """pytest-benchmark's options for --benchmark-compare with no run named, on a --benchmark-storage holding these runs
    ({name: machine_info.fssgd, or text for a file that is not a run}), numbered in the order given."""
    folder = tmp_path / "runs" / get_machine_id()
    folder.mkdir(parents=True)
    for name, fssgd in runs.items():
        (folder / name).write_text(fssgd if isinstance(fssgd, str) else json.dumps(document([], fssgd)))
    return SimpleNamespace(benchmark_storage=f"file://{tmp_path / 'runs'}", benchmark_save=None,
                           benchmark_autosave=False, benchmark_json=None, benchmark_compare=True)


def like(now):
    return lambda fssgd: not differences(fssgd, now, ENVIRONMENT)


def test_with_no_run_named_the_newest_saved_run_like_this_one_is_compared_not_the_newest_of_any_kind(tmp_path):
    # The README's one-CPU flow in one --benchmark-storage: a pinned run, then a free one, then a pinned run compared.
    option = shared_storage(tmp_path, {"0001_pinned.json": PINNED, "0002_free.json": FSSGD})
    assert storage.check_storage(option, like(PINNED)) == []
    assert os.path.basename(option.benchmark_compare) == "0001_pinned.json"
    option = shared_storage(tmp_path / "again", {"0001_pinned.json": PINNED, "0002_free.json": FSSGD})
    storage.check_storage(option, like(FSSGD))
    assert os.path.basename(option.benchmark_compare) == "0002_free.json"


def test_with_no_saved_run_like_this_one_the_newest_is_compared_and_its_comparison_says_what_differs(tmp_path):
    option = shared_storage(tmp_path, {"0001_free.json": FSSGD, "0002_other_numpy.json": {**FSSGD, "numpy": "1.26.4"}})
    storage.check_storage(option, like(PINNED))
    assert os.path.basename(option.benchmark_compare) == "0002_other_numpy.json"


def test_a_broken_run_newer_than_the_like_one_might_be_the_one_meant_and_an_older_one_is_left_out(tmp_path):
    option = shared_storage(tmp_path, {"0001_old.json": "{", "0002_pinned.json": PINNED, "0003_killed.json": "{\"ma"})
    with pytest.raises(NotMeasured, match="cannot be read, so nothing was run.*0003_killed.json: not valid"):
        storage.check_storage(option, like(PINNED))
    option = shared_storage(tmp_path / "again", {"0001_old.json": "{", "0002_pinned.json": PINNED,
                                                 "0003_free.json": FSSGD})
    [warning] = storage.check_storage(option, like(PINNED))
    assert "0001_old.json cannot be read (not valid JSON" in warning and "only 0002_pinned.json is compared" in warning


# The comparison as pytest prints it, end to end ------------------------------------------------------------------

TWO_SOLVERS = ("--solvers", "numpy_loop,numpy_lean", "--devices", "cpu")


def test_a_slowed_benchmark_fails_fail_on_slower_naming_it_and_an_identical_run_passes_unwarned(run_perf, monkeypatch,
                                                                                                 pytester):
    # At n = 1,000 only: at 1e5 a round is short enough that, beside the other tests, one trial can stray by
    # several times and leave the 99% interval too wide for any verdict.
    saved = run_perf(*TWO_SOLVERS, "-k", "not n100000", "--benchmark-autosave")
    saved.assert_outcomes(passed=2)
    [path] = pytester.path.glob(".benchmarks/*/*/0001_*.json")
    run = json.loads(path.read_text())
    # The order's seed, new every run, is kept with the benchmarks: in machine_info it made pytest-benchmark warn on
    # every comparison that the machine had changed.
    assert "order_seed" not in run["machine_info"]["fssgd"]
    assert len({bench["extra_info"]["order_seed"] for bench in run["benchmarks"]}) == 1
    (path.parent / "0000_killed.json").write_text(path.read_text()[:40])  # an older run, broken: not the one compared
    same = run_perf(*TWO_SOLVERS, "-k", "not n100000", "--benchmark-compare")
    assert same.ret == pytest.ExitCode.OK, same.stdout.str()[-3000:]
    output = same.stdout.str() + same.stderr.str()
    assert "machine_info is different" not in output and "Not like with like" not in output
    same.stdout.fnmatch_lines([f"*0000_killed.json cannot be read (not valid JSON, truncated? (*)): left out; only "
                               f"{path.name} is compared", "Against *0001_*.json*"])
    monkeypatch.setenv("FSSGD_SLOWDOWN", "numpy_lean=3")  # far beyond any noise: this checks the wiring
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", "--benchmark-compare", "--fail-on-slower=10%")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines([
        "*fssgd-bench: compared with a saved run*",
        "Against *0001_*.json: per benchmark, × numpy_loop then and now*",
        "SLOWED on purpose: FSSGD_SLOWDOWN unset then, numpy_lean=3 now.",
        "test_fssgd[[]numpy_lean-cpu-n1000[]] * SLOWER",
        "fssgd-bench: FAILED --fail-on-slower=10%: slower by more than that: numpy_lean-cpu-n1000 (*x)",
    ])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_the_readmes_one_cpu_flow_compares_with_the_pinned_run_and_the_report_finds_it(run_perf, pytester, monkeypatch,
                                                                                       capsys):
    monkeypatch.setenv("FSSGD_SHRINK", "1000")  # the flow, not its figures
    cpu = str(min(os.sched_getaffinity(0)))
    shared = f"--benchmark-storage=file://{pytester.path / 'shared'}"
    for affinity in (("--cpu-affinity", cpu), ()):  # a pinned run saved, then a free one, in one storage
        run_perf(*TWO_SOLVERS, "-k", "not n100000", *affinity, shared, "--benchmark-autosave").assert_outcomes(passed=2)
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", "--cpu-affinity", cpu, shared, "--benchmark-compare")
    assert result.ret != NOT_MEASURED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["Against *0001_*.json: per benchmark, × numpy_loop then and now*"])
    assert "Not like with like" not in result.stdout.str()
    # Saved where the README saves it, python -m perf.report with no folder reports it.
    run_perf(*TWO_SOLVERS, "-k", "not n100000", "--cpu-affinity", cpu, "--benchmark-autosave").assert_outcomes(passed=2)
    monkeypatch.chdir(pytester.path)
    assert report_main(["--no-plots"]) == 0
    [report] = (pytester.path / "reports").glob("*/report.md")
    assert report.parent.name.endswith(f"-cpus{cpu}") and "0001_" in report.read_text()


def test_pytest_benchmarks_own_compare_fail_ends_in_a_message_not_a_traceback(run_perf, monkeypatch):
    run_perf(*TWO_SOLVERS, "-k", "not n100000", "--benchmark-autosave").assert_outcomes(passed=2)
    # Its median far past +50% whatever load the saved run met (3x once fell short beside the other xdist process).
    monkeypatch.setenv("FSSGD_SLOWDOWN", "numpy_lean=10")
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", "--benchmark-compare", "--benchmark-compare-fail=median:50%")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*fssgd-bench: FAILED --benchmark-compare-fail: pytest-benchmark found the absolute "
                                 "times above regressed*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "PerformanceRegression" not in result.stdout.str() + result.stderr.str()


def test_the_summary_states_the_exit_status_pytest_returns_after_the_comparison(run_perf, pytester, monkeypatch,
                                                                                  tmp_path):
    # The comparison itself passes (no --fail-on-slower); a failed test and pytest-benchmark's own
    # --benchmark-compare-fail each end the run 1 after it, which the summary must say, not the comparison's 0.
    monkeypatch.setenv("FSSGD_SHRINK", "1000")  # the wiring, not the figures
    run_perf(*TWO_SOLVERS, "-k", "not n100000", "--benchmark-autosave").assert_outcomes(passed=2)
    monkeypatch.setenv("FSSGD_SLOWDOWN", "numpy_lean=10")
    failing = pytester.makepyfile(test_failing="def test_fails():\n    assert False\n")
    summary = tmp_path / "summary.md"
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", str(failing), "--benchmark-compare",
                      "--benchmark-compare-fail=median:50%", "--summary", str(summary))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    first = summary.read_text().splitlines()[0]
    assert first.startswith("**--benchmark-compare FAILED**: 1 test failed; --benchmark-compare-fail: pytest-benchmark "
                            "found the absolute times above regressed"), first
    assert first.endswith("(exit 1: slower past --fail-on-slower, an error the gate found under --decide, a failed test "
                          "or pytest-benchmark's --benchmark-compare-fail)")


def test_a_committed_run_from_another_machine_in_storage_outside_the_directory_is_compared_and_not_measured(
        run_perf, tmp_path_factory):
    # docs/results/full/full.json: the committed full run. Stored outside the working
    # directory, where pytest-benchmark's own warning about another machine raises (#217). Its CPU is renamed to one
    # no machine has: the run was made on an instance of the kind CI runs on, and may share its CPU model.
    storage = tmp_path_factory.mktemp("elsewhere")
    (storage / get_machine_id()).mkdir()
    saved = json.loads((ROOT / "docs" / "results" / "full" / "full.json").read_text())
    saved["machine_info"]["fssgd"]["cpu_model"] = "Another CPU"
    (storage / get_machine_id() / "0001_old.json").write_text(json.dumps(saved))
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", f"--benchmark-storage=file://{storage}",
                      "--benchmark-compare=0001", "--fail-on-slower=10%")
    # Another CPU moves every ratio: its verdicts are printed, and do not count either way.
    assert result.ret == NOT_MEASURED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines([
        "Against *0001_old.json: per benchmark, × numpy_loop then and now*",
        "Not like with like: CPU Another CPU then, * now; profile full then, quick now.",
        "test_fssgd[[]numpy_lean-cpu-n1000[]] *",
        "fssgd-bench: NOT MEASURED: not like with like (CPU Another CPU then, * now; profile full then, "
        "quick now): its verdicts do not count",
    ])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_a_saved_run_with_no_benchmark_in_common_is_not_measured(run_perf, tmp_path):
    storage = tmp_path / "runs"
    (storage / get_machine_id()).mkdir(parents=True)
    other = result_document([benchmark_entry("tf1_callable", "cpu", 1000, 20.0, ratio=2.0)], profile="quick")
    write_run(storage / get_machine_id() / "0001_other.json", other)
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", f"--benchmark-storage=file://{storage}",
                      "--benchmark-compare", "--fail-on-slower=10%")
    assert result.ret == NOT_MEASURED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["fssgd-bench: NOT MEASURED: no benchmark of this run has trials in both runs to judge "
                                 "(2 timed now, 1 in */0001_other.json; numpy_loop, the timing reference, is not "
                                 "judged)"])


def test_a_saved_run_pytest_benchmark_itself_cannot_load_is_not_measured(run_perf, tmp_path):
    storage = tmp_path / "runs"
    (storage / get_machine_id()).mkdir(parents=True)
    entry = benchmark_entry("numpy_lean", "cpu", 1000, 6.0, ratio=0.4)
    del entry["stats"]["mean"]  # readable JSON of the right shape, which pytest-benchmark's loader drops with a warning
    write_run(storage / get_machine_id() / "0001_odd.json", result_document([entry], profile="quick"))
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", f"--benchmark-storage=file://{storage}", "--benchmark-compare")
    assert result.ret == NOT_MEASURED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["fssgd-bench: NOT MEASURED: --benchmark-compare: pytest-benchmark loaded no saved run "
                                 "to compare with"])


def test_fail_on_slower_without_a_saved_run_to_compare_with_is_a_usage_error(run_perf):
    result = run_perf(*TWO_SOLVERS, "--fail-on-slower=10%", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fail-on-slower needs --benchmark-compare*"])


def test_decide_without_a_saved_run_to_compare_with_is_a_usage_error(run_perf):
    result = run_perf(*TWO_SOLVERS, "--decide", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--decide needs --benchmark-compare: the gate decides the rows a comparison with a "
                                 "saved run could not tell*"])


def test_a_percentage_that_is_not_one_is_a_usage_error(run_perf):
    result = run_perf(*TWO_SOLVERS, "--benchmark-compare", "--fail-on-slower=fast", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fail-on-slower: expected a percentage above 0 with its sign, e.g. 10%, got 'fast'*"])


def test_a_threshold_without_its_sign_is_a_usage_error_as_in_the_gate(run_perf):
    result = run_perf(*TWO_SOLVERS, "--benchmark-compare", "--fail-on-slower=0.1", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fail-on-slower: expected a percentage above 0 with its sign, e.g. 10%, got '0.1'*"])


def test_summary_and_github_step_summary_get_the_comparisons_markdown(run_perf, tmp_path_factory, monkeypatch):
    # The committed full run from "another CPU", as above: a table of verdicts that do not count, NOT MEASURED.
    monkeypatch.setenv("FSSGD_SHRINK", "1000")  # the wiring, not the figures
    storage, pages = tmp_path_factory.mktemp("elsewhere"), tmp_path_factory.mktemp("pages")
    (storage / get_machine_id()).mkdir()
    saved = json.loads((ROOT / "docs" / "results" / "full" / "full.json").read_text())
    saved["machine_info"]["fssgd"]["cpu_model"] = "Another CPU"
    (storage / get_machine_id() / "0001_old.json").write_text(json.dumps(saved))
    page, summary = pages / "step_summary.md", pages / "summary.md"
    page.write_text("an earlier step's summary\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(page))
    result = run_perf(*TWO_SOLVERS, "-k", "not n100000", f"--benchmark-storage=file://{storage}",
                      "--benchmark-compare=0001", "--summary", str(summary))
    assert result.ret == NOT_MEASURED, result.stdout.str()[-3000:]
    written = summary.read_text()
    assert page.read_text() == "an earlier step's summary\n" + written  # appended, not overwritten
    lines = written.rstrip("\n").splitlines()  # a blank line last, apart from a later step's summary
    assert lines[0].startswith("**--benchmark-compare NOT MEASURED**: not like with like (CPU Another CPU then, ")
    assert lines[0].endswith("(exit 10: it could not judge what it was asked, which is never a pass)")
    assert lines[2].startswith("Against ") and "0001_old.json: per benchmark, × numpy_loop then and now" in lines[2]
    table = lines.index("| benchmark | then | now | change (interval) | verdict |")
    assert lines[table + 2].startswith("| `numpy_lean-cpu-n1000` | ")
    answer = lines.index("```text")
    assert lines[answer + 1].startswith("Per step, profile quick, ") and lines[-1] == "</details>"


def test_a_summary_that_cannot_be_written_or_without_a_comparison_is_a_usage_error(run_perf, tmp_path):
    target = tmp_path / "no-such-folder" / "summary.md"
    result = run_perf(*TWO_SOLVERS, "--benchmark-compare", "--summary", str(target), "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*cannot write the summary to {target}: No such file or directory*"])
    result = run_perf(*TWO_SOLVERS, "--summary", str(tmp_path / "summary.md"), "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--summary needs --benchmark-compare*"])
    assert "Traceback" not in result.stderr.str()


def test_a_comparison_with_no_saved_run_still_writes_its_summary_saying_so(run_perf, tmp_path):
    summary = tmp_path / "summary.md"
    result = run_perf(*TWO_SOLVERS, f"--benchmark-storage=file://{tmp_path / 'empty'}", "--benchmark-compare",
                      "--summary", str(summary), "--collect-only")
    assert result.ret == NOT_MEASURED, result.stdout.str()[-3000:]
    first = summary.read_text().splitlines()[0]
    assert first.startswith("**--benchmark-compare NOT MEASURED**: ") and first.endswith(
        "(exit 10: it could not judge what it was asked, which is never a pass)")
    assert first.removeprefix("**--benchmark-compare NOT MEASURED**: ").split(" (exit 10")[0] in result.stderr.str()
