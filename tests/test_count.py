"""The counted measure: callgrind's dumps read, the step arithmetic, what refuses to count, and real counted workers."""

import json
import os
import signal
import statistics
import subprocess
import sys
from contextlib import contextmanager

import pytest

from perf.judge import words
from perf.measure import count, counting
from perf.measure.worker import ROOT, Version, Worker
from perf.report.tables import number
from perf.research import counted_spread

COUNTABLE = pytest.mark.skipif(bool(count.unavailable_reason()), reason=f"{count.unavailable_reason()}")
THIS_TREE = Version("suite", "this tree", ROOT, sys.executable)


def dump(path, totals: str = "totals: 1234"):
    path.write_text(f"# callgrind format\nversion: 1\nevents: Ir\nsummary: 7\n\nfn=(1) f\n0 1234\n{totals}\n")
    return path


def test_a_dump_is_read_by_its_totals_which_hold_every_threads_instructions(tmp_path):
    assert count.dumped_total(dump(tmp_path / "callgrind.1")) == 1234


@pytest.mark.parametrize("written, said", [(None, "callgrind wrote no dump"), ("", "not a callgrind dump")])
def test_a_missing_or_unreadable_dump_is_not_countable(tmp_path, written, said):
    path = tmp_path / "callgrind.1"
    if written is not None:
        dump(path, totals=written)
    with pytest.raises(count.NotCountable, match=said):
        count.dumped_total(path)


def test_instructions_a_step_leave_out_what_a_run_costs_once():
    # 5,000 a run, 300 a step: 200 steps 65,000, 400 steps 125,000.
    assert count.instructions_a_step([[200, 65_000], [400, 125_000]]) == 300


@pytest.mark.parametrize("probe, steps", [(10_000, (200, 400)), (250_000, (200, 400)), (1_600_000, (31, 62)),
                                       (18_000_000, (2, 4)), (10**9, (2, 4))])
def test_costlier_steps_are_counted_fewer_times_from_a_probe_of_two(probe, steps):
    assert count.steps_counted(probe) == steps


def fake_valgrind(folder, version: str):
    folder.mkdir(exist_ok=True)
    program = folder / "valgrind"
    program.write_text(f"#!/bin/sh\necho valgrind-{version}\n")
    program.chmod(0o755)
    return str(program)


def test_valgrind_missing_or_too_old_is_refused_with_why(tmp_path):
    missing = count.unavailable_reason(str(tmp_path / "no-valgrind"))
    old = count.unavailable_reason(fake_valgrind(tmp_path, "3.18.1"))
    new = count.unavailable_reason(fake_valgrind(tmp_path / "new", "3.22.0"))
    assert "not installed" in missing and "install it" in missing
    assert old == "valgrind 3.18.1 is older than 3.19, the oldest counted with here"
    assert new is None or "x86-64" in new
    with pytest.raises(count.NotCountable, match="older than 3.19"):
        count.command(tmp_path / "dumps", fake_valgrind(tmp_path, "3.18.1"))


def test_a_gpu_benchmark_is_refused_before_any_process_is_asked():
    with pytest.raises(count.NotCountable, match="only CPU benchmarks are counted"):
        count.counted_trial(None, "tf1_feed_dict", "gpu", 1000)


def test_outside_valgrind_the_client_requests_answer_nothing_and_no_counter_starts(tmp_path):
    assert not count.under_valgrind()
    with pytest.raises(count.NotCountable, match="does not run under valgrind"):
        count.Counter(str(tmp_path / "callgrind"))


@contextmanager
def numpy_worker(counted: bool):
    worker = Worker(THIS_TREE, threads=1, preload=["numpy_loop"], counted=counted)
    try:
        yield worker
    finally:
        worker.close()


@pytest.mark.e2e
def test_a_worker_that_is_not_counted_refuses_to_count():
    with numpy_worker(counted=False) as worker, pytest.raises(count.CountFailed, match="only a counted worker counts"):
        count.counted_trial(worker, "numpy_loop", "cpu", 100, steps=(2, 4))


