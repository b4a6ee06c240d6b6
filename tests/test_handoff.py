"""The hand-off study (perf/research/handoff.py) and the report reading it (perf/report/handoff.py): free − one CPU
pass by pass, its files, and the row and sentence a free run gains, a one-CPU run not."""

import json
import math

import pytest
from helpers import ROOT, paired_outcomes

from perf.report.__main__ import main as report
from perf.report.answer import START, answer_lines
from perf.judge.statistics import Interval
from perf.report.handoff import HandoffError, attribution, read_handoff
from perf.report.runs import load_run
from perf.research import handoff

FULL_RUN = ROOT / "docs" / "results" / "full" / "full.json"
LABELS = handoff.labels(2)  # one CPU (TF default, 1 and 2 threads), free (the same)
BASE = [180.0, 190.0, 170.0]  # a step's µs on one CPU with TensorFlow's default threads, pass by pass


def ways(base, pools, crossing, noise=(2.0, -1.0, -1.0)):
    """µs per step of the six versions, pass by pass, where free's 2 threads cost `pools` on one CPU and a second CPU
    costs `crossing` at any thread count; TensorFlow's default is 1 thread on one CPU and 2 free. Each version with
    more than the base carries its own noise, so every difference has a spread."""
    shifted = [noise[p:] + noise[:p] for p in range(3)]
    one_default = list(base)
    one_two = [b + pools + e for b, e in zip(base, shifted[0])]
    free_two = [b + pools + crossing + e for b, e in zip(base, shifted[1])]
    free_one = [b + crossing + e for b, e in zip(base, shifted[2])]
    return one_default, list(base), one_two, free_two, free_one, free_two


# Free, the Session.run call's pools cost 40 µs on one CPU and crossing costs nothing: the pools, not a crossing.
STEP_US = {
    "tf1_feed_dict": ways(BASE, 50, 0),
    "tf1_feed_dict_no_loss": ways([170, 175, 165], 45, 0),
    "tf1_constant": ways([100, 105, 95], 45, 0),
    "tf1_constant_no_loss": ways([80, 80, 80], 45, 0),
    "tf1_while_loop": ways([10, 11, 9], 5, 0),
    "numpy_loop": ways([12, 12, 12], 0, 0, noise=(0, 0, 0)),
}


def outcomes(n=1000, step_us=STEP_US):
    return paired_outcomes(step_us, LABELS, n=n)


TODAYS_WORKERS = {"worker_processes": "one framework each",
                  "malloc_settings": {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "67108864"}}
# What a run saved before its workers were recorded says of them: nothing (the committed full run records today's).
EARLIER_WORKERS = {"worker_processes": None, "malloc_settings": None}


def saved_study(folder, sizes=(1000,), step_us=STEP_US, workers=None):
    """A study's passes.json as main writes it, from the outcomes above, and its README and handoff.json; workers:
    how its workers ran, as a study made now records it (none: one saved before it recorded them)."""
    from perf.research.releases import saved_form

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "passes.json").write_text(json.dumps({
        "command": "python -m perf.research.handoff --passes 3 --cpu 1 --seed 1", "date": "2026-12-06",
        "cpu": "Test CPU", "cpus": 2, "commit": "abc1234", "seed": 1, "passes": 3, "one_cpu": 1, "free_threads": 2,
        "pools": {name: {"cpus": 1 if "one" in name else 2, "inter_op_threads": 1} for name in LABELS},
        "wall_s": 60.0, "versions": [], **(workers or {}),
        "benchmarks": saved_form([outcome for n in sizes for outcome in outcomes(n, step_us)])}))
    handoff.written(folder)
    return folder


def test_free_less_one_cpu_and_its_controls_are_taken_pass_by_pass():
    found = handoff.analysed(outcomes(), 2)[1000]
    whole = found["benchmarks"]["tf1_feed_dict"]
    assert whole[LABELS[0]].value == pytest.approx(180) and whole["free (TF default)"].value == pytest.approx(230)
    # free − one CPU: 50 + the free version's noise, pass by pass; the pools' 50 with its own noise; crossing: the
    # two noises' difference, a spread about zero.
    assert whole["gap"].value == pytest.approx(50) and whole["gap"].low < 50 < whole["gap"].high
    assert whole["pools"].value == pytest.approx(50) and whole["pools"].low > 0
    assert whole["crossing"].value == pytest.approx(0, abs=1e-9) and whole["crossing"].low < 0 < whole["crossing"].high
    assert whole["crossing at 1 thread"].value == pytest.approx(0, abs=1e-9)
    # The control hands nothing over: exactly no difference in every pass.
    assert found["benchmarks"]["numpy_loop"]["gap"].value == 0
    # Each part's difference is that part's, pass by pass: the Session.run call's pools 45 − 5 = 40 µs.
    call = found["parts"]["Session.run call"]
    assert call[LABELS[0]].value == pytest.approx(70) and call["pools"].value == pytest.approx(40)


def interval(value, reach=5.0):
    return Interval(value, value - reach, value + reach, 0.95)


