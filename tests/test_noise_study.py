"""The research tools' noise study (perf/research/noise_study.py) and its noisy neighbour: how they count, replay and
resample the gate's passes."""

import json
import math
import os
import random
import statistics
import subprocess
import time
from collections import Counter

import pytest

from perf.gate import stages
from perf.judge.rules import judged
from perf.measure.schedule import MAX_TRIALS
from perf.research.neighbour import noisy_neighbour


def test_the_noisy_neighbour_loads_another_cpu_and_stops_with_its_block():
    worker_cpu = max(os.sched_getaffinity(0))
    with noisy_neighbour(worker_cpu) as cpus:
        assert worker_cpu not in cpus or cpus == [worker_cpu]
        children = subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True, text=True).stdout.split()
        assert children
    time.sleep(0.2)
    assert not set(children) & set(subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True,
                                                   text=True).stdout.split())


def test_the_passes_the_noise_study_says_a_slowdown_needs_catch_it_with_the_gates_power():
    from perf.judge.rules import FALSE_ALARM_RATE, POWER
    from perf.research.noise_study import passes_needed

    spread, benchmarks, rng = 0.05, 36, random.Random(7)
    needed = passes_needed(spread, 0.10, benchmarks)

    def caught(passes):
        draws = [[rng.gauss(math.log(1.1), spread) for _ in range(passes)] for _ in range(400)]
        return sum(judged(values, 0.10, FALSE_ALARM_RATE / benchmarks).verdict == "regression"
                   for values in draws) / len(draws)

    assert 8 < needed < 16
    assert caught(needed) >= POWER - 0.03
    assert caught(needed // 2) < POWER - 0.1


def test_the_noise_study_counts_each_comparison_by_what_it_tests_and_takes_a_pass_spread_from_all_its_passes():
    from perf.research.noise_study import pass_spreads, tallies

    values = [0.03, -0.05, 0.01, 0.06, -0.02, 0.0, 0.04, -0.07]
    row = {**judged(values, 0.10, 0.05 / 36).saved(), "benchmark": "numpy_loop-cpu-n1000"}
    flagged = {"verdict": "regression", "ratio": 1.2, "passes": 8}
    repeat = {"neighbour": True,
              "screening": {"A/A-1": {"numpy_loop-cpu-n1000": row, "tf1_callable-cpu-n1000": flagged},
                            "code: an extra fetch every Session.run": {"tf1_feed_dict-cpu-n1000": flagged,
                                                                       "numpy_loop-cpu-n1000": flagged},
                            "x1.1": {"torch_eager-cpu-n1000": {"verdict": "skipped"}}},
              "confirmation": {"A/A-1": {"tf1_callable-cpu-n1000": {"verdict": "clear"}},
                               "code: an extra fetch every Session.run": {"tf1_feed_dict-cpu-n1000": flagged,
                                                                          "numpy_loop-cpu-n1000": flagged}},
              "values": {"A/A-1": {"numpy_loop-cpu-n1000": values}, "x1.1": {"numpy_loop-cpu-n1000": [0.1, 0.5]}}}
    found = tallies([repeat])
    assert found["identical copies (A/A), noisy neighbour"]["tf1_callable-cpu-n1000"] == [1, 1, 0, 0, 0]
    assert found["code: an extra fetch every Session.run, noisy neighbour"]["tf1_feed_dict-cpu-n1000"][:3] == [1, 1, 1]
    assert found["benchmarks a code regression leaves alone, noisy neighbour"]["numpy_loop-cpu-n1000"][:3] == [1, 1, 1]
    assert not any(kind.startswith("slowed") for kind in found)
    assert pass_spreads([repeat])["numpy_loop-cpu-n1000"] == pytest.approx(statistics.stdev(values))


def test_slowed_groups_split_the_solvers_into_copies_each_counted_as_slowed_only_where_it_slows():
    from perf.measure.trials import slowdown_factors
    from perf.research.noise_study import kind_of, slowed_copies

    names = ["numpy_loop", "tf1_feed_dict", "tf1_while_loop", "numba_fused", "jax_step"]
    copies = slowed_copies(1.1, 2, ",".join(names))
    slowed = [slowdown_factors(spec) for _, spec in copies]
    assert [label for label, _ in copies] == ["x1.1 (1 of 2)", "x1.1 (2 of 2)"]
    assert sorted(name for factors in slowed for name in factors) == sorted(names)  # each solver in one group
    assert all(set(factors.values()) == {1.1} for factors in slowed)
    assert slowed_copies(1.25, 1, ",".join(names)) == [("x1.25", "*=1.25")]
    label, spec = copies[0]
    assert kind_of(label, "numpy_loop-cpu-n1000", spec) == "slowed 1.1x, a group of solvers at a time"
    assert kind_of(label, "tf1_feed_dict-cpu-n1000", spec) == "benchmarks a slowdown of other solvers leaves alone"
    assert kind_of("x1.25", "tf1_feed_dict-cpu-n1000", "*=1.25") == "slowed 1.25x"
    assert kind_of("x1.1", "tf1_feed_dict-cpu-n1000") == "slowed 1.1x"  # a repeat from before it kept its factors


def test_a_replay_with_the_screens_own_rule_gives_its_verdicts_back_and_a_smaller_first_count_saves_passes():
    from perf.research.noise_study import replayed

    steady = [0.01, -0.01, 0.0, 0.005, -0.005, 0.01, 0.0, -0.01]  # decided (CLEAR) at any count
    slowed = [math.log(1.1) + value for value in steady]  # decided (REGRESSION) at any count
    noisy = [0.3, -0.3, 0.2, -0.2, 0.3, -0.1, 0.25, -0.3, 0.1, -0.2]  # never decided
    rows = {"a-cpu-n1": steady, "b-cpu-n1": noisy}
    repeat = {"neighbour": False, "factors": {"A/A-1": "", "x1.1": "*=1.1"},
              "values": {"A/A-1": rows, "x1.1": {"a-cpu-n1": slowed, "b-cpu-n1": noisy}}, "confirmation": {}}
    repeat["screening"] = {label: {name: {**judged(values[:len(values) if name == "b-cpu-n1" else 8], 0.10, 0.05 / 2).saved(),
                                          "benchmark": name} for name, values in by_name.items()}
                           for label, by_name in repeat["values"].items()}
    again = replayed([repeat], 8)  # the rule the rows were judged with
    assert all(tally[4] == 0 and tally[5] == tally[6] for tally in again.values())  # the rule it ran with: no change
    # The committed repeats were saved when CLEAR was spelt "pass": they replay unchanged too.
    spelt_before = {label: {name: {**row, "verdict": "pass" if row["verdict"] == "clear" else row["verdict"]}
                            for name, row in rows.items()} for label, rows in repeat["screening"].items()}
    assert replayed([{**repeat, "screening": spelt_before}], 8) == again
    sooner = replayed([repeat], 5)
    assert sooner["identical copies (A/A), quiet"][:5] == [2, 0, 0, 1, 0]  # steady CLEAR, noisy INCONCLUSIVE, as before
    assert sooner["identical copies (A/A), quiet"][5:] == [5 + 10, 8 + 10]  # steady stopped at 5; noisy to its end
    assert sooner["slowed 1.1x, quiet"][1] == 1


def test_the_resampled_pools_are_the_identical_copies_passes_each_also_negated():
    from perf.research.noise_study import exchangeable_pools

    repeat = {"neighbour": False, "values": {"A/A-1": {"a-cpu-n1": [0.05, -0.02]}, "A/A-2": {"a-cpu-n1": [0.01]},
                                             "x1.1": {"a-cpu-n1": [0.5, 0.6]}}}
    other = {"neighbour": True, "values": {"A/A-1": {"a-cpu-n1": [0.3]}}}
    pools = exchangeable_pools([repeat, other])
    assert sorted(pools["quiet"]["a-cpu-n1"]) == [-0.05, -0.02, -0.01, 0.01, 0.02, 0.05]  # no slowed copy, no offset
    assert sorted(pools["noisy neighbour"]["a-cpu-n1"]) == [-0.3, 0.3]


def test_resampled_comparisons_follow_the_gates_rule_screen_then_confirmation():
    from perf.research.noise_study import resampled

    def repeat(values):
        return {"neighbour": True, "values": {"A/A-1": {"a-cpu-n1": values, "b-cpu-n1": [0.0, 0.001]}}}

    steady = resampled([repeat([0.01, -0.01, 0.005, -0.005])], 20)["noisy neighbour"]["a-cpu-n1"]
    assert steady[1.0] == [("clear", stages.MIN_PASSES)] * 20
    assert steady[1.1] == [("confirmed", stages.MIN_PASSES)] * 20
    wild = resampled([repeat([1.0, -1.0, 0.5, -0.5])], 5)["noisy neighbour"]["a-cpu-n1"]
    assert wild[1.0] == [("inconclusive", MAX_TRIALS)] * 5


def test_a_slowdown_of_the_threshold_is_seldom_passed_where_the_passes_scatter_widely():
    # The gate looks at a benchmark pass after pass and stops at the first verdict, so the chance that a slowdown of
    # exactly the threshold is "ruled out" adds up over its looks: RULED_OUT is strict enough that a benchmark
    # scattering by 0.1 a pass (about the noisiest seen, docs/results/gate-design.md section 10) is still caught.
    from perf.research.noise_study import resampled

    rng = random.Random(3)
    scatter = [rng.gauss(0, 0.1) for _ in range(3000)]
    repeat = {"neighbour": False, "values": {"A/A-1": {f"b{index}-cpu-n1": scatter for index in range(36)}}}
    found = resampled([repeat], 30, seed=5)["quiet"]  # 36 benchmarks: the gate's level for each is CI's
    outcomes = Counter(outcome for factors in found.values() for outcome, _ in factors[1.1])
    assert outcomes["clear"] / outcomes.total() < 0.02 and outcomes["confirmed"] / outcomes.total() > 0.95


@pytest.mark.e2e
def test_the_noise_study_records_a_repeat_on_real_workers_then_analyzes_replays_and_resamples_it(tmp_path, capsys):
    from perf.research.noise_study import main

    # An identical copy and a copy slowed 4x, far beyond any noise: the copy must be flagged and confirmed, the
    # identical one's passes kept for the spreads, and every later action must read what record wrote.
    out = ["--out", str(tmp_path)]
    assert main(["record", *out, "--solvers", "numpy_lean", "--identical", "1", "--slowdowns", "4", "--passes", "3",
                 "--seed", "3"]) == 0
    repeat = json.loads((tmp_path / "repeat-00.json").read_text())
    slowed = repeat["screening"]["x4"]
    assert set(slowed) == {"numpy_lean-cpu-n1000", "numpy_lean-cpu-n100000"}
    assert all(row["verdict"] == "regression" and row["passes"] == 3 for row in slowed.values())
    assert all(row["verdict"] == "regression" for row in repeat["confirmation"]["x4"].values())
    assert all(len(values) == 3 for values in repeat["values"]["A/A-1"].values())
    assert "slowed 4x, quiet: 2 / 2 of 2" in capsys.readouterr().out
    assert main(["replay", *out, "--min-passes", "2"]) == 0
    assert "replayed with 2 passes before a benchmark may stop" in capsys.readouterr().out
    assert main(["resample", *out, "--draws", "5"]) == 0
    assert "resampled: 5 comparisons of each benchmark" in capsys.readouterr().out
