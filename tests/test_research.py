"""The research tools, on problems small enough to run here: the seed's own programs, the worker-history study and
the comparison study (its runs recorded with the real suite, shrunk, and judged); and what they use of the gate."""

import ast
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from perf import gate
from perf.report.rows import rows_of
from perf.research import compare_study, worker_history
from perf.research.seed_programs import seed_data
from solvers.answers import TOLERANCE, mismatch
from solvers.problem import Fit, seed_problem

import solvers

STEPS = 200


@pytest.mark.parametrize("program, dtype", [pytest.param("numpy", "float64"),
                                            pytest.param("tensorflow", "float32", marks=pytest.mark.tensorflow)])
def test_the_seed_programs_written_from_the_report_reach_the_expected_answer(program, dtype):
    found = json.loads(subprocess.run([sys.executable, "-m", "perf.research.seed_programs", program, str(STEPS)],
                                      capture_output=True, text=True, check=True).stdout)
    expected = solvers.get("numpy_loop").expected(seed_problem(1_000, STEPS))
    assert mismatch(Fit(found["w"], found["b"], found["loss"], STEPS), expected, dtype) is None
    assert found["steps"] == STEPS and found["us_per_step"] > 0 and dtype in TOLERANCE


def test_the_seed_data_is_the_reports():
    x, y = seed_data()
    problem = seed_problem(1_000)
    assert (x == problem.x).all() and (y == problem.y).all()


def test_a_bad_seed_program_name_is_a_usage_line_not_a_traceback():
    result = subprocess.run([sys.executable, "-m", "perf.research.seed_programs", "fortran"], capture_output=True,
                            text=True)
    assert result.returncode == 2 and result.stderr.startswith("usage: python -m perf.research.seed_programs")


@pytest.mark.e2e
def test_the_worker_history_study_adds_repeats_to_a_folder_and_summarises_them_all(tmp_path, capsys):
    options = ["--repeats", "2", "--solvers", "numpy_loop,numpy_lean", "--probes", "numpy_lean:1000",
               "--out", str(tmp_path)]
    assert worker_history.main(options) == 0
    assert worker_history.main(options) == 0
    saved = json.loads((tmp_path / "results.json").read_text())
    assert len(saved["repeats"]) == 4 and saved["history"] == ["numpy_loop:1000", "numpy_loop:100000",
                                                                "numpy_lean:1000", "numpy_lean:100000"]
    assert set(saved["repeats"][0]["probes"]["numpy_lean:1000"]) == {"fresh", "used"}
    assert saved["summary"][0] == "used / fresh over 4 repeats: the mean with its 90% Student t interval"
    assert saved["summary"][2].startswith("numpy_lean:1000") and "repeat 4: history" in capsys.readouterr().out


def test_a_slowed_run_slows_a_third_of_the_solvers_never_the_reference_and_every_one_once_in_three():
    groups = [compare_study.slowed_group(index) for index in range(3)]
    assert all("numpy_loop" not in group for group in groups)
    assert sorted(name for group in groups for name in group) == sorted(set(solvers.REGISTRY) - {"numpy_loop"})
    assert compare_study.slowed_group(3) == groups[0]


