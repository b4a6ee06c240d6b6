"""python -m perf.report --history: saved runs as series per environment, in commit order, with change points."""

import math
import random

import pytest
from helpers import benchmark_entry, result_document, write_run

from perf.measure import Key
from perf.report.__main__ import main
from perf.report.history import HistoryError, history, runs_in
from perf.report.tables import with_interval

pytest.importorskip("asv.step_detect", reason="the history extra (asv) is not installed")

LOOP = Key("tf1_while_loop", "cpu", 1000)


def saved_run(folder, index, ratio, cpu="Test CPU", noise=None, **fssgd):
    """Run `index` of a history: commit `index` a day after the one before, tf1_while_loop at this × numpy_loop;
    fssgd: what else its environment records."""
    noise = noise or random.Random(index)
    entries = [benchmark_entry("numpy_loop", "cpu", 1000, 10.0),
               benchmark_entry(LOOP.solver, "cpu", 1000, 10.0 * ratio, ratio=ratio * math.exp(noise.gauss(0, 0.02)),
                               spread=0.04, trials=7)]
    document = result_document(entries, profile="quick")
    document["machine_info"]["fssgd"].update(cpu_model=cpu, **fssgd)
    document["commit_info"] = {"id": f"{index:07x}".ljust(40, "0"), "time": f"2026-01-{index + 1:02d}T00:00:00+00:00",
                               "dirty": False}
    # Named against their order, so that only the commit times can put them in it.
    return write_run(folder / f"{99 - index:04d}_run.json", document)


def loop_trend(folder):
    (series,) = history(runs_in([folder])[0])
    (trend,) = [trend for trend in series.trends if trend.key == LOOP]
    return series, trend


def test_identical_runs_show_no_change_point_and_the_latest_level_is_the_best(tmp_path):
    for index in range(12):
        saved_run(tmp_path, index, 0.6)
    series, trend = loop_trend(tmp_path)
    assert [point.commit for point in series.points] == [f"{index:07x}" for index in range(12)]
    assert trend.changes == [] and trend.latest == pytest.approx(trend.best)


def test_a_slowdown_is_named_at_the_run_of_the_commit_that_made_it_with_its_factor(tmp_path):
    for index in range(12):
        saved_run(tmp_path, index, 0.6 if index < 8 else 0.6 * 1.3)
    series, trend = loop_trend(tmp_path)
    (change,) = trend.changes
    assert series.points.index(change.after) == 8 and change.after.commit == f"{8:07x}"
    assert change.factor.low < 1.3 < change.factor.high and change.factor.low > 1.1  # over runs, not trials
    assert trend.latest / trend.best == pytest.approx(1.3, rel=0.05)


def test_runs_from_two_cpu_models_are_two_series_not_a_change(tmp_path):
    for index in range(6):
        saved_run(tmp_path, index, 0.6)
    for index in range(6, 12):
        saved_run(tmp_path, index, 0.9, cpu="Other CPU")  # another machine: another level, not a regression
    found = history(runs_in([tmp_path])[0])
    assert sorted(dict(series.environment)["CPU"] for series in found) == ["Other CPU", "Test CPU"]
    assert all(trend.changes == [] for series in found for trend in series.trends)


@pytest.mark.parametrize("field, value, name, said", [("numpy", "2.3.0", "NumPy", "2.3.0"),
                                                      ("nvidia_gpus", ["NVIDIA H200, 570.86"], "GPU", "NVIDIA H200, 570.86"),
                                                      ("cuda", {"driver": "12.8"}, "CUDA", "driver 12.8"),
                                                      ("cpu_affinity", "CPUs 1", "CPU affinity", "CPUs 1")])
def test_runs_with_another_numpy_gpu_cuda_or_cpu_affinity_are_a_series_of_their_own(tmp_path, field, value, name, said):
    for index in range(6):
        saved_run(tmp_path, index, 0.6)
    for index in range(6, 12):
        saved_run(tmp_path, index, 0.9, **{field: value})
    found = history(runs_in([tmp_path])[0])
    assert len(found) == 2 and said in {dict(series.environment)[name] for series in found}
    assert all(trend.changes == [] for series in found for trend in series.trends)


def test_a_series_of_one_run_is_stated_not_judged(tmp_path, capsys):
    saved_run(tmp_path, 0, 0.6)
    (series,) = history(runs_in([tmp_path])[0])
    assert series.trends == []
    assert main(["--history", str(tmp_path), "--out", str(tmp_path.parent / "out"), "--no-plots"]) == 0
    assert "a series of one run, no history to read yet" in capsys.readouterr().err
    assert "One run: no history to read yet." in (tmp_path.parent / "out" / "history.md").read_text()


