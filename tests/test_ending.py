"""How a gate run ends (perf/gate/ending.py): its exit status and last line from made-up verdicts."""

from perf.gate.ending import ending
from perf.judge.outcome import FAILED, NOT_MEASURED, PASSED
from perf.judge.rules import Verdict

DEVICE_OF = {"tf1_while_loop-cpu-n1000": "cpu", "tf1_while_loop-gpu-n1000": "gpu"}
CPU_CLEAR = Verdict("clear", "tf1_while_loop-cpu-n1000", passes=5, ratio=1.0, low=0.98, high=1.02)
GPU_SKIPPED = Verdict("skipped", "tf1_while_loop-gpu-n1000", why="skipped: no GPU visible to TensorFlow")


def test_a_gate_that_measured_every_device_it_was_asked_for_passes_counting_each_verdict_apart():
    new = Verdict("new", "tf1_while_loop-gpu-n1000", why="new")
    assert ending([CPU_CLEAR, new], DEVICE_OF, ["cpu"], False) == (PASSED, "gate passed: 1 clear, 1 new")


def test_a_device_with_nothing_measured_is_not_measured_and_says_why_unless_allowed():
    status, line = ending([CPU_CLEAR, GPU_SKIPPED], DEVICE_OF, ["cpu", "gpu"], False)
    assert status == NOT_MEASURED
    assert line == ("gate NOT MEASURED: nothing measured on gpu (skipped: no GPU visible to TensorFlow); 1 clear, "
                    "1 skipped (--allow-unavailable-devices allows a device with nothing to gate)")
    status, line = ending([CPU_CLEAR, GPU_SKIPPED], DEVICE_OF, ["cpu", "gpu"], True)
    assert status == PASSED and line == ("gate passed: 1 clear, 1 skipped; nothing measured on gpu (skipped: no GPU "
                                         "visible to TensorFlow), allowed by --allow-unavailable-devices")


def test_a_gate_that_measured_nothing_never_passed_even_where_unavailable_devices_are_allowed():
    for rows in ([GPU_SKIPPED], [Verdict("new", "tf1_while_loop-cpu-n1000", why="new")]):
        status, line = ending(rows, DEVICE_OF, sorted({DEVICE_OF[row.benchmark] for row in rows}), True)
        assert status == NOT_MEASURED and line.startswith("gate NOT MEASURED: no benchmark was timed on both versions")


def test_a_failure_fails_and_still_names_the_device_it_could_not_measure():
    regression = Verdict("regression", "tf1_while_loop-cpu-n1000", passes=5, ratio=1.5, low=1.4, high=1.6)
    status, line = ending([regression, GPU_SKIPPED], DEVICE_OF, ["cpu", "gpu"], False)
    assert status == FAILED and line == ("gate FAILED: 1 regression, 1 skipped; nothing measured on gpu (skipped: no "
                                         "GPU visible to TensorFlow)")
    inconclusive = Verdict("inconclusive", "tf1_while_loop-cpu-n1000", passes=5)
    assert ending([inconclusive], DEVICE_OF, ["cpu"], False)[0] == PASSED
