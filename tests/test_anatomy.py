"""The anatomy of a pass (perf/research/anatomy.py): each exchange's seconds by phase, and the tool end to end on the
real suite and gate, shrunk."""

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT

from perf.research import anatomy


def exchange(op, seconds, first=False, **reply):
    return {"op": op, "seconds": seconds, "first": first, "sizing": op == "round" and reply.pop("sizing", False),
            "framework": "tensorflow", "solver": "tf1_feed_dict", **reply}


def test_a_round_splits_into_the_timed_round_the_reference_beside_it_and_the_hand_over():
    assert anatomy.phases_of(exchange("round", 1.0, round_s=0.6, reference_round_s=0.3), suite=True) == pytest.approx(
        {"timed rounds": 0.6, "reference rounds": 0.3, "round hand-over": 0.1})


def test_a_processes_first_answer_waited_on_its_imports():
    assert anatomy.phases_of(exchange("solvers", 4.0, first=True), True) == {"start and imports": 4.0}
    assert anatomy.phases_of(exchange("solvers", 0.1), True) == {"listing": 0.1}
    # The gate's later passes open a trial first: what setup and warm-up do not account for was the imports.
    assert anatomy.phases_of(exchange("open", 5.0, first=True, setup_s=0.5, first_run_s=0.25), False) == pytest.approx(
        {"setup": 0.5, "warm-up": 0.25, "start and imports": 4.25})
    assert anatomy.phases_of(exchange("open", 1.0, setup_s=0.5, first_run_s=None), False) == pytest.approx(
        {"setup": 0.5, "warm-up": 0.0, "open, the rest": 0.5})


def test_the_suites_untimed_sizing_round_is_round_sizing_and_the_gates_rounds_are_timed():
    sizing = exchange("round", 0.2, round_s=0.2, sizing=True)
    assert anatomy.phases_of(sizing, suite=True) == {"round sizing": 0.2}
    assert anatomy.phases_of(dict(sizing), suite=False)["timed rounds"] == 0.2


def test_the_parents_own_is_the_wall_time_no_exchange_accounts_for_and_trials_are_answered_closes():
    rows = [exchange("spawn", 0.01), exchange("solvers", 3.0, first=True),
            exchange("open", 1.0, setup_s=0.5, first_run_s=0.2),
            exchange("round", 0.5, round_s=0.3, reference_round_s=0.1), exchange("close", 0.1, trial=True),
            exchange("exit", 0.3)]
    found = anatomy.anatomy(rows, 6.0, suite=True)
    assert found["phases"][anatomy.PARENT] == pytest.approx(6.0 - 4.91)
    assert sum(found["phases"].values()) == pytest.approx(6.0)
    assert (found["trials"], found["processes"], found["trials_a_minute"]) == (1, 1, 10.0)
    assert found["families"]["tensorflow"]["setup"] == 0.5
    assert found["per_solver"]["tf1_feed_dict"] == {"opened": 1, "setup_s": 0.5, "warm_up_s": 0.2, "warm_ups": 1}


@pytest.mark.e2e
@pytest.mark.parametrize("what, arguments", [
    ("suite", ["perf/test_fssgd.py", "--solvers", "numpy_loop,numpy_lean", "--budget", "0", "-p", "no:cacheprovider"]),
    ("gate", [".", ".", "--solvers", "numpy_lean", "--passes", "2", "--no-confirm", "--sizes", "1000"]),
])
def test_the_tool_accounts_for_every_second_of_a_real_run(tmp_path, outside_xdist, what, arguments):
    environment = {**os.environ, "FSSGD_SHRINK": "1000"}  # the accounting, not the figures
    result = subprocess.run([sys.executable, "-m", "perf.research.anatomy", "--out", str(tmp_path), what, *arguments],
                            cwd=ROOT, env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    found = json.loads((tmp_path / "anatomy.json").read_text())
    phases = found["phases"]
    assert sum(phases.values()) == pytest.approx(found["wall_s"])
    # No exchange counted twice: what the exchanges account for fits within the wall time, the parent's own the rest.
    assert 0 <= phases[anatomy.PARENT] < found["wall_s"]
    assert phases["start and imports"] > 0 and phases["timed rounds"] > 0 and phases["setup"] > 0
    assert (phases["reference rounds"] > 0) == (what == "suite")  # the gate pairs versions, not the reference
    # The suite: 2 solvers x 2 sizes x 5 trials; the gate: 2 passes of one benchmark on two versions.
    assert found["trials"] == (20 if what == "suite" else 4)
    assert "| timed rounds |" in (tmp_path / "anatomy.md").read_text()
