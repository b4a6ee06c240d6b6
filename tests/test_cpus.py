"""--cpu-affinity: the CPU list parsed and checked, the workers pinned to it, and pinned runs kept apart from free ones."""

import itertools
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from perf import storage
from perf.measure import cpus, environment
from perf.measure.pool import Pool
from perf.measure.trials import Measured
from perf.measure.worker import ROOT, Version, Worker
from perf.report.compare import environment_line
from perf.report.summary import setting


@pytest.fixture
def two_cpus(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})


@pytest.mark.parametrize("text, found", [("1", (1,)), ("0,1", (0, 1)), ("0-1", (0, 1)), (" 1 , 0 ", (0, 1))])
def test_a_cpu_list_is_read_as_taskset_reads_it(two_cpus, text, found):
    assert cpus.cpu_list(text) == found


@pytest.mark.parametrize("text, message", [
    ("2", "CPU 2 is not one this process may use; it may use 0-1"),
    ("0-3", "CPU 2-3 are not one this process may use; it may use 0-1"),
    ("1-0", "'1-0' is not a CPU list such as 1, 0,1 or 0-1"),
    ("", "'' is not a CPU list such as 1, 0,1 or 0-1"),
    ("cpu1", "'cpu1' is not a CPU list such as 1, 0,1 or 0-1"),
])
def test_a_cpu_that_is_not_there_or_not_a_list_is_refused_naming_those_there_are(two_cpus, text, message):
    with pytest.raises(ValueError) as raised:
        cpus.cpu_list(text)
    assert str(raised.value) == message


# /proc/interrupts as a 2-vCPU KVM guest shows it: the disk's queue (virtio1-req.0) on CPU 1, the network's spread.
INTERRUPTS = """           CPU0       CPU1       
 26:          0          1  IO-APIC   4-edge      ttyS0
 36:          0      40255 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
 38:          0       1389 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 39:        800          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0
LOC:       7174      16860   Local timer interrupts
"""


def test_the_quiet_cpu_is_the_one_the_disks_interrupts_avoid_else_the_last():
    assert cpus.disk_interrupts(INTERRUPTS) == {0: 0, 1: 40255}
    assert cpus.quiet_cpu([0, 1], cpus.disk_interrupts(INTERRUPTS)) == 0
    assert cpus.quiet_cpu([1], cpus.disk_interrupts(INTERRUPTS)) == 1  # only CPUs this process may use
    on_cpu0 = INTERRUPTS.replace("0      40255", "40255          0")
    assert cpus.quiet_cpu([0, 1], cpus.disk_interrupts(on_cpu0)) == 1
    # No block device named (or no /proc/interrupts): the last CPU, the gate's choice before it read them.
    no_disk = "\n".join(line for line in INTERRUPTS.splitlines() if "req" not in line)
    assert cpus.disk_interrupts(no_disk) == {} and cpus.quiet_cpu([0, 1], {}) == 1
    assert cpus.disk_interrupts("") == {}


@pytest.fixture
def new_run():
    """A run that has not chosen its quiet CPU yet, as a fresh process starts."""
    cpus.chosen_quiet_cpu.cache_clear()
    yield
    cpus.chosen_quiet_cpu.cache_clear()


def test_quiet_names_the_quiet_cpu_wherever_a_cpu_list_is_taken(two_cpus, new_run, monkeypatch):
    monkeypatch.setattr(cpus, "disk_interrupts", lambda text=None: {1: 40255})
    assert cpus.cpu_list("quiet") == (0,)
    assert cpus.affinity_argument(" quiet ") == (0,)


def test_a_run_chooses_its_quiet_cpu_once_and_times_every_pass_and_reports_on_it(two_cpus, new_run, monkeypatch):
    from perf.gate import interleave

    # Near a tie: each read of /proc/interrupts finds the disk's latest interrupt on the CPU that was the quiet one.
    readings = itertools.cycle([{0: 10, 1: 11}, {0: 12, 1: 11}])
    monkeypatch.setattr(cpus, "disk_interrupts", lambda text=None: next(readings))
    monkeypatch.delenv(cpus.AFFINITY_VARIABLE, raising=False)  # the gate's default: the quiet CPU
    timed_on = []

    class FakeWorkerSet:
        def __init__(self, version, threads, preload, affinity, import_cpus):
            timed_on.append(affinity)

        def close(self):
            pass

    monkeypatch.setattr(interleave, "WorkerSet", FakeWorkerSet)
    versions = [SimpleNamespace(label="baseline"), SimpleNamespace(label="candidate")]
    for pass_index in range(3):
        with interleave.workers_for_pass(versions, 1, pass_index):
            pass
    assert timed_on == [(0,)] * 6 and interleave.gate_affinity() == (0,)  # its report names where it timed
    assert cpus.affinity_argument("quiet") == (0,)  # the suite's option, which pytest parses more than once


