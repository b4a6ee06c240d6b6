"""The hand-off study (perf/research/handoff.py) and the report reading it (perf/report/handoff.py): free − one CPU
pass by pass, its files, and the row and sentence a free run gains, a one-CPU run not."""

import json
import math

import pytest
from helpers import ROOT, paired_outcomes

from perf.report.__main__ import main as report
from perf.report.answer import START, answer_lines
from perf.report.handoff import HandoffError, read_handoff
from perf.report.runs import load_run
from perf.research import handoff

FULL_RUN = ROOT / "docs" / "results" / "full" / "full.json"
# µs per step by solver, (on one CPU, free), pass by pass: free, the Session.run call costs 40-50 µs more.
STEP_US = {
    "tf1_feed_dict": ([180, 190, 170], [230, 242, 218]),
    "tf1_feed_dict_no_loss": ([170, 175, 165], [215, 225, 200]),
    "tf1_constant": ([100, 105, 95], [145, 150, 140]),
    "tf1_constant_no_loss": ([80, 80, 80], [125, 130, 120]),
    "tf1_while_loop": ([10, 11, 9], [20, 22, 18]),
    "numpy_loop": ([12, 12, 12], [12, 12, 12]),
}


def outcomes(n=1000):
    return paired_outcomes(STEP_US, [handoff.ONE_CPU, handoff.FREE], n=n)


def saved_study(folder, sizes=(1000,)):
    """A study's passes.json as main writes it, from the outcomes above, and its README and handoff.json."""
    from perf.research.releases import saved_form

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "passes.json").write_text(json.dumps({
        "command": "python -m perf.research.handoff --passes 3 --cpu 1 --seed 1", "date": "2026-12-06",
        "cpu": "Test CPU", "commit": "abc1234", "seed": 1, "passes": 3, "one_cpu": 1, "threads": 0, "wall_s": 60.0,
        "versions": [], "benchmarks": saved_form([outcome for n in sizes for outcome in outcomes(n)])}))
    handoff.written(folder)
    return folder


def test_the_hand_off_is_free_less_one_cpu_in_the_same_pass_and_the_ratio_is_paired():
    found = handoff.analysed(outcomes())[1000]
    whole = found["benchmarks"]["tf1_feed_dict"]
    assert whole["handoff"].value == pytest.approx(50) and whole["handoff"].low < 50 < whole["handoff"].high
    assert whole[handoff.ONE_CPU].value == pytest.approx(180) and whole[handoff.FREE].value == pytest.approx(230)
    logs = [math.log(b / a) for a, b in zip(*STEP_US["tf1_feed_dict"])]
    assert whole["ratio"].value == pytest.approx(math.exp(sum(logs) / 3))
    # The control hands nothing over: exactly no difference in every pass.
    assert found["benchmarks"]["numpy_loop"]["handoff"].value == 0
    # Each part's hand-off is that part's difference, pass by pass: the Session.run call 45 − 10 = 35 µs.
    call = found["parts"]["Session.run call"]
    assert call[handoff.ONE_CPU].value == pytest.approx(70) and call[handoff.FREE].value == pytest.approx(105)
    assert call["handoff"].value == pytest.approx(35)


def test_the_study_writes_its_tables_and_the_figures_the_report_reads(tmp_path):
    folder = saved_study(tmp_path / "study", sizes=(1000, 100_000))
    readme = (folder / "README.md").read_text()
    assert "## Each benchmark at n = 1,000: µs per step" in readme and "## Each benchmark at n = 100,000" in readme
    assert "| `tf1_feed_dict` | 180 (" in readme and "every worker on CPU 1" in readme and handoff.MECHANISM in readme
    study = read_handoff(folder)
    part, free, one_cpu = study.at(1000)
    assert (part.value, one_cpu.value) == (pytest.approx(50), pytest.approx(180)) and part.coverage == 0.95
    assert study.at(10) is None
    # --analyze-only writes the same again from passes.json, timing nothing.
    before = readme
    (folder / "README.md").unlink()
    assert handoff.main(["--analyze-only", "--out", str(folder)]) == 0
    assert (folder / "README.md").read_text() == before


def run_like(folder, name, **fssgd):
    """The committed full run, as if made with these settings (machine_info.fssgd)."""
    document = json.loads(FULL_RUN.read_text())
    document["machine_info"]["fssgd"].update(fssgd)
    (folder / name).write_text(json.dumps(document))
    return folder / name


