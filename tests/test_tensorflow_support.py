"""TensorFlow's settings as the suite takes them: thread counts it can run, and a start-up without its log lines."""

import os
import subprocess
import sys

import pytest

from helpers import ROOT

from perf.measure import environment
from solvers import packages, tensorflow_support


@pytest.mark.parametrize("text, count", [("0", 0), ("1", 1), ("16", 16), ("1024", 1024)])
def test_thread_counts_tensorflow_can_take(text, count):
    assert tensorflow_support.thread_count(text) == count


@pytest.mark.parametrize("text", ["-3", "-1", "1025", "100000", "1.5", "two", ""])
def test_other_thread_counts_are_refused_with_what_is_allowed(text):
    with pytest.raises(ValueError, match=r"expected 0 \(TensorFlow's defaults\) or a thread count from 1 to 1024"):
        tensorflow_support.thread_count(text)


def test_the_default_is_tensorflows_own_and_a_bad_variable_names_itself(monkeypatch):
    monkeypatch.delenv(tensorflow_support.THREADS_VARIABLE, raising=False)
    assert tensorflow_support.threads() == 0
    assert environment.threads_setting(0) == "TF default"
    monkeypatch.setenv(tensorflow_support.THREADS_VARIABLE, "-3")
    with pytest.raises(ValueError, match=f"^{tensorflow_support.THREADS_VARIABLE}: expected 0"):
        tensorflow_support.threads()


def test_only_tensorflows_start_up_lines_are_dropped(capfd):
    with tensorflow_support.startup_noise_dropped():
        os.write(2, b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n")
        os.write(2, b"I0000 00:00:1.0 18098 port.cc:153] oneDNN custom operations are on. You may see ...\n")
        os.write(2, b"E0000 00:00:1.0 18098 something.cc:1] a real error\n")
    assert capfd.readouterr().err == "E0000 00:00:1.0 18098 something.cc:1] a real error\n"


STARTUP_LINES = ("absl::InitializeLog", "oneDNN custom operations")


def stderr_of(code: str, **environment) -> str:
    env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                            env={**env, **environment})
    return result.stderr


@pytest.mark.tensorflow
@pytest.mark.parametrize("level", [None, "3"], ids=["unset", "TF_CPP_MIN_LOG_LEVEL=3"])
def test_solvers_used_from_python_start_tensorflow_quietly(level):
    # The control: this TensorFlow prints them when imported directly, whatever the level.
    raw = stderr_of("import tensorflow", **({"TF_CPP_MIN_LOG_LEVEL": level} if level else {}))
    if not any(line in raw for line in STARTUP_LINES):
        pytest.skip("this TensorFlow prints no start-up lines to quiet")
    ours = stderr_of("import solvers\n"
                     "from solvers.problem import seed_problem\n"
                     "with solvers.get('tf1_feed_dict').prepare(seed_problem(100, 5), 'cpu') as run:\n"
                     "    run()\n", **({"TF_CPP_MIN_LOG_LEVEL": level} if level else {}))
    assert ours == ""


def test_the_onednn_setting_reads_as_the_variable_or_tensorflows_default():
    assert environment.onednn_setting({}) == "TF default"
    assert environment.onednn_setting({"TF_ENABLE_ONEDNN_OPTS": "0"}) == "TF_ENABLE_ONEDNN_OPTS=0"


@pytest.mark.skipif(packages.unavailable_reason("tensorflow") is not None, reason="needs TensorFlow")
@pytest.mark.parametrize("value, enabled", [("0", False), ("1", True)])
def test_what_tensorflow_decided_about_onednn_follows_the_variable(value, enabled):
    # In a fresh process: TensorFlow reads the variable once, when it starts.
    script = "import tensorflow; from solvers import tensorflow_support as t; print(t.onednn_enabled())"
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "TF_ENABLE_ONEDNN_OPTS": value, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert result.stdout.strip().splitlines()[-1] == str(enabled), result.stderr[-500:]