def test_a_platform_that_cannot_pin_refuses_rather_than_running_free(monkeypatch):
    monkeypatch.delattr(os, "sched_setaffinity")
    with pytest.raises(ValueError, match="this platform cannot pin a process to CPUs"):
        cpus.cpu_list("0")


def test_the_gates_help_works_where_nothing_can_be_pinned_and_a_gate_says_why_it_cannot_run(monkeypatch, capsys):
    from perf.gate.__main__ import main as gate

    monkeypatch.delattr(os, "sched_setaffinity")
    with pytest.raises(SystemExit) as stopped:
        gate(["--help"])
    assert stopped.value.code == 0 and "usage: python -m perf.gate" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        gate(["HEAD~1"])
    assert stopped.value.code == 2
    assert "this platform cannot pin a process to CPUs (Python has no os.sched_setaffinity here)" in (
        capsys.readouterr().err)


def test_how_a_setting_reads():
    assert cpus.affinity_setting(()) == "free" and cpus.affinity_setting((1,)) == "CPUs 1"
    assert cpus.compact((0, 1, 2, 5, 7, 8)) == "0-2,5,7-8"


def test_a_pinned_run_records_its_cpus_and_is_stored_and_compared_apart_from_a_free_one(two_cpus):
    free, pinned = environment.describe("quick"), environment.describe("quick", (1,))
    assert (free["cpu_affinity"], pinned["cpu_affinity"], pinned["cpus_available"]) == ("free", "CPUs 1", 1)
    assert storage.storage_key((1,)) == storage.storage_key() + "-cpus1"
    assert storage.storage_key((0, 1)).endswith("-cpus0-1")
    assert environment_line(free, pinned) == "Not like with like: CPU affinity free then, CPUs 1 now."
    from_before = {key: value for key, value in free.items() if key != "cpu_affinity"}
    assert environment_line(from_before, free) is None  # runs from before the option ran free
    assert "threads: TF default, CPUs 1" in setting(pinned) and ", free" in setting(free)


@pytest.mark.e2e
def test_every_thread_of_a_pinned_worker_runs_on_its_cpus_and_a_free_one_on_all():
    cpu = max(os.sched_getaffinity(0))
    with Pool(1, threads=1, solvers=["numpy_lean"], affinity=(cpu,)) as pinned, \
            Pool(1, threads=1, solvers=["numpy_lean"]) as free:
        allowed = [{(thread / "status").read_text().split("Cpus_allowed_list:")[1].split()[0]
                    for thread in Path(f"/proc/{pool[0].process.pid}/task").iterdir()} for pool in (pinned, free)]
    assert allowed[0] == {str(cpu)}
    assert allowed[1] == {cpus.compact(os.sched_getaffinity(0))}


@pytest.mark.e2e
def test_a_prestarted_extra_worker_imports_elsewhere_then_times_pinned_and_the_next_pass_uses_it():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("prestarting needs a CPU the workers are not timed on; this process may use one")
    cpu = max(os.sched_getaffinity(0))
    with Pool(1, threads=1, solvers=["numpy_lean"], affinity=(cpu,)) as pool:
        pool.extra(1, ["numpy_lean"])
        index, following = pool.next_worker
        assert index == 2 and following.ask({"op": "solvers", "only": []}) == {"solvers": {}}  # imported, alive
        assert pool.extra(2, ["numpy_lean"]) is following
        trial = Measured({"solver": "numpy_lean", "device": "cpu", "n": 1_000, "steps": 10, "calls": 1}, 1, 2,
                         reference_steps=10).trial(following)
        threads = {(thread / "status").read_text().split("Cpus_allowed_list:")[1].split()[0]
                   for thread in Path(f"/proc/{following.process.pid}/task").iterdir()}
    assert threads == {str(cpu)} and len(trial.rounds_s) == 2 and trial.reference_rounds_s


@pytest.mark.e2e
def test_a_version_of_its_own_free_runs_unpinned_where_the_gate_pins_the_rest():
    """A study's free variant beside a pinned one: the version's own FSSGD_CPU_AFFINITY=free overrides the gate's
    CPU, and its own CPU list pins it to that list."""
    cpu, may_use = max(os.sched_getaffinity(0)), cpus.compact(os.sched_getaffinity(0))
    found = {}
    for setting, expected in ((cpus.FREE, may_use), (str(cpu), str(cpu))):
        version = Version("free", "this tree", ROOT, sys.executable, ((cpus.AFFINITY_VARIABLE, setting),))
        worker = Worker(version, threads=1, preload=["numpy_lean"], affinity=(min(os.sched_getaffinity(0)),),
                        import_cpu=min(os.sched_getaffinity(0)))
        try:
            worker.ask({"op": "solvers", "only": []})
            found[setting] = {(thread / "status").read_text().split("Cpus_allowed_list:")[1].split()[0]
                              for thread in Path(f"/proc/{worker.process.pid}/task").iterdir()}
        finally:
            worker.close()
        assert found[setting] == {expected}, setting
