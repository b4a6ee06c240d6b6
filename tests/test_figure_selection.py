"""The studies beyond the per-step tables: only their SOLVERS, and only with --profile full or when named."""

import pytest


@pytest.fixture
def collect(run_perf):
    return lambda *args, modules=None: run_perf(*args, "--collect-only", "-q", modules=modules)


def test_the_quick_profile_deselects_the_studies(collect):
    result = collect()
    assert not [line for line in result.outlines if "test_iterations[" in line or "test_time_to_accuracy[" in line]
    result.stdout.fnmatch_lines(["*deselected*"])


def test_the_full_profile_sweeps_only_the_listed_solvers(collect):
    result = collect("--profile", "full", "--devices", "cpu")
    swept = {line.split("[")[1].split("-")[0] for line in result.outlines if "test_iterations[" in line}
    assert swept == {"numpy_loop", "tf1_feed_dict", "tf1_while_loop", "tf2_function", "tf2_function_xla"}
    result.stdout.fnmatch_lines(["*test_iterations[[]tf1_while_loop-cpu-k01000]",
                                 "*test_time_to_accuracy[[]numpy_standardized-cpu]"])


def test_a_study_named_on_the_command_line_runs_in_any_profile(collect):
    result = collect("--solvers", "numpy_loop,numpy_lean", "--devices", "cpu", modules=["test_time_to_accuracy.py"])
    result.stdout.fnmatch_lines(["*test_time_to_accuracy[[]numpy_loop-cpu]", "*2 tests collected*"])