@COUNTABLE
@pytest.mark.e2e
def test_numpy_loops_step_counts_the_same_in_two_processes_and_its_answer_is_checked():
    found = []
    for _ in range(2):
        with numpy_worker(counted=True) as worker:
            found.append(count.counted_trial(worker, "numpy_loop", "cpu", 100, steps=(5, 10)))
    assert found[0]["per_step"] == found[1]["per_step"] > 0
    assert found[0]["counts"][1][1] > found[0]["counts"][0][1]
    assert "SSE2" in found[0]["cpu_features"]


@COUNTABLE
@pytest.mark.e2e
def test_a_counted_worker_killed_mid_trial_fails_the_count_with_its_end():
    with numpy_worker(counted=True) as worker:
        worker.ask({"op": "open", "solver": "numpy_loop", "device": "cpu", "n": 100, "steps": 10, "calls": 1,
                    "warm_up": False})
        os.kill(worker.process.pid, signal.SIGKILL)
        with pytest.raises(count.CountFailed, match="stopped"):
            count.counted_trial(worker, "numpy_loop", "cpu", 100, steps=(5, 10))


@COUNTABLE
@pytest.mark.e2e
def test_the_spread_study_counts_each_benchmark_in_fresh_processes_and_writes_them(tmp_path, capsys):
    assert counted_spread.main(["--processes", "2", "--sizes", "100", "--solvers", "numpy_loop",
                                "--out", str(tmp_path)]) == 0
    assert "| numpy_loop-cpu-n100 |" in (tmp_path / "README.md").read_text()
    # Two layouts drawn (counting.LAYOUTS): the counts may differ by what a layout moves, well under a percent.
    first, second = json.loads((tmp_path / "spread.json").read_text())["per_step"]["numpy_loop-cpu-n100"]
    assert abs(first / second - 1) < 0.01


def test_the_spread_study_names_an_unknown_solver(capsys):
    assert counted_spread.main(["--solvers", "nope"]) == 2
    assert "unknown solver 'nope'" in capsys.readouterr().err


@pytest.mark.tensorflow
@pytest.mark.parametrize("counted", [True, False])
def test_a_counted_process_asks_tensorflows_pools_not_to_spin(counted):
    # In a process of its own: TensorFlow imports JAX where it can, which other tests here fake.
    env = {name: value for name, value in os.environ.items() if name not in count.COUNTED_ENVIRONMENT}
    env.update(count.COUNTED_ENVIRONMENT if counted else {})
    asked = subprocess.run([sys.executable, "-c", SPINNING], env=env, capture_output=True, text=True, cwd=ROOT)
    assert asked.stdout.split() == [str(counted)] * 2, asked.stderr


SPINNING = """
from solvers import tensorflow_support
from tensorflow.python.eager import context
print(tensorflow_support.session_config().experimental.disable_thread_spinning,
      context.context().config.experimental.disable_thread_spinning)
"""


@COUNTABLE
def test_a_counted_run_saves_each_benchmarks_counts_beside_numpy_loops_and_splits_its_time_ratio(run_perf, pytester,
                                                                                                 monkeypatch):
    monkeypatch.setenv("FSSGD_SHRINK", "100")
    result = run_perf("--solvers", "numpy_loop,numpy_lean", "--devices", "cpu", "--count", "--benchmark-json=run.json")
    result.assert_outcomes(passed=4)
    benchmarks = {bench["name"]: bench["extra_info"]
                  for bench in json.loads((pytester.path / "run.json").read_text())["benchmarks"]}
    reference, lean = (benchmarks[f"test_fssgd[{name}-cpu-n1000]"]["instructions"] for name in ("numpy_loop",
                                                                                                 "numpy_lean"))
    assert len(lean["per_step"]) == len(lean["reference_per_step"]) == counting.COUNT_PROCESSES
    # numpy_loop counted as itself and as the reference beside itself: one count, twice.
    assert reference["per_step"] == reference["reference_per_step"] == lean["reference_per_step"]
    assert lean["valgrind"] and lean["PYTHONHASHSEED"] == "0" and "SSE2" in lean["cpu_features"]
    ratio = statistics.median(own / beside for own, beside in zip(lean["per_step"], lean["reference_per_step"]))
    result.stdout.fnmatch_lines(["counted * n = 1,000 *", "solver * instructions/step * × work * × time/instruction*",
                                 f"numpy_lean * {number(ratio)} *", "numpy_loop * reference * reference*",
                                 "Counted under valgrind's callgrind*"])


