"""The release study: its parts and ratios from the passes, its versions' labels and settings, and one real run."""

import json
import sys

import pytest
from helpers import paired_outcomes

from perf.gate.versions import GateError, checked_out
from perf.report.analysis import REMAINDER
from perf.research import releases

LABELS = ["TF old", "TF new"]
# µs per step by solver and version, pass by pass: the new release's Session.run call costs 10 µs more.
STEP_US = {
    "tf1_feed_dict": ([300, 310, 290], [310, 320, 300]),
    "tf1_feed_dict_no_loss": ([250, 255, 245], [260, 265, 255]),
    "tf1_constant": ([200, 205, 195], [210, 215, 205]),
    "tf1_constant_no_loss": ([150, 150, 150], [160, 160, 160]),
    "tf1_while_loop": ([20, 21, 19], [20, 21, 19]),
    "numpy_loop": ([10, 10, 10], [10, 10, 10]),
}


def outcomes(step_us=STEP_US):
    return paired_outcomes(step_us, LABELS, calls=2)


def test_each_part_is_the_mean_over_passes_of_the_two_benchmarks_difference_in_the_same_pass():
    found = releases.analysed(outcomes(), LABELS)[1000]
    old, new = found["TF old"]["parts"], found["TF new"]["parts"]
    assert old["Session.run call"].value == pytest.approx(130) and new["Session.run call"].value == pytest.approx(140)
    assert old["Session.run call"].low < 130 < old["Session.run call"].high  # the while_loop's passes vary
    assert old["loss fetch"].value == pytest.approx(50) and old["feed_dict copies"].value == pytest.approx(100)
    assert old["arithmetic"].value == pytest.approx(20)
    # (tf1_constant − tf1_constant_no_loss) − (tf1_feed_dict − tf1_feed_dict_no_loss), pass by pass.
    assert old[REMAINDER].value == pytest.approx(0.0)


def test_ratios_are_to_the_first_version_from_the_paired_rounds_and_to_numpy_loop_in_the_same_version():
    found = releases.analysed(outcomes(), LABELS)[1000]
    first, second = found["TF old"]["benchmarks"], found["TF new"]["benchmarks"]
    assert first["tf1_constant_no_loss"]["to_first"] == (1.0, 1.0, 1.0, 1.0)
    assert second["tf1_constant_no_loss"]["to_first"].value == pytest.approx(160 / 150)
    assert second["tf1_constant_no_loss"]["to_reference"].value == pytest.approx(16.0)
    assert first["tf1_feed_dict"]["us"].value == pytest.approx(300)


def test_the_report_has_a_row_per_release_and_a_column_per_part():
    text = releases.rendered(releases.analysed(outcomes(), LABELS), LABELS, ["# test", ""])
    assert "## The parts of a `tf1_feed_dict` step at n = 1,000: µs per step" in text
    assert "| TF new | 310 (" in text and "Session.run call" in text
    assert "| 160 µs, ×1.07 |" in text  # tf1_constant_no_loss, new over old: the same in every pass


def test_a_version_spec_may_set_environment_variables_for_its_workers():
    with checked_out(f"{sys.executable}:TF_ENABLE_ONEDNN_OPTS=0,OTHER=a=b", "baseline") as version:
        assert version.env == (("TF_ENABLE_ONEDNN_OPTS", "0"), ("OTHER", "a=b"))
        assert version.description.endswith("with TF_ENABLE_ONEDNN_OPTS=0, OTHER=a=b")
    with pytest.raises(GateError, match="environment settings are NAME=VALUE"):
        with checked_out(f"{sys.executable}:TF_ENABLE_ONEDNN_OPTS", "baseline"):
            pass


@pytest.mark.e2e
def test_end_to_end_one_interpreter_twice_with_different_settings_is_labelled_and_timed_side_by_side(tmp_path):
    out = tmp_path / "out"
    assert releases.main([sys.executable, f"{sys.executable}:TF_ENABLE_ONEDNN_OPTS=0", "--passes", "2",
                          "--solvers", "numpy_loop,numpy_lean", "--out", str(out), "--seed", "3"]) == 0
    passes = json.loads((out / "passes.json").read_text())
    labels = [version["label"] for version in passes["versions"]]
    assert labels[1] == labels[0] + " TF_ENABLE_ONEDNN_OPTS=0" and passes["versions"][1]["env"] == {
        "TF_ENABLE_ONEDNN_OPTS": "0"}
    timed = passes["benchmarks"]["numpy_lean-cpu-n1000"]
    assert {label: len(values) for label, values in timed["round_s"].items()} == {labels[0]: 2, labels[1]: 2}
    assert len(timed["log_ratios"][labels[1]]) == 2
    text = (out / "README.md").read_text()
    assert f"| {labels[1]} |" in text and "--seed 3" in text
    # A run read back from its passes.json agrees with itself, part by part (numpy solvers: no parts, no rows).
    found, read_labels = releases.read_back(out)
    assert read_labels == labels and found[1000][labels[1]]["benchmarks"]["numpy_lean"]["us"].value > 0


def test_two_runs_compared_part_by_part_say_where_their_intervals_do_not_overlap(tmp_path, capsys):
    def saved(folder, step_us):
        folder.mkdir()
        (folder / "passes.json").write_text(json.dumps({
            "versions": [{"label": label} for label in LABELS],
            "benchmarks": releases.saved_form(outcomes(step_us))}))
        return folder

    slower_call = {solver: (old, [value + 100 * (solver.startswith("tf1_constant_no")) for value in new])
                   for solver, (old, new) in STEP_US.items()}
    first, second = saved(tmp_path / "a", STEP_US), saved(tmp_path / "b", slower_call)
    assert releases.main(["--compare", str(first), str(first)]) == 0
    text = capsys.readouterr().out
    assert "## µs per step, each part, n = 1,000: 14 of 14 overlap" in text  # 7 parts, 2 releases
    assert "## × TF old, each benchmark, n = 1,000: 6 of 6 overlap" in text  # the second release's six
    releases.main(["--compare", str(first), str(second)])
    text = capsys.readouterr().out
    assert "| TF new | Session.run call | 140 (" in text and "| TF new | Session.run call | 240 (" not in text
    assert text.count("**no**") >= 1 and "| TF old | Session.run call |" in text


def test_a_benchmark_saved_without_passes_is_read_back_unjudged_and_left_out_of_the_analysis(tmp_path):
    saved = releases.saved_form(outcomes())
    saved["tf1_callable-cpu-n1000"] = {"steps": 0, "calls": 1, "problem": "error on TF new: broken install",
                                       "round_s": {}, "log_ratios": {}}
    (tmp_path / "passes.json").write_text(json.dumps({"versions": [{"label": label} for label in LABELS],
                                                      "benchmarks": saved}))
    found, labels = releases.read_back(tmp_path)
    assert labels == LABELS and set(found[1000]["TF new"]["benchmarks"]) == set(STEP_US)
