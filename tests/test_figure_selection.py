"""The figures beyond the per-step tables: only their SOLVERS, and only with --profile full or when named."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def collect(run_suite):
    return lambda *args: run_suite(*args, "--collect-only", "-q")


def test_the_quick_profile_deselects_the_figures(collect):
    result = collect(str(ROOT / "perf"))
    assert not [line for line in result.outlines if "test_iterations[" in line or "test_time_to_accuracy[" in line]
    result.stdout.fnmatch_lines(["*deselected*"])


def test_the_full_profile_sweeps_only_the_listed_solvers(collect):
    result = collect(str(ROOT / "perf"), "--profile", "full", "--devices", "cpu")
    swept = {line.split("[")[1].split("-")[0] for line in result.outlines if "test_iterations[" in line}
    assert swept == {"numpy_loop", "tf1_feed_dict", "tf1_while_loop", "tf2_function", "tf2_function_xla"}
    result.stdout.fnmatch_lines(["*test_iterations[[]tf1_while_loop-cpu-k01000]",
                                 "*test_time_to_accuracy[[]numpy_standardized-cpu]"])


def test_a_figure_named_on_the_command_line_runs_in_any_profile(collect):
    named = ROOT / "perf" / "test_time_to_accuracy.py"
    result = collect(str(named), "--solvers", "numpy_loop,numpy_lean", "--devices", "cpu")
    result.stdout.fnmatch_lines(["*test_time_to_accuracy[[]numpy_loop-cpu]", "*2 tests collected*"])