@pytest.mark.parametrize("option, said", [("--benchmark-disable", "--count needs the benchmarks timed"),
                                          ("", "--count: cannot count here: valgrind is not installed")])
def test_a_run_that_cannot_count_is_a_usage_error_before_anything_is_timed(run_perf, monkeypatch, tmp_path, option,
                                                                          said):
    if not option:
        monkeypatch.setenv("PATH", str(tmp_path))  # no valgrind on it
    result = run_perf(*filter(None, [option]), "--solvers", "numpy_loop", "--devices", "cpu", "--count")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{said}*"])


def counted_entry(solver, ratio, instructions_ratio, spread=0.002):
    """A per-step benchmark with its trials and, over three counted processes, its instructions beside numpy_loop's."""
    from helpers import benchmark_entry

    entry = benchmark_entry(solver, "cpu", 1000, 100.0 * ratio, ratio=ratio, trials=7)
    reference = [122_000.0, 122_500.0, 121_800.0]
    entry["extra_info"]["instructions"] = {
        "per_step": [beside * instructions_ratio * factor
                     for beside, factor in zip(reference, (1 - spread, 1, 1 + spread))],
        "reference_per_step": reference}
    return entry


def test_two_counted_runs_are_also_judged_on_instructions_at_the_counted_threshold_each_verdict_naming_its_measure():
    from helpers import result_document

    from perf.report import compare

    then = result_document([counted_entry("tf1_feed_dict", 15.0, 6.3), counted_entry("tf1_callable", 1.7, 0.9)])
    now = [counted_entry("tf1_feed_dict", 15.0, 6.3 * 1.03), counted_entry("tf1_callable", 1.7, 0.9)]
    found = compare.comparison(then, "then.json", then["machine_info"]["fssgd"], now, 0.10)
    verdicts = {(result.key.solver, result.measure): result.verdict for result in found.results}
    # 3% more instructions: past the counted 1%, and far within time's spread of 5% a trial.
    assert verdicts[("tf1_feed_dict", compare.INSTRUCTIONS)] == words.SLOWER
    assert verdicts[("tf1_callable", compare.INSTRUCTIONS)] == words.UNCHANGED
    assert {measure for _, measure in verdicts} == {compare.TIME, compare.INSTRUCTIONS}
    assert [result.key.solver for result in found.slower] == ["tf1_feed_dict"]
    text = "\n".join(found.lines)
    assert "Both runs counted (--count)" in text and "threshold 1%" in text
    assert "In time: " in text and "In instructions: 1 SLOWER, 1 UNCHANGED" in text
    summary = compare.comparison_summary(0, [], [], [found], [])
    assert "| benchmark | measure | then | now |" in summary and "| instructions |" in summary


def test_a_run_without_counts_compares_as_before_with_no_measure_column():
    from helpers import result_document

    from perf.report import compare

    then = result_document([counted_entry("tf1_feed_dict", 15.0, 6.3)])
    del then["benchmarks"][0]["extra_info"]["instructions"]
    found = compare.comparison(then, "then.json", then["machine_info"]["fssgd"],
                               [counted_entry("tf1_feed_dict", 15.0, 6.3)], 0.10)
    assert [result.measure for result in found.results] == [compare.TIME]
    assert "measure" not in "\n".join(found.lines) and "In time" not in "\n".join(found.lines)


def test_the_answer_says_which_benchmarks_were_not_counted_and_why():
    from perf.report.summary import summary_lines

    counted, lost = counted_entry("tf1_feed_dict", 15.0, 6.3), counted_entry("tf1_callable", 1.7, 0.9)
    lost["extra_info"]["instructions"] = {"not_counted": "the worker process stopped: valgrind: unhandled instruction"}
    lines = summary_lines([counted, lost], "a setting")
    assert "Not counted: tf1_callable-cpu-n1000 (the worker process stopped: valgrind: unhandled instruction)." in lines
    assert any(line.startswith("tf1_feed_dict") and "6.30" in line for line in lines)
