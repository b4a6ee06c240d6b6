"""The step summaries in Markdown (perf/gate/ending.py, perf/report/compare.py, written by perf/step_summary.py): a
gate's, from its real JSON and from the gate's own command on fake workers, and a comparison's; $GITHUB_STEP_SUMMARY
appended to, a file that cannot be written refused."""

import json

import pytest
from gate_fakes import cpu_only, fake_workers_for_every_version
from helpers import FSSGD, ROOT, bench, document, info, spread

import solvers
from perf.gate.__main__ import USAGE_ERROR, main
from perf.judge.outcome import FAILED, NOT_MEASURED, PASSED
from perf.judge.rules import Verdict
from perf.gate.decide import gate_line
from perf.gate.ending import gate_summary
from perf.report.compare import comparison, comparison_summary, run_ending
from perf.step_summary import SUMMARY_VARIABLE
from perf.report.summary import free_on, setting, summary_lines

REAL_GATE = ROOT / "docs" / "results" / "gpu-check-cpu" / "gate-on-cpu" / "gate.json"
MOST_LINES_ABOVE_DETAILS = 40


def above_details(text: str) -> list[str]:
    return text.split("<details>")[0].splitlines()


def test_a_real_gates_json_renders_its_verdict_first_its_rows_and_every_verdict_collapsed():
    report = json.loads(REAL_GATE.read_text())
    text = gate_summary(report)
    lines = text.splitlines()
    assert lines[0] == ("**gate passed: 6 clear, 2 inconclusive** (exit 0: no confirmed regression, repeated error or "
                        "lost benchmark)")
    assert "Flagged: none." in lines and "Not measured or skipped: none." in lines
    assert "Replay it locally: the command is not recorded in this report; its seed was 1456649381." in lines
    details = lines.index("<details><summary>Every verdict (8 benchmarks)</summary>")
    assert lines[-1] == "</details>" and details < len(lines) - 1
    assert lines[details + 2] == "| benchmark | verdict | ratio | interval | passes | steps × calls | why |"
    assert lines[details + 4] == "| `jax_fori_loop-cpu-n1000` | CLEAR | 1.027 | [0.984, 1.073] | 5 | 1000 × 28 |  |"
    assert ("| `torch_eager-cpu-n100000` | INCONCLUSIVE | 0.988 | [0.894, 1.093] | 5 | 70 × 1 | a slowdown of 10% is "
            "not ruled out; this run could have detected 1.16x |") in lines
    assert sum(line.startswith("| `") for line in lines) == len(report["rows"])
    assert len(lines) == details + 2 + 2 + len(report["rows"]) + 2  # the table, a blank line, </details>


def full_registry_report(verdict_of) -> dict:
    """A gate's report over every solver at both of the gate's sizes, on cpu and gpu; verdict_of(solver, device)."""
    rows = []
    for name, solver in solvers.REGISTRY.items():
        for device in ("cpu", "gpu"):
            for n in (1000, 100000):
                verdict = verdict_of(name, device) if device in solver.devices else "skipped"
                screen = Verdict("regression", passes=5, ratio=1.3, low=1.2, high=1.4).saved()
                judged = {"passes": 6, "ratio": 1.31, "low": 1.22, "high": 1.41, "screening": screen,
                          "why": "confirmed: flagged again, alone"} if verdict == "regression" else {}
                why = {"skipped": f"skipped: {name} does not run on {device}", "error": "ValueError: broken"}.get(verdict, "")
                rows.append({"verdict": verdict, "benchmark": f"{name}-{device}-n{n}", "steps": 100, "calls": 1,
                             **({"why": why} if why else {}), **judged})
    return {"baseline": "HEAD~1 (0123456789)", "candidate": "the working tree", "threshold": 0.1, "seed": 3,
            "status": FAILED, "ending": "gate FAILED: ...", "rows": rows, "machine": "AMD EPYC",
            "cpu_affinity": "CPUs 1", "confirmed": True, "command": "python -m perf.gate HEAD~1 --devices cpu,gpu "
                                                                    "--seed 3"}


@pytest.mark.parametrize("verdict_of", [
    lambda solver, device: "regression",  # everything slower: the flagged table is cut short
    lambda solver, device: "error" if solver.startswith("tf") else "new" if solver.startswith("torch") else "clear",
], ids=["all-regressed", "errors-new-and-skipped"])
def test_the_full_suite_fits_in_forty_lines_above_the_table_of_every_verdict(verdict_of):
    report = full_registry_report(verdict_of)
    text = gate_summary(report)
    assert len(above_details(text)) <= MOST_LINES_ABOVE_DETAILS, text
    # Every benchmark is still in the collapsed table.
    table = text.split("<details>")[1]
    assert all(f"| `{row['benchmark']}` |" in table for row in report["rows"])
    assert "Machine: AMD EPYC; workers on CPUs 1." in text
    assert "Replay it locally: `python -m perf.gate HEAD~1 --devices cpu,gpu --seed 3`" in text