@pytest.mark.e2e
@pytest.mark.tensorflow  # --seed-programs times the question's TensorFlow program
def test_the_comparison_study_records_real_runs_and_judges_every_pair(tmp_path, monkeypatch, outside_xdist):
    monkeypatch.setenv("FSSGD_SHRINK", "100")  # the real suite, shrunk: this checks the tool, not the machine
    cpu = str(max(os.sched_getaffinity(0)))
    # numpy_affine_power is in the third group, which the third run slows; numpy_lean is labelled a code change.
    shrunk = ["--solvers", "numpy_loop,numpy_lean,numpy_affine_power", "--devices", "cpu", "--cpu-affinity", cpu]
    assert "numpy_affine_power" in compare_study.slowed_group(2) and "numpy_lean" not in compare_study.slowed_group(2)
    assert compare_study.main(["record", "--out", str(tmp_path), "--runs", "2", "--seed-programs", "50", *shrunk]) == 0
    assert compare_study.main(["record", "--out", str(tmp_path), "--runs", "1", "--slowed", "3", *shrunk]) == 0
    assert compare_study.main(["record", "--out", str(tmp_path), "--changed", "numpy_lean=1.2", *shrunk]) == 0
    assert compare_study.main(["analyze", "--out", str(tmp_path)]) == 0
    entries = json.loads((tmp_path / "manifest.json").read_text())
    assert [entry["kind"] for entry in entries] == ["quiet"] * 4
    assert all(entry["suite_options"] == shrunk for entry in entries)  # the suite's options, passed on and kept
    saved = json.loads((tmp_path / entries[0]["file"]).read_text())
    assert saved["machine_info"]["fssgd"]["cpu_affinity"] == f"CPUs {cpu}"
    assert entries[2]["slowdown"] == ",".join(f"{name}=3.0" for name in compare_study.slowed_group(2))
    assert entries[3]["slowdown"] == "numpy_lean=1.2" and entries[3]["change"] == "code"
    assert len(entries[3]["commit"]) == 40  # the tree's commit, whose code the run timed
    summary = json.loads((tmp_path / "summary.json").read_text())
    # Two identical runs give one pair; the slowed and the changed run are each set against both.
    assert summary["pairs failed on identical benchmarks"]["quiet"].endswith("of 5")
    verdicts = summary["verdicts"]
    assert sum(verdicts["slowed 3.0x, against quiet"].values()) == 2 * 2  # 2 sizes, against 2 runs
    assert sum(verdicts["changed 1.2x, against quiet"].values()) == 2 * 2
    assert sum(verdicts["identical, quiet"].values()) == 2 * 2 + 2 * (2 * 2)  # the pair; the others' unslowed
    assert set(summary["slowed benchmarks' change, median over pairs"]) == {
        f"{name}-cpu-n{n}" for name in ("numpy_lean", "numpy_affine_power") for n in (1000, 100000)}
    assert [entry["file"] for entry in summary["trials taken"]] == [entry["file"] for entry in entries]
    assert len(summary["suite µs per step / seed program's, per run"]) == 2
    reach = summary["smallest slowdown two identical quiet runs could call, median over pairs"]
    names = {f"{name}-cpu-n{n}" for name in ("numpy_lean", "numpy_affine_power") for n in (1000, 100000)}
    assert set(reach) == {"over benchmarks", *names}  # each is compared unslowed in a pair of quiet runs
    # Each figure's own value is checked on runs made for it (test_the_smallest_slowdown_identical_runs_...).
    assert reach["over benchmarks"] == pytest.approx(statistics.median(reach[name] for name in names), abs=0.001)


def test_the_comparison_study_refuses_to_analyse_runs_of_two_cpu_affinities_together(tmp_path, capsys):
    benchmark = {"name": "test_fssgd[numpy_lean-cpu-n1000]", "fullname": "perf/test_fssgd.py::x", "stats": {},
                 "extra_info": {"solver": "numpy_lean", "device": "cpu", "n": 1000, "iterations": 10}}
    for index, affinity in enumerate([None, "CPUs 1"]):  # a run from before --cpu-affinity ran free
        fssgd = {"cpu_affinity": affinity} if affinity else {}
        (tmp_path / f"run-{index:02d}.json").write_text(json.dumps({"machine_info": {"fssgd": fssgd},
                                                                    "benchmarks": [benchmark]}))
    (tmp_path / "manifest.json").write_text(json.dumps([{"file": f"run-{index:02d}.json", "kind": "quiet",
                                                         "slowdown": None} for index in range(2)]))
    assert compare_study.main(["analyze", "--out", str(tmp_path)]) == 2
    assert "holds runs of 2 CPU affinities, which are not compared: free: run-00.json; CPUs 1: run-01.json" in (
        capsys.readouterr().err)
    assert not (tmp_path / "summary.json").exists()