def test_a_folder_without_runs_is_an_error_and_a_corrupted_file_is_skipped_untouched(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(HistoryError, match="no saved run of this suite in"):
        runs_in([empty])
    assert main(["--history", str(empty), "--out", str(tmp_path / "out")]) == 2
    assert "error: no saved run of this suite in" in capsys.readouterr().err
    runs = tmp_path / "runs"
    runs.mkdir()
    for index in range(3):
        saved_run(runs, index, 0.6)
    broken = runs / "0001_broken.json"
    broken.write_text('{"machine_info": ')
    another_suite = {**result_document([benchmark_entry("numpy_loop", "cpu", 1000, 10.0)]), "machine_info": {}}
    other_suite = write_run(runs / "0002_other.json", another_suite)
    assert main(["--history", str(runs), "--out", str(tmp_path / "out"), "--no-plots"]) == 0
    err = capsys.readouterr().err
    assert f"note: {broken}: not valid JSON" in err
    assert f"note: {other_suite}: not a run of this suite (no machine_info.fssgd); skipped" in err
    assert broken.read_text() == '{"machine_info": '
    assert main(["--history", str(runs), "--out", str(runs / "inside")]) == 2
    assert "is inside a folder of runs" in capsys.readouterr().err


def test_the_history_page_names_each_change_with_its_run_and_commit(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for index in range(10):
        saved_run(runs, index, 0.6 if index < 5 else 0.9)
    assert main(["--history", str(runs), "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "history.md").read_text()
    assert f"| `{LOOP.name}` |" in page and f"at run 6 ({5:07x}): ×1.4" in page
    assert (tmp_path / "out" / "history-1-n1000.png").exists()


class Still(random.Random):
    """No noise between runs: each run the same ratio, as copies of one run would be."""

    def gauss(self, mu=0.0, sigma=1.0):
        return 0.0


def history_page(tmp_path, levels, **saved):
    runs = tmp_path / "runs"
    runs.mkdir()
    for index, ratio in enumerate(levels):
        saved_run(runs, index, ratio, **saved)
    assert main(["--history", str(runs), "--out", str(tmp_path / "out"), "--no-plots"]) == 0
    (row,) = [line for line in (tmp_path / "out" / "history.md").read_text().splitlines()
              if line.startswith(f"| `{LOOP.name}` |")]
    return loop_trend(runs) + (row,)


@pytest.mark.parametrize("a_side", [1, 2])
def test_a_step_with_one_or_two_runs_a_side_is_too_few_runs_to_tell_not_a_change(tmp_path, a_side):
    # As a free and a pinned run of one commit, ×0.646 apart: one level, not a change point.
    series, trend, row = history_page(tmp_path, [0.6] * a_side + [0.6 * 0.646] * a_side)
    assert trend.changes == [] and [step.runs for step in trend.too_few] == [(a_side, a_side)]
    assert trend.latest == trend.best
    assert (f"| best | too few runs to tell: a step at run {a_side + 1} ({a_side:07x}) has {a_side} "
            f"run{'s' * (a_side > 1)} before it and {a_side} after; 3 a side are needed |") in row
    assert "×" not in row.split("| best |")[1]


def test_three_runs_a_side_name_a_change_whose_interval_is_not_a_single_value(tmp_path):
    series, trend, row = history_page(tmp_path, [0.6] * 3 + [0.9] * 3)
    (change,) = trend.changes
    assert series.points.index(change.after) == 3
    assert 1.3 < change.factor.low < change.factor.value < change.factor.high < 1.7  # three runs a side: their range
    assert trend.latest / trend.best == pytest.approx(1.5, rel=0.05)
    assert f"at run 4 ({3:07x}): ×{with_interval(change.factor)}" in row and " to " in with_interval(change.factor)


def test_a_step_between_copies_of_one_run_has_no_interval_so_is_too_few_runs_to_tell(tmp_path):
    series, trend, row = history_page(tmp_path, [0.6] * 3 + [0.9] * 3, noise=Still())
    assert trend.changes == [] and trend.latest == trend.best
    assert (f"too few runs to tell: the runs on each side of a step at run 4 ({3:07x}) agree exactly, as copies of "
            "one run would, so its interval would be a single value") in row