def test_a_flagged_benchmark_says_its_ratio_interval_passes_and_confirmation():
    report = full_registry_report(lambda solver, device: "regression" if solver == "numpy_lean" else "clear")
    lines = above_details(gate_summary(report))
    assert "Flagged (2):" in lines
    assert ("| `numpy_lean-cpu-n1000` | REGRESSION | 1.310 | [1.220, 1.410] | 6 | confirmed alone; the screen's: 1.300 "
            "[1.200, 1.400], 5 passes |") in lines
    errors = full_registry_report(lambda solver, device: "error" if solver == "numpy_lean" else "clear")
    assert "| `numpy_lean-cpu-n1000` | ERROR | — | — | — | ValueError: broken |" in gate_summary(errors)
    skipped = next(line for line in lines if line.startswith("- SKIPPED (numpy_loop does not run on gpu)"))
    assert skipped == "- SKIPPED (numpy_loop does not run on gpu): `numpy_loop-gpu-n1000`, `numpy_loop-gpu-n100000`"


# The gate's own command, on fake workers ---------------------------------------------------------------------------


def gate_with_fakes(monkeypatch, *options):
    fake_workers_for_every_version(monkeypatch, cpu_only("numpy_loop", "numpy_lean"), lambda solver, label, index: 1e-4)
    return main([".", ".", "--solvers", "numpy_lean", "--passes", "2", "--no-confirm", "--seed", "4", *options])


def test_the_gate_writes_summary_and_appends_the_same_to_github_step_summary(monkeypatch, tmp_path, capsys):
    page = tmp_path / "step_summary.md"
    page.write_text("an earlier step's summary\n")
    monkeypatch.setenv(SUMMARY_VARIABLE, str(page))
    summary, report = tmp_path / "summary.md", tmp_path / "gate.json"
    status = gate_with_fakes(monkeypatch, "--summary", str(summary), "--json", str(report))
    saved = json.loads(report.read_text())
    written = summary.read_text()
    assert status == PASSED and written == gate_summary(saved) + "\n"
    assert page.read_text() == "an earlier step's summary\n" + written  # appended, not overwritten
    assert written.startswith("**gate passed: 2 clear** (exit 0:")
    assert saved["command"] == (f"python -m perf.gate . . --solvers numpy_lean --passes 2 --no-confirm --json {report} "
                                "--seed 4")
    assert "Replay it locally: `python -m perf.gate . . --solvers numpy_lean" in written
    assert "| `numpy_lean-cpu-n100000` | CLEAR |" in written
    monkeypatch.delenv(SUMMARY_VARIABLE)
    gate_with_fakes(monkeypatch, "--summary", str(summary))  # --summary is written afresh
    assert summary.read_text().count("**gate passed") == 1


def test_a_gate_that_measured_nothing_on_a_device_still_writes_what_it_could_not_measure(monkeypatch, tmp_path):
    summary = tmp_path / "summary.md"
    status = gate_with_fakes(monkeypatch, "--devices", "gpu", "--summary", str(summary))
    lines = summary.read_text().splitlines()
    assert status == NOT_MEASURED and lines[0] == (
        "**gate NOT MEASURED: no benchmark was timed on both versions: nothing measured on gpu (skipped: numpy_lean "
        "does not run on gpu)** (exit 10: it could not measure what it was asked, which is never a pass)")
    assert any(line.startswith("- SKIPPED (numpy_lean does not run on gpu)") for line in lines)


