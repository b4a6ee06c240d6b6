"""perf.report: the overhead model, crossovers, and the report from synthetic and real pytest-benchmark JSON."""

import os
import re
import subprocess
import sys
import types

import pytest

from helpers import ROOT, benchmark_entry, result_document
from helpers import write_run as write
from perf import storage
from perf.report import analysis, markdown, studies
from perf.report.__main__ import main
from perf.report.rows import rows_of


def linear_run(lines, sizes=(100, 1_000, 10_000, 100_000), device="cpu"):
    """Benchmarks whose per-step time is exactly α + β·n, for {solver: (α µs, β ns)}, paired with numpy_loop's."""
    def at(solver, n):
        alpha, beta = lines[solver]
        return alpha + beta * 1e-3 * n

    return [benchmark_entry(solver, device, n, at(solver, n),
                            ratio=at(solver, n) / at("numpy_loop", n) if solver != "numpy_loop" else None)
            for solver in lines for n in sizes]


SEED_LINES = {"numpy_loop": (2.0, 10.0), "tf1_feed_dict": (250.0, 12.0), "tf1_while_loop": (100.0, 1.0)}


def test_fit_recovers_alpha_and_beta():
    sizes = [100, 1_000, 10_000, 100_000, 1_000_000]
    model = analysis.fit_overhead(sizes, [120.0 + 4e-3 * n for n in sizes])
    assert model.alpha_us == pytest.approx(120.0, rel=1e-6)
    assert model.beta_ns == pytest.approx(4.0, rel=1e-6)
    assert model.max_relative_residual < 1e-9


def test_fit_keeps_alpha_when_the_largest_size_is_noisy():
    # With 1/t² weights a 5% error at n = 1e6 must not swamp the 50 µs fixed cost.
    sizes = [100, 1_000, 10_000, 100_000, 1_000_000]
    times = [50.0 + 2e-3 * n for n in sizes]
    times[-1] *= 1.05
    assert analysis.fit_overhead(sizes, times).alpha_us == pytest.approx(50.0, rel=0.05)


def test_fit_needs_two_sizes():
    with pytest.raises(ValueError, match="two distinct sizes"):
        analysis.fit_overhead([1_000, 1_000], [10.0, 11.0])


def test_crossover_in_range():
    numpy_loop = analysis.Model(2.0, 10.0, 0.0, (100, 1_000_000))
    while_loop = analysis.Model(100.0, 1.0, 0.0, (100, 1_000_000))
    crossover, where = analysis.crossover_n(while_loop, numpy_loop, 100, 1_000_000)
    assert crossover == pytest.approx(98.0 * 1e3 / 9.0)
    assert where == "in range"


def test_crossover_extrapolated_just_outside_the_sizes():
    numpy_loop = analysis.Model(2.0, 10.0, 0.0, (1_000, 100_000))
    slow_start = analysis.Model(3_000.0, 1.0, 0.0, (1_000, 100_000))  # meets numpy_loop near n = 333,000
    crossover, where = analysis.crossover_n(slow_start, numpy_loop, 1_000, 100_000)
    assert crossover == pytest.approx(2_998.0 * 1e3 / 9.0)
    assert where == "extrapolated"


@pytest.mark.parametrize("alpha, beta", [(250.0, 12.0), (100.0, 10.0), (1e7, 1.0)],
                         ids=["diverging", "parallel", "far-outside"])
def test_no_crossover_in_range(alpha, beta):
    numpy_loop = analysis.Model(2.0, 10.0, 0.0, (100, 1_000_000))
    assert analysis.crossover_n(analysis.Model(alpha, beta, 0.0, (100, 1_000_000)), numpy_loop, 100, 1_000_000) == (
        None, "none in range")