LIKE_THE_STUDY = {"cpu_affinity": "free", "threads": 0, "cpu_model": "Test CPU"}


def test_a_free_run_gains_the_hand_off_in_its_step_and_its_answer_and_a_one_cpu_run_does_not(tmp_path, capsys):
    study = read_handoff(saved_study(tmp_path / "study"))
    free = run_like(tmp_path, "free.json", **LIKE_THE_STUDY)
    assert "TensorFlow handing work between them" in " ".join(answer_lines(load_run(free), study))
    assert "handing work" not in " ".join(answer_lines(load_run(free)))
    for unlike in ({"cpu_affinity": "CPUs 1"}, {"threads": 1}, {"cpu_model": "Another CPU"}):
        other = run_like(tmp_path, "other.json", **{**LIKE_THE_STUDY, **unlike})
        assert "handing work" not in " ".join(answer_lines(load_run(other), study)), unlike

    pinned = run_like(tmp_path, "pinned.json", **{**LIKE_THE_STUDY, "cpu_affinity": "CPUs 1"})
    page = tmp_path / "page.md"
    page.write_text(f"{START}\n<!-- /answer -->\n")
    assert report([str(free), str(pinned), "--out", str(tmp_path / "report"), "--no-plots",
                   "--handoff", str(tmp_path / "study"), "--answer-into", str(page)]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert text.count("| (within the parts above: hand-off between CPUs) | 50.0 (") == 1  # run A's, not B's
    assert "The hand-off between CPUs is the study's, not this run's" in text
    assert "handing work between them" in page.read_text()
    assert f"note: {pinned}: no hand-off between CPUs from {tmp_path / 'study'}: its workers ran on CPUs 1, not free" \
        in capsys.readouterr().err


def test_a_missing_or_foreign_study_is_an_error_that_says_how_to_make_one(tmp_path, capsys):
    with pytest.raises(HandoffError, match="python -m perf.research.handoff --out"):
        read_handoff(tmp_path)
    assert report([str(FULL_RUN), "--out", str(tmp_path / "report"), "--handoff", str(tmp_path)]) == 2
    assert f"error: --handoff {tmp_path}: no handoff.json in {tmp_path}" in capsys.readouterr().err
    study = json.loads((saved_study(tmp_path / "study") / "handoff.json").read_text())
    without_mechanism = {key: value for key, value in study.items() if key != "mechanism"}
    for broken in ([1, 2], without_mechanism, {**study, "sizes": {"1000": {"handoff_us": [1, 2]}}}):
        (tmp_path / "handoff.json").write_text(json.dumps(broken))
        with pytest.raises(HandoffError, match="is not the hand-off study's handoff.json"):
            read_handoff(tmp_path)


def test_the_history_takes_no_hand_off(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        report(["--history", str(tmp_path), "--handoff", str(tmp_path)])
    assert stopped.value.code == 2 and "are for one run's report, not --history" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--passes", "1"], "--passes must be at least 2"),
    (["--cpu", "0-1"], "--cpu: one CPU"),
    (["--solvers", "tf1_nothing"], "--solvers: no solver tf1_nothing"),
    (["--solvers", ","], "--solvers: name at least one solver"),
    (["--analyze-only", "--out", "/nonexistent/study"], "no passes.json in /nonexistent/study"),
])
def test_a_wrong_command_is_a_usage_error_before_anything_is_timed(argv, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        handoff.main(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.e2e
def test_end_to_end_free_and_one_cpu_are_timed_in_the_same_passes(tmp_path):
    out = tmp_path / "study"
    argv = ["--passes", "2", "--solvers", "tf1_feed_dict,numpy_loop", "--out", str(out), "--seed", "5"]
    assert handoff.main(argv) == 0
    passes = json.loads((out / "passes.json").read_text())
    assert passes["command"].endswith("--seed 5 --solvers tf1_feed_dict,numpy_loop")
    assert [version["env"]["FSSGD_CPU_AFFINITY"] for version in passes["versions"]] == [str(passes["one_cpu"]), "free"]
    for name, measured in passes["benchmarks"].items():
        assert measured["problem"] is None, name
        assert [len(measured["round_s"][label]) for label in (handoff.ONE_CPU, handoff.FREE)] == [2, 2], name
    study = read_handoff(out)
    assert all(study.at(n) for n in (1000, 100_000))