def test_a_revision_that_does_not_exist_writes_its_summary_as_the_usage_error_it_is(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(SUMMARY_VARIABLE, str(tmp_path / "page.md"))
    assert main(["no-such-revision", "--solvers", "numpy_lean", "--sizes", "1000"]) == USAGE_ERROR
    lines = (tmp_path / "page.md").read_text().splitlines()
    # Exit 2 is a mistake in the command, not NOT MEASURED (exit 10): the summary says which.
    assert lines[0].startswith("**gate usage error: 'no-such-revision' is neither a git revision of this repository")
    assert lines[0].endswith("(exit 2: a usage error, reported before anything was timed)")
    assert "Nothing was timed: the gate could not measure solvers numpy_lean on cpu at n = 1,000." in lines
    assert "<details>" not in "\n".join(lines)
    assert "is neither a git revision" in capsys.readouterr().err


def test_a_mistake_in_the_command_is_a_usage_error_that_still_writes_its_summary(monkeypatch, tmp_path, capsys):
    started = fake_workers_for_every_version(monkeypatch, cpu_only("numpy_lean"), lambda solver, label, index: 1e-4)
    summary = tmp_path / "summary.md"
    with pytest.raises(SystemExit) as stopped:
        main([".", ".", "--devices", "cpuu", "--summary", str(summary)])
    assert stopped.value.code == USAGE_ERROR and not started
    assert "--devices: 'cpuu' is not a list of cpu, gpu" in capsys.readouterr().err
    lines = summary.read_text().splitlines()
    assert lines[0] == ("**gate usage error: --devices: 'cpuu' is not a list of cpu, gpu** (exit 2: a usage error, "
                        "reported before anything was timed)")
    assert "Replay it locally: `python -m perf.gate . . --devices cpuu`" in lines


@pytest.mark.parametrize("where", ["--summary", SUMMARY_VARIABLE])
def test_a_summary_that_cannot_be_written_is_a_usage_error_naming_it_before_anything_is_timed(monkeypatch, tmp_path,
                                                                                           capsys, where):
    started = fake_workers_for_every_version(monkeypatch, cpu_only("numpy_lean"), lambda solver, label, index: 1e-4)
    target = tmp_path / "no-such-folder" / "summary.md"
    options = ["--summary", str(target)] if where == "--summary" else []
    if where == SUMMARY_VARIABLE:
        monkeypatch.setenv(SUMMARY_VARIABLE, str(target))
    with pytest.raises(SystemExit) as stopped:
        main([".", ".", "--solvers", "numpy_lean", *options])
    err = capsys.readouterr().err
    assert stopped.value.code == USAGE_ERROR and not started
    assert f"python -m perf.gate: error: cannot write the summary to {target}: No such file or directory" in err


# A comparison of saved runs ----------------------------------------------------------------------------------------


def test_a_comparisons_summary_gives_its_ending_its_verdict_table_then_the_answer(tmp_path):
    then = document([bench("test_fssgd[tf1_while_loop-cpu-n1000]", info(spread(1.0))),
                     bench("test_fssgd[numpy_lean-cpu-n1000]", {**info(spread(0.4)), "solver": "numpy_lean"})])
    now = [bench("test_fssgd[tf1_while_loop-cpu-n1000]", info(spread(1.5))),
           bench("test_fssgd[numpy_lean-cpu-n1000]", {**info(spread(0.4)), "solver": "numpy_lean"})]
    found = comparison(then, "0001_run.json", FSSGD, now, 0.10)
    lines = comparison_summary(*run_ending([found], 0.10), [found],
                               ["Per step, the answer.", "  numpy_lean  1.0"]).splitlines()
    assert lines[0] == ("**--benchmark-compare FAILED**: --fail-on-slower=10%: slower by more than that: "
                        "tf1_while_loop-cpu-n1000 (1.50x) (exit 1: slower past --fail-on-slower, an error the gate "
                        "found under --decide, a failed test or pytest-benchmark's --benchmark-compare-fail)")
    assert lines[2].startswith("Against 0001_run.json: per benchmark, × numpy_loop then and now")
    table = lines.index("| benchmark | then | now | change (interval) | verdict |")
    assert lines[table + 2].startswith("| `tf1_while_loop-cpu-n1000` | 1 | 1.5 | 1.500 (") and lines[table + 2].endswith(
        "| SLOWER |")
    assert lines[table + 3].endswith("| UNCHANGED |") and "1 SLOWER, 1 UNCHANGED" in lines
    assert not any(line.startswith("tf1_while_loop-cpu-n1000  ") for line in lines)  # the text table is not repeated
    answer = lines.index("```text")
    assert lines[answer - 2] == "<details><summary>The answer for this run, as the terminal prints it</summary>"
    assert lines[answer + 1:answer + 4] == ["Per step, the answer.", "  numpy_lean  1.0", "```"]
    assert lines[-1] == "</details>"


def test_a_comparison_that_loaded_no_saved_run_says_so_first():
    assert comparison_summary(*run_ending([], None), [], []).splitlines() == [
        "**--benchmark-compare NOT MEASURED**: --benchmark-compare: pytest-benchmark loaded no saved run to compare "
        "with (exit 10: it could not judge what it was asked, which is never a pass)"]


# The examples in the docs are this writer's, from real results ------------------------------------------------------


def comparison_example(solvers=("numpy_loop", "tf1_feed_dict", "tf1_while_loop")) -> str:
    """docs/usage.md's example: two saved runs of the calibration, three of their solvers."""
    folder = ROOT / "docs" / "results" / "compare-calibration" / "2026-12-06" / "final-quiet"
    then, now = (json.loads((folder / name).read_text()) for name in ("run-00.json", "run-01.json"))
    benchmarks = [entry for entry in now["benchmarks"] if entry["extra_info"].get("solver") in solvers]
    fssgd = now["machine_info"]["fssgd"]
    found = comparison(then, "run-00.json", fssgd, benchmarks, 0.10, gate_line=gate_line)
    return comparison_summary(*run_ending([found], None), [found], summary_lines(benchmarks, setting(fssgd), free_on(fssgd)))


@pytest.mark.parametrize("doc, example", [
    ("gate.md", lambda: gate_summary(json.loads(REAL_GATE.read_text()))),
    ("usage.md", comparison_example),
])
def test_the_docs_show_the_summary_as_this_writer_renders_it_from_real_results(doc, example):
    text = example()
    assert f"````markdown\n{text}````\n" in (ROOT / "docs" / doc).read_text(), f"docs/{doc}: update its example to\n{text}"