def test_report_end_to_end(tmp_path, capsys):
    run = write(tmp_path / "run.json", result_document(linear_run(SEED_LINES)))
    out = tmp_path / "out"
    assert main([str(run), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "TF 2.21.0 · cpu · full" in text
    row = re.search(r"\| `tf1_while_loop` \| cpu \| 100 \| 1.00 \| 100–100,000 \(4\) \| 0.0% \| 10,889 "
                    r"\| ≈([\d,]+) \(faster above; interpolated between 10,000 and 100,000\) "
                    r"\| `tf1_while_loop` faster above n\* \|", text)
    # The measured n* interpolates log-log between 1e4 and 1e5, close to the exact crossing of the lines.
    assert row and float(row[1].replace(",", "")) == pytest.approx(10_889, rel=0.03)
    assert "| `tf1_feed_dict` | cpu | 250 | 12.0 |" in text and "slower throughout" in text
    # The per-size table: the paired ratio to numpy_loop with its interval, e.g. (100 + 1) / (2 + 10) at n = 1,000.
    assert "| `tf1_while_loop` | 101 | 0.0500 | 8.42 (8.00 to 8.84) | 1,000 | 5 | 5 |" in text
    assert "| solver | µs / step | setup s | × numpy_loop | steps | trials | rounds |" in text
    # A part of the step is a ratio (with its interval) times numpy_loop's µs per step: 8.42 × 12 = 101.
    assert re.search(r"\| arithmetic \| 101 \((95.9|96.0) to 106\) \| 39% \| `tf1_while_loop` \|", text)  # 95.95
    assert str(out / "report.md") in capsys.readouterr().out
    pytest.importorskip("matplotlib")
    assert (out / "per_step_vs_n.png").stat().st_size > 0
    assert (out / "per_step_n1000.png").stat().st_size > 0
    assert "![per-step time vs n](per_step_vs_n.png)" in text


def test_step_decomposition_from_whichever_solvers_ran(tmp_path):
    # Ratios to numpy_loop (10 µs a step) with exact intervals, so each part is exact too.
    ratios = {"tf1_feed_dict": 30.0, "tf1_feed_dict_no_loss": 22.0, "tf1_constant": 20.0,
              "tf1_constant_no_loss": 13.0, "tf1_while_loop": 1.0, "tf1_callable": 18.0}
    entries = [benchmark_entry(solver, "cpu", 1_000, 10.0 * ratio, ratio=ratio, spread=0.0)
               for solver, ratio in ratios.items()]
    rows = {row.key: row for row in rows_of(entries + [benchmark_entry("numpy_loop", "cpu", 1_000, 10.0)])[0]}
    parts = [(part, value[:3], derived) for part, value, derived in analysis.step_parts(rows, "cpu", 1_000)]
    assert parts == [
        ("loss fetch", (80.0, 80.0, 80.0), "tf1_feed_dict − tf1_feed_dict_no_loss"),
        ("feed_dict copies", (100.0, 100.0, 100.0), "tf1_feed_dict − tf1_constant"),
        ("Session.run call", (120.0, 120.0, 120.0), "tf1_constant_no_loss − tf1_while_loop"),
        ("arithmetic", (10.0, 10.0, 10.0), "tf1_while_loop"),
        ("remainder: the parts interact", (-10.0, -10.0, -10.0), "whole − the parts above"),
    ]
    # The parts and the remainder add up to the whole step, whatever the solvers' ratios.
    assert sum(value[0] for _, value, _ in parts) == pytest.approx(analysis.whole_step(rows, "cpu", 1_000).value)
    del rows["tf1_constant", "cpu", 1_000]
    assert [part for part, *_ in analysis.step_parts(rows, "cpu", 1_000)] == [
        "loss fetch", "Session.run call", "arithmetic"]


def test_plots_asked_for_without_matplotlib_are_an_error_naming_the_plot_extra_and_nothing_is_written(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    run = write(tmp_path / "run.json", result_document(linear_run(SEED_LINES)))
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").write_text("the committed report")
    assert main([str(run), "--out", str(out)]) == 2
    assert "plots need matplotlib, which is not installed: pip install -e '.[plot]'" in capsys.readouterr().err
    assert (out / "report.md").read_text() == "the committed report"
    # Asked for tables only, it needs no matplotlib.
    assert main([str(run), "--out", str(out), "--no-plots"]) == 0
    assert "Plots" not in (out / "report.md").read_text()


def test_history_without_its_library_or_matplotlib_is_an_error_naming_its_extra(tmp_path, monkeypatch, capsys):
    (tmp_path / "runs").mkdir()
    write(tmp_path / "runs" / "0001_run.json", result_document(linear_run(SEED_LINES)))
    for module in ("asv", "asv.step_detect"):
        monkeypatch.setitem(sys.modules, module, None)
    assert main(["--history", str(tmp_path / "runs"), "--out", str(tmp_path / "out")]) == 2
    assert "--history needs asv's step detection, which is not installed: pip install -e '.[history]'" in (
        capsys.readouterr().err)
    # asv there, matplotlib not: the history's plots are asked for by default, as the report's.
    for module in ("asv", "asv.step_detect"):
        monkeypatch.setitem(sys.modules, module, types.ModuleType(module))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["--history", str(tmp_path / "runs"), "--out", str(tmp_path / "out")]) == 2
    assert "plots need matplotlib, which is not installed: pip install -e '.[plot]'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_no_plots_means_tables_only(tmp_path, capsys):
    run = write(tmp_path / "run.json", result_document(linear_run(SEED_LINES)))
    assert main([str(run), "--out", str(tmp_path / "out"), "--no-plots"]) == 0
    assert "plot:" not in capsys.readouterr().out
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["report.md"]
    assert "Plots" not in (tmp_path / "out" / "report.md").read_text()


def test_two_runs_side_by_side_with_ratios(tmp_path):
    first = write(tmp_path / "a.json", result_document(linear_run(SEED_LINES), tensorflow="2.20.0"))
    faster = {solver: (alpha / 2, beta) for solver, (alpha, beta) in SEED_LINES.items()}
    second = write(tmp_path / "b.json", result_document(linear_run(faster), tensorflow="2.21.0"))
    out = tmp_path / "out"
    assert main([str(first), str(second), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "**A**: TF 2.20.0 · cpu · full" in text and "**B**: TF 2.21.0 · cpu · full" in text
    assert "| solver | device | n | A µs/step | B µs/step | B/A |" in text
    assert "| `tf1_feed_dict` | cpu | 100 | 251 | 126 | 0.502 |" in text
    # The paired ratios of A and B, intervals ± 5%: (250 + 1.2) / (2 + 1) against (125 + 1.2) / (1 + 1) at n = 100.
    assert "| `tf1_feed_dict` | cpu | 100 | 83.7 (79.5 to 87.9) | 63.1 (59.9 to 66.3) | 1.327 | **no** |" in text
    # At n = 1e5: 1,450 / 1,002 against 1,325 / 1,001, whose intervals overlap.
    assert "| `tf1_feed_dict` | cpu | 100,000 | 1.45 (1.37 to 1.52) | 1.32 (1.26 to 1.39) | 1.093 | yes |" in text


def test_a_folder_means_its_newest_json(tmp_path):
    storage = tmp_path / ".benchmarks" / "numpy-only" / "Linux-CPython-3.11-64bit"
    storage.mkdir(parents=True)
    old = write(storage / "0001_old.json", result_document(linear_run(SEED_LINES), tensorflow="2.19.0"))
    new = write(storage / "0002_new.json", result_document(linear_run(SEED_LINES), tensorflow="2.21.0"))
    os.utime(old, (1e9, 1e9))  # saved long ago
    before = {path: path.read_bytes() for path in (old, new)}
    out = tmp_path / "reports"
    assert main([str(tmp_path / ".benchmarks"), "--out", str(out)]) == 0
    assert "TF 2.21.0" in (out / "report.md").read_text()
    assert {path: path.read_bytes() for path in storage.iterdir()} == before  # storage untouched


def test_refuses_to_write_into_the_results_folder(tmp_path, capsys):
    storage = tmp_path / ".benchmarks"
    storage.mkdir()
    write(storage / "0001_run.json", result_document(linear_run(SEED_LINES)))
    assert main([str(storage), "--out", str(storage / "reports")]) == 2
    assert "inside the results folder" in capsys.readouterr().err
    assert sorted(path.name for path in storage.iterdir()) == ["0001_run.json"]


def test_bad_files_are_named_and_the_others_still_reported(tmp_path, capsys):
    good = write(tmp_path / "good.json", result_document(linear_run(SEED_LINES)))
    truncated = tmp_path / "truncated.json"
    truncated.write_text(good.read_text()[:200])
    foreign = write(tmp_path / "foreign.json", {"hello": "world"})
    missing = tmp_path / "missing.json"
    assert main([str(truncated), str(good), str(foreign), str(missing), "--out", str(tmp_path / "out")]) == 0
    warnings = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[1] for line in warnings] == [str(truncated), str(foreign), str(missing)]
    assert "not valid JSON" in warnings[0] and "not a pytest-benchmark saved run" in warnings[1]
    assert "TF 2.21.0" in (tmp_path / "out" / "report.md").read_text()


def test_benchmarks_without_timings_are_skipped_with_a_note(tmp_path, capsys):
    entries = linear_run(SEED_LINES)
    del entries[0]["extra_info"]["trial_medians_s"]  # as under --benchmark-disable
    run = write(tmp_path / "run.json", result_document(entries))
    assert main([str(run), "--out", str(tmp_path / "out")]) == 0
    note = "test_fssgd[numpy_loop-cpu-n100]: no timed trials (run with --benchmark-disable, or saved before trials), skipped"
    assert note in capsys.readouterr().err
    assert note in (tmp_path / "out" / "report.md").read_text()


def test_nothing_usable_exits_2_without_a_traceback(tmp_path):
    disabled = [benchmark_entry("numpy_loop", "cpu", 1_000, 1.0)]
    del disabled[0]["extra_info"]["trial_medians_s"]
    empty = write(tmp_path / "disabled.json", result_document(disabled))
    (tmp_path / "garbage.json").write_bytes(b"\x00\xff not json")
    result = subprocess.run(
        [sys.executable, "-m", "perf.report", str(empty), str(tmp_path / "garbage.json"), str(tmp_path / "nope"),
         "--out", str(tmp_path / "out")],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "error: no usable pytest-benchmark result" in result.stderr
    assert str(empty) in result.stderr and "garbage.json" in result.stderr
    assert not (tmp_path / "out").exists()


def test_unwritable_output_folder_exits_2(tmp_path, capsys):
    run = write(tmp_path / "run.json", result_document(linear_run(SEED_LINES)))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main([str(run), "--out", str(blocker / "reports")]) == 2
    assert "cannot write the report" in capsys.readouterr().err


def test_report_on_a_real_quick_run(run_suite, tmp_path):
    results = tmp_path / "quick.json"
    outcome = run_suite(str(ROOT / "perf"), "--solvers", "numpy_loop", "--devices", "cpu", f"--benchmark-json={results}")
    outcome.assert_outcomes(passed=2)
    out = tmp_path / "report"
    assert main([str(results), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "· cpu · quick" in text
    assert "| `numpy_loop` | cpu |" in text  # the model, fitted over the quick profile's two sizes
    assert "**cpu, n = 1,000**" in text and "**cpu, n = 100,000**" in text


def study_entry(test, solver, device, extra, median_s, rounds=5):
    """One benchmark of a study beyond the per-step tables, as perf/measure records it."""
    return {
        "group": test, "name": f"{test}[{solver}-{device}]", "param": f"{solver}-{device}",
        "fullname": f"perf/{test}.py::{test}[{solver}-{device}]",
        "extra_info": {"solver": solver, "device": device, "device_name": "Test CPU", "n": 1_000, "dtype": "float32",
                       "tensorflow": "2.21.0", "numpy": "2.4.6", "trial_medians_s": [median_s], **extra},
        "stats": {"median": median_s, "iqr": 0.0, "rounds": rounds, "data": [median_s] * rounds},
    }


def sweep_run(lines, counts=(10, 100, 1_000, 10_000)):
    """test_iterations benchmarks whose run(K) takes per-call + K·per-iteration and whose first run(K) takes
    compile s more, for {solver: (setup s, compile s, per-call µs, per-iteration µs)}."""
    entries = []
    for solver, (setup_s, compile_s, per_call_us, per_iteration_us) in lines.items():
        for iterations in counts:
            median_s = (per_call_us + iterations * per_iteration_us) * 1e-6
            entries.append(study_entry("test_iterations", solver, "cpu", {
                "figure": "iteration_sweep", "iterations": iterations, "setup_s": setup_s,
                "first_run_s": median_s + compile_s}, median_s))
    return entries


def accuracy_run(rows):
    """test_time_to_accuracy benchmarks for {solver: (x scaling, lr, dtype, iterations, wall s)}."""
    return [study_entry("test_time_to_accuracy", solver, "cpu", {
        "figure": "time_to_accuracy", "x_scaling": scaling, "lr": lr, "dtype": dtype, "iterations": iterations,
        "setup_s": 0.01,
        "time_to_accuracy": {"target": 1e-3, "iterations": iterations, "reached": True, "error": 9e-4}}, wall_s)
        for solver, (scaling, lr, dtype, iterations, wall_s) in rows.items()]


SWEEP_LINES = {"tf1_feed_dict": (0.05, 0.0, 150.0, 300.0), "tf2_function_xla": (0.4, 0.2, 80.0, 2.0)}


def test_sweep_fit_separates_setup_per_call_and_per_iteration():
    fits = studies.fit_sweep(rows_of(sweep_run(SWEEP_LINES))[0])
    xla = fits["tf2_function_xla", "cpu"]
    assert (xla.setup_s, xla.step_counts) == (0.4, (10, 100, 1_000, 10_000))
    assert xla.first_run_extra_s == pytest.approx(0.2, rel=1e-6)
    assert xla.per_call_us == pytest.approx(80.0, rel=1e-6)
    assert xla.per_step_us == pytest.approx(2.0, rel=1e-6)
    # The totals' intercept: setup, the compile for a new K, and one call's fixed cost.
    assert xla.one_off_s == pytest.approx(0.4 + 0.2 + 80e-6, rel=1e-6)
    assert xla.setup_in_steps == pytest.approx(200_000)
    assert fits["tf1_feed_dict", "cpu"].per_step_us == pytest.approx(300.0, rel=1e-6)


def test_studies_alone_make_a_report_without_the_per_size_sections(tmp_path):
    accuracy = {"numpy_loop": ("raw", 1e-4, "float64", 137_957, 2.0),
                "numpy_standardized": ("standardized", 0.1, "float64", 31, 0.0002),
                "tf1_while_loop": ("raw", 1e-4, "float32", 142_414, 1.5),
                "tf1_while_loop_standardized": ("standardized", 0.1, "float32", 32, 0.0005)}
    run = write(tmp_path / "run.json", result_document(sweep_run(SWEEP_LINES) + accuracy_run(accuracy)))
    out = tmp_path / "out"
    assert main([str(run), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "TF 2.21.0 · cpu · full" in text
    assert "Per size" not in text and "Overhead model" not in text
    xla_row = "| `tf2_function_xla` | cpu | 0.400 | 0.200 | 0.600 | 80.0 | 2.00 | 200,000 | 10–10,000 (4) | 0.0% |"
    assert xla_row in text
    # Raw against the standardized solver of the same dtype: 2.0 / 0.0002 and 1.5 / 0.0005.
    assert "| `numpy_loop` | cpu | raw | 0.0001 | 137,957 | 2.00 | 14.5 | yes (0.0009) | 10,000 |" in text
    assert "| `tf1_while_loop` | cpu | raw | 0.0001 | 142,414 | 1.50 | 10.5 | yes (0.0009) | 3,000 |" in text
    assert "| `numpy_standardized` | cpu | standardized | 0.1 | 31 | 0.000200 | 6.45 | yes (0.0009) | 1.00 |" in text
    pytest.importorskip("matplotlib")
    assert (out / "total_vs_steps.png").stat().st_size > 0
    assert "![total time vs steps](total_vs_steps.png)" in text


def test_studies_stay_out_of_the_per_size_tables_and_runs_without_them_omit_their_sections(tmp_path):
    with_studies = write(tmp_path / "with.json", result_document(linear_run(SEED_LINES) + sweep_run(SWEEP_LINES)))
    without = write(tmp_path / "without.json", result_document(linear_run(SEED_LINES)))
    assert main([str(with_studies), "--out", str(tmp_path / "with")]) == 0
    assert main([str(without), "--out", str(tmp_path / "without")]) == 0
    text = (tmp_path / "with" / "report.md").read_text()
    assert "## Step-count sweep" in text and "a second" not in text
    assert "`tf2_function_xla`" not in text.split("## Step-count sweep")[0]  # no n = 1,000 row from the sweep
    plain = (tmp_path / "without" / "report.md").read_text()
    assert "Step-count sweep" not in plain and "Time to accuracy" not in plain


def test_measured_crossover_interpolates_between_the_sizes_where_the_ratio_crosses_one():
    per_step = {("numpy_loop", 1_000): 10.0, ("numpy_loop", 100_000): 1_000.0, ("tf1_constant", 1_000): 100.0,
                ("tf1_constant", 100_000): 100.0, ("tf1_feed_dict", 1_000): 300.0, ("tf1_feed_dict", 100_000): 2_000.0}
    rows = {row.key: row for row in rows_of([benchmark_entry(solver, "cpu", n, us) for (solver, n), us in per_step.items()])[0]}
    # Ratio 10 at n = 1e3 and 0.1 at n = 1e5: the log-log midpoint, 1e4.
    assert analysis.measured_crossover(rows, "tf1_constant", "cpu") == (
        "≈10,000 (faster above; interpolated between 1,000 and 100,000)")
    assert analysis.measured_crossover(rows, "tf1_feed_dict", "cpu") == "slower at every size"


def test_the_model_table_says_where_its_line_misses_a_crossing_the_measured_ratios_show():
    # Three sizes: tf1_callable's measured ratio crosses 1 between 1e4 and 1e5, but its straight line, bent by the
    # step at 1e5, never meets numpy_loop's there; tf1_constant's line and its ratio cross alike.
    per_step = {("numpy_loop", 1_000): 10.0, ("numpy_loop", 10_000): 100.0, ("numpy_loop", 100_000): 10_000.0,
                ("tf1_callable", 1_000): 40.0, ("tf1_callable", 10_000): 400.0, ("tf1_callable", 100_000): 1_000.0,
                ("tf1_constant", 1_000): 100.0, ("tf1_constant", 10_000): 102.0, ("tf1_constant", 100_000): 120.0}
    rows = {row.key: row for row in rows_of([benchmark_entry(solver, "cpu", n, us) for (solver, n), us in per_step.items()])[0]}
    table = {line.split(" | ")[0]: line for line in markdown.model_table(analysis.fit_models(rows), rows)}
    assert "none in range | ≈" in table["| `tf1_callable`"]
    assert table["| `tf1_callable`"].endswith("slower throughout, by the line alone: the measured ratio crosses |")
    assert "by the line alone" not in table["| `tf1_constant`"]


# What pinning threads does, and the report of the newest saved run.

STEP_RATIOS = {"tf1_feed_dict": 30.0, "tf1_feed_dict_no_loss": 22.0, "tf1_constant": 20.0,
               "tf1_constant_no_loss": 13.0, "tf1_while_loop": 1.0}


def step_run(ratios, reference_us=10.0):
    """The decomposition's solvers at n = 1,000 with exact paired ratios to a numpy_loop of reference_us a step."""
    return [benchmark_entry(solver, "cpu", 1_000, reference_us * ratio, ratio=ratio, spread=0.0)
            for solver, ratio in ratios.items()] + [benchmark_entry("numpy_loop", "cpu", 1_000, reference_us)]


def test_runs_with_different_thread_settings_show_each_part_side_by_side(tmp_path):
    default = write(tmp_path / "default.json", result_document(step_run(STEP_RATIOS), threads=0))
    # Pinned: the Session.run call costs 60 µs more (tf1_constant_no_loss and everything built on it).
    pinned_ratios = {solver: ratio + (6.0 if solver != "tf1_while_loop" else 0.0) for solver, ratio in STEP_RATIOS.items()}
    pinned_document = result_document(step_run(pinned_ratios), threads=1)
    pinned_document["machine_info"]["fssgd"]["onednn_setting"] = "TF_ENABLE_ONEDNN_OPTS=0"
    pinned_document["machine_info"]["fssgd"]["tensorflow"]["onednn"] = False
    pinned = write(tmp_path / "pinned.json", pinned_document)
    out = tmp_path / "out"
    assert main([str(default), str(pinned), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "| µs / step | A: threads TF default | B: threads pinned to 1 |" in text
    assert "| Session.run call | 120 | 180 |" in text
    assert "| feed_dict copies | 100 | 100 |" in text
    assert "| whole step (`tf1_feed_dict`) | 300 | 360 |" in text
    # What each run recorded of oneDNN: nothing in the first (as in runs from before it was recorded).
    assert "threads TF default, oneDNN ?, NumPy" in text
    assert "threads pinned to 1, oneDNN TF_ENABLE_ONEDNN_OPTS=0 (off), NumPy" in text


def saved(folder, name, document, mtime=None):
    """A run saved where pytest-benchmark saves it in this environment's storage folder."""
    path = folder / "Linux-CPython-3.11-64bit" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    write(path, document)
    if mtime:
        os.utime(path, (mtime, mtime))
    return path


def pinned_document(tensorflow="2.21.0"):
    document = result_document(linear_run(SEED_LINES), tensorflow=tensorflow)
    document["machine_info"]["fssgd"]["cpu_affinity"] = "CPUs 0"
    return document


def test_without_arguments_it_finds_the_run_of_the_readmes_one_cpu_flow(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([]) == 2
    assert "no saved run in .benchmarks/: save one with `pytest perf/ --benchmark-autosave`" in capsys.readouterr().err
    # `pytest perf/ --cpu-affinity quiet --benchmark-autosave` saves into the pinned folder alone.
    folder = storage.runs_folder((0,))
    saved(folder, "0001_old.json", pinned_document(tensorflow="2.19.0"), mtime=1e9)
    saved(folder, "0002_new.json", pinned_document())
    assert main(["--no-plots"]) == 0
    report = tmp_path / "reports" / folder.name / "report.md"
    assert f"report: {report.relative_to(tmp_path)}" in capsys.readouterr().out
    assert "TF 2.21.0" in report.read_text() and "0002_new.json" in report.read_text()


def test_without_arguments_each_environment_folder_is_reported_apart(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    saved(storage.runs_folder(), "0001_free.json", result_document(linear_run(SEED_LINES), tensorflow="2.20.0"))
    saved(storage.runs_folder((0,)), "0001_pinned.json", pinned_document())
    (tmp_path / ".benchmarks" / "empty").mkdir()
    assert main(["--no-plots"]) == 0
    free, pinned = (tmp_path / "reports" / folder.name / "report.md"
                    for folder in (storage.runs_folder(), storage.runs_folder((0,))))
    assert sorted(path.parent.name for path in (tmp_path / "reports").glob("*/report.md")) == sorted(
        [storage.runs_folder().name, storage.runs_folder((0,)).name])
    # Never side by side: each report is its own folder's run alone.
    assert "TF 2.20.0" in free.read_text() and "TF 2.21.0" not in free.read_text()
    assert "TF 2.21.0" in pinned.read_text() and "TF 2.20.0" not in pinned.read_text()
    assert "Side by side" not in free.read_text() + pinned.read_text()


def test_answer_into_needs_the_run_named(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(["--answer-into", "README.md"])
    assert stopped.value.code == 2
    assert "--answer-into needs the RUN to take the answer from" in capsys.readouterr().err


def test_every_solver_is_set_against_the_roofline_and_the_algebraic_limit(tmp_path):
    per_step = {"numpy_loop": 12.0, "numba_fused": 0.12, "numpy_affine_limit": 0.015, "tf1_feed_dict": 240.0}
    entries = [benchmark_entry(solver, "cpu", 1_000, us, ratio=None if solver == "numpy_loop" else us / 12.0)
               for solver, us in per_step.items()]
    run = write(tmp_path / "run.json", result_document(entries))
    assert main([str(run), "--out", str(tmp_path / "out"), "--no-plots"]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert "| solver | µs / step | setup s | × numpy_loop | × numba_fused | × numpy_affine_limit |" in text
    assert "| `tf1_feed_dict` | 240 | 0.0500 | 20.0 (19.0 to 21.0) | 2,000 | 16,000 |" in text
    assert "| `numba_fused` | 0.120 | 0.0500 | 0.0100 (0.00950 to 0.0105) | 1.00 | 8.00 |" in text