def quiet_runs(run_factors: list[float], trial_factors: list[float]):
    """Identical quiet runs of numpy_lean at n = 1,000, each trial's ratio run factor × trial factor, as loaded()."""
    def benchmark(run_factor):
        return {"name": "test_fssgd[numpy_lean-cpu-n1000]", "extra_info": {
            "solver": "numpy_lean", "device": "cpu", "n": 1000, "iterations": 10,
            "reference_trial_medians_s": [1.0] * len(trial_factors),
            "trial_medians_s": [run_factor * trial for trial in trial_factors]}}
    return [({"kind": "quiet", "slowdown": None}, {row.key: row for row in rows_of([benchmark(factor)])[0]})
            for factor in run_factors]


def test_the_smallest_slowdown_identical_runs_could_call_is_the_one_that_just_turns_them_slower():
    from perf.judge.rules import change_verdict

    runs = quiet_runs([1.0, 1.0], [0.9, 1.0, 1.1, 0.95, 1.05, 0.97, 1.03])
    summary = compare_study.tallies(runs, 0.10)
    reach = summary["smallest slowdown two identical quiet runs could call, median over pairs"]
    then, now = (row.trial_ratios for _, rows in runs for row in rows.values())
    assert reach["over benchmarks"] == reach["numpy_lean-cpu-n1000"] > 1.1
    # Its defining property, found by slowing the second run (the summary rounds to 0.001).
    assert change_verdict(then, [ratio * (reach["over benchmarks"] + 0.001) for ratio in now], 0.10)[1] == "slower"
    assert change_verdict(then, [ratio * (reach["over benchmarks"] - 0.001) for ratio in now], 0.10)[1] != "slower"


def test_trials_needed_grow_with_the_trials_spread_and_none_suffice_when_runs_themselves_differ():
    steady, spread = [1.0, 1.0, 1.0, 1.0], [0.9, 1.0, 1.1, 0.95, 1.05]
    tight = compare_study.trials_needed(quiet_runs(steady, [0.99, 1.0, 1.01, 1.0, 1.0]), 0.10)["numpy_lean-cpu-n1000"]
    loose = compare_study.trials_needed(quiet_runs(steady, spread), 0.10)["numpy_lean-cpu-n1000"]
    drifting = compare_study.trials_needed(quiet_runs([0.8, 1.0, 1.25, 0.9], spread), 0.10)["numpy_lean-cpu-n1000"]
    assert tight["sd between runs"] == loose["sd between runs"] == 0.0 and drifting["sd between runs"] > 0.1
    assert 2 <= tight["trials needed"] < loose["trials needed"] and drifting["trials needed"] is None
    assert tight["caught at 5 trials, model"] > 0.95 > loose["caught at 5 trials, model"]


def test_the_trials_to_be_precise_grow_with_the_square_of_the_spread_and_match_the_rule_they_model():
    from perf.judge.rules import precise_enough

    spread = [0.9, 1.0, 1.1, 0.95, 1.05]
    twice = [factor ** 2 for factor in spread]  # twice the spread in log ratio
    found = compare_study.trials_to_be_precise(quiet_runs([1.0, 1.0], spread), 0.10)
    needed = found["numpy_lean-cpu-n1000"]
    assert found["over benchmarks"] == {"median": needed, "nine in ten": needed}
    wider = compare_study.trials_to_be_precise(quiet_runs([1.0, 1.0], twice), 0.10)["numpy_lean-cpu-n1000"]
    assert 3.5 * needed <= wider <= 4.5 * needed
    # The rule itself on that many trials of this spread: precise enough at about the count the model gives.
    trials = (spread * needed)[:needed]
    assert precise_enough(trials * 2, 0.10) and not precise_enough(trials[: needed // 2], 0.10)


def test_the_research_uses_only_what_the_gate_declares_public():
    for path in (Path(__file__).parents[1] / "perf" / "research").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("perf.gate"):
                # The rule's figures are the judge's to declare (perf/judge/), read from the gate's verdict until then.
                assert node.module == "perf.gate.ending" or node.module == "perf.gate" and all(
                    alias.name in gate.__all__ for alias in node.names), (path.name, node.module)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "gate":
                assert node.attr in gate.__all__, (path.name, node.attr)