@pytest.mark.parametrize("pools, crossing, said, unsaid", [
    (50, 0, "TensorFlow's larger thread pools, not a crossing between CPUs", "2 threads each, free costs"),
    (0, 50, "perhaps the threads' crossing between CPUs; one study does not settle it", "the thread pools"),
    (0, 50, "costs the same as with its default within the interval: not the pools' size", "cost the same"),
    (25, 25, "One CPU with free's 2 threads costs 25 (20.0 to 30.0) µs more than with its default", "same"),
    # The pools make most of the gap; the rest is said as possible, never as found.
    (40, 12, "the thread pools, most of the gap", ": a crossing between CPUs"),
    (40, 12, "free still costs 12 (7.00 to 17.0) µs more than one CPU: perhaps", "the thread pools, part"),
    (20, 25, "the thread pools, part of the gap", "most of the gap"),
    (2, -2, "Neither control alone differs from zero", "µs more than with its"),
])
def test_what_the_controls_say_follows_their_intervals(pools, crossing, said, unsaid):
    text = attribution(interval(50), interval(pools), interval(crossing), 2)
    assert text.startswith("free costs 50 (45.0 to 55.0) µs more a step than one CPU") and said in text
    assert unsaid not in text


def test_no_difference_is_not_explained():
    assert attribution(interval(3), interval(50), interval(0), 2).startswith(
        "free and on one CPU a step costs the same within the interval (3 (-2.00 to 8.00) µs)")
    assert attribution(interval(-30), interval(-30), interval(0), 2).startswith("free costs 30 (25.0 to 35.0) µs less")


def test_the_study_writes_its_tables_and_the_figures_the_report_reads(tmp_path):
    folder = saved_study(tmp_path / "study", sizes=(1000, 100_000))
    readme = (folder / "README.md").read_text()
    assert "## Each benchmark at n = 1,000: µs per step" in readme and "## Each benchmark at n = 100,000" in readme
    assert "| `tf1_feed_dict` | 180 (" in readme and "every worker on CPU 1" in readme
    assert "At n = 1,000, `tf1_feed_dict`: free costs 50" in readme and "not a crossing between CPUs" in readme
    study = read_handoff(folder)
    figures = study.at(1000)
    assert (figures["gap"].value, figures["one_cpu"].value) == (pytest.approx(50), pytest.approx(180))
    assert figures["pools"].value == pytest.approx(50) and figures["gap"].coverage == 0.95
    assert study.at(10) is None
    # --analyze-only writes the same again from passes.json, timing nothing.
    before = readme
    (folder / "README.md").unlink()
    assert handoff.main(["--analyze-only", "--out", str(folder)]) == 0
    assert (folder / "README.md").read_text() == before


def run_like(folder, name, **fssgd):
    """The committed full run, as if made with these settings (machine_info.fssgd; None: not recorded)."""
    document = json.loads(FULL_RUN.read_text())
    document["machine_info"]["fssgd"].update(fssgd)
    for key in [key for key, value in fssgd.items() if value is None]:  # None: a run that did not record it
        del document["machine_info"]["fssgd"][key]
    (folder / name).write_text(json.dumps(document))
    return folder / name


LIKE_THE_STUDY = {"cpu_affinity": "free", "threads": 0, "cpu_model": "Test CPU", "cpus_available": 2}


def test_a_free_run_gains_the_hand_off_in_its_step_and_its_answer_and_a_one_cpu_run_does_not(tmp_path, capsys):
    study = read_handoff(saved_study(tmp_path / "study", workers=TODAYS_WORKERS))
    free = run_like(tmp_path, "free.json", **LIKE_THE_STUDY)
    said = "TensorFlow's larger thread pools, not a crossing between CPUs"
    assert said in " ".join(answer_lines(load_run(free), study))
    assert "thread pools" not in " ".join(answer_lines(load_run(free)))
    for unlike in ({"cpu_affinity": "CPUs 1"}, {"threads": 1}, {"cpu_model": "Another CPU"}, {"cpus_available": 16}):
        other = run_like(tmp_path, "other.json", **{**LIKE_THE_STUDY, **unlike})
        assert "thread pools" not in " ".join(answer_lines(load_run(other), study)), unlike

    pinned = run_like(tmp_path, "pinned.json", **{**LIKE_THE_STUDY, "cpu_affinity": "CPUs 1"})
    page = tmp_path / "page.md"
    page.write_text(f"{START}\n<!-- /answer -->\n")
    assert report([str(free), str(pinned), "--out", str(tmp_path / "report"), "--no-plots",
                   "--handoff", str(tmp_path / "study"), "--answer-into", str(page)]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert text.count("| (within the parts above: free − one CPU) | 50.0 (") == 1  # run A's, not B's
    assert "Free − one CPU is the hand-off study's, not this run's" in text and said in text
    assert said in page.read_text()
    assert f"note: {pinned}: no free − one CPU from {tmp_path / 'study'}: its workers ran on CPUs 1, not free" \
        in capsys.readouterr().err


def test_a_study_applies_only_to_runs_whose_workers_ran_as_its_own(tmp_path, capsys):
    said = "TensorFlow's larger thread pools, not a crossing between CPUs"
    before = read_handoff(saved_study(tmp_path / "before"))  # saved before its workers were recorded, as the committed
    today = run_like(tmp_path, "today.json", **LIKE_THE_STUDY, **TODAYS_WORKERS)
    assert said not in " ".join(answer_lines(load_run(today), before))
    then = run_like(tmp_path, "then.json", **LIKE_THE_STUDY, **EARLIER_WORKERS)
    assert said in " ".join(answer_lines(load_run(then), before))
    assert report([str(today), "--out", str(tmp_path / "report"), "--no-plots", "--handoff",
                   str(tmp_path / "before")]) == 0
    assert (f"note: {today}: no free − one CPU from {tmp_path / 'before'}: its worker processes: one framework each, "
            "the study's: every selected framework in each; what a step costs moves with how the workers ran"
            in capsys.readouterr().err)
    # A study that records today's workers applies to a run like them, and to none that ran otherwise.
    study = json.loads((tmp_path / "before" / "handoff.json").read_text())
    (tmp_path / "today").mkdir()
    (tmp_path / "today" / "handoff.json").write_text(json.dumps({**study, **TODAYS_WORKERS}))
    now = read_handoff(tmp_path / "today")
    assert said in " ".join(answer_lines(load_run(today), now))
    for unlike in ({"worker_processes": None}, {"malloc_settings": {**TODAYS_WORKERS["malloc_settings"],
                                                                    "MALLOC_TRIM_THRESHOLD_": "131072"}}):
        other = run_like(tmp_path, "other.json", **{**LIKE_THE_STUDY, **TODAYS_WORKERS, **unlike})
        assert said not in " ".join(answer_lines(load_run(other), now)), unlike


def test_the_studys_figures_carry_how_its_workers_ran_where_it_recorded_it(tmp_path):
    saved_study(tmp_path / "study")
    assert not set(TODAYS_WORKERS) & set(json.loads((tmp_path / "study" / "handoff.json").read_text()))
    passes = json.loads((tmp_path / "study" / "passes.json").read_text())
    (tmp_path / "study" / "passes.json").write_text(json.dumps({**passes, **TODAYS_WORKERS}))
    handoff.written(tmp_path / "study")
    recorded = json.loads((tmp_path / "study" / "handoff.json").read_text())
    assert {key: recorded[key] for key in TODAYS_WORKERS} == TODAYS_WORKERS


def test_a_missing_or_foreign_study_is_an_error_that_says_how_to_make_one(tmp_path, capsys):
    with pytest.raises(HandoffError, match="python -m perf.research.handoff --out"):
        read_handoff(tmp_path)
    assert report([str(FULL_RUN), "--out", str(tmp_path / "report"), "--handoff", str(tmp_path)]) == 2
    assert f"error: --handoff {tmp_path}: no handoff.json in {tmp_path}" in capsys.readouterr().err
    study = json.loads((saved_study(tmp_path / "study") / "handoff.json").read_text())
    without_cpus = {key: value for key, value in study.items() if key != "cpus"}
    before_the_controls = {**study, "sizes": {"1000": {key: value for key, value in study["sizes"]["1000"].items()
                                                        if key != "pools_us"}}}
    for broken in ([1, 2], without_cpus, before_the_controls, {**study, "sizes": {"1000": {"gap_us": [1, 2]}}}):
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
@pytest.mark.tensorflow
def test_end_to_end_free_and_one_cpu_are_timed_in_the_same_passes(tmp_path):
    out = tmp_path / "study"
    argv = ["--passes", "2", "--solvers", "tf1_feed_dict,numpy_loop", "--out", str(out), "--seed", "5"]
    assert handoff.main(argv) == 0
    passes = json.loads((out / "passes.json").read_text())
    assert passes["command"].endswith("--seed 5 --solvers tf1_feed_dict,numpy_loop")
    one = str(passes["one_cpu"])
    assert [version["env"]["FSSGD_CPU_AFFINITY"] for version in passes["versions"]] == [one] * 3 + ["free"] * 3
    free_count = passes["free_threads"]
    assert [version["env"]["FSSGD_THREADS"] for version in passes["versions"]] == ["0", "1", str(free_count)] * 2
    # Each version's pools counted where it runs: on one CPU TensorFlow's default is one inter-op thread (it sizes
    # the pool by the CPUs it may use), elsewhere the count set; free's default is recorded as TensorFlow chose it.
    counted = [passes["pools"][version["label"]]["inter_op_threads"] for version in passes["versions"]]
    assert counted[:3] + counted[4:] == [1, 1, free_count, 1, free_count] and counted[3] >= 1
    for name, measured in passes["benchmarks"].items():
        assert measured["problem"] is None, name
        assert [len(measured["round_s"][label]) for label in handoff.labels(free_count)] == [2] * 6, name
    study = read_handoff(out)
    assert all(study.at(n) for n in (1000, 100_000))
    # Its workers recorded as a run made now records its own, so that the study applies to such runs alone.
    from perf.measure.environment import describe

    run = describe("quick")
    assert {key: study.study[key] for key in TODAYS_WORKERS} == {key: run[key] for key in TODAYS_WORKERS}
