"""Which CPUs the workers are timed on (their CPU affinity): a list as taskset -c takes it, checked, and how it reads.

The suite's default is free; the gate always pins, by default to the quiet CPU (docs/measurement.md, "Which CPU").
Only the standard library: the worker (perf/measure/worker.py) reads its list here inside another version's tree.
"""

import argparse
import functools
import itertools
import os
import re

# A worker's environment: the CPUs it is timed on, as this module writes them ("1", "0-1"); unset, it runs free.
AFFINITY_VARIABLE = "FSSGD_CPU_AFFINITY"
FREE = "free"
QUIET = "quiet"  # --cpu-affinity's word for quiet_cpu()
INTERRUPTS = "/proc/interrupts"
# A block device's queues as Linux names their interrupts: virtio-blk's req.N, virtio-scsi's request, NVMe's, AHCI's.
DISK_QUEUE = re.compile(r"virtio\d+-req\.\d+|virtio\d+-request|nvme\d+q\d+|\bahci\b")


def allowed() -> list[int]:
    """The CPUs this process may run on; ValueError where the platform cannot pin a process to CPUs."""
    if not hasattr(os, "sched_setaffinity"):
        raise ValueError("this platform cannot pin a process to CPUs (Python has no os.sched_setaffinity here)")
    return sorted(os.sched_getaffinity(0))


def parsed(text: str) -> tuple[int, ...]:
    """The CPUs a list names ('1', '0,1', '0-1', '0-2,5'), sorted; ValueError where it is not such a list."""
    cpus = set()
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        if not first.isdigit() or (dash and not last.isdigit()) or (dash and int(last) < int(first)):
            raise ValueError(f"{text!r} is not a CPU list such as 1, 0,1 or 0-1")
        cpus.update(range(int(first), int(last if dash else first) + 1))
    return tuple(sorted(cpus))


def disk_interrupts(text: str | None = None) -> dict[int, int]:
    """Per CPU, the block-device interrupts it has taken since boot, from /proc/interrupts' text; {} where unknown."""
    if text is None:
        try:
            with open(INTERRUPTS) as file:
                text = file.read()
        except OSError:
            return {}
    header, *rows = text.splitlines() or [""]
    cpus = [int(name[3:]) for name in header.split() if name.startswith("CPU") and name[3:].isdigit()]
    taken = {}
    for line in rows:
        if DISK_QUEUE.search(line):
            for cpu, count in zip(cpus, line.split()[1:]):  # the counts, one a CPU, then the interrupt's names
                if count.isdigit():
                    taken[cpu] = taken.get(cpu, 0) + int(count)
    return taken


def quiet_cpu(may_use: list[int] | None = None, taken: dict[int, int] | None = None) -> int:
    """Of the CPUs this process may use, the one that has taken the fewest block-device interrupts; the last one where
    they tie or none is known. A CPU that serves the disk's interrupts stops the trials it runs for each of them."""
    may_use = allowed() if may_use is None else may_use
    taken = disk_interrupts() if taken is None else taken
    return min(reversed(may_use), key=lambda cpu: taken.get(cpu, 0))


@functools.cache
def chosen_quiet_cpu() -> int:
    """This run's quiet CPU, chosen once: read again at every pass, a near tie of interrupts would move the workers to
    another CPU mid-run, and the report could name a CPU that timed nothing."""
    return quiet_cpu()


def cpu_list(text: str) -> tuple[int, ...]:
    """The CPUs a list names, each one this process may use, or this run's quiet CPU for 'quiet'; else ValueError."""
    if text.strip() == QUIET:
        return (chosen_quiet_cpu(),)
    cpus, may_use = parsed(text), allowed()
    if outside := sorted(set(cpus) - set(may_use)):
        raise ValueError(f"CPU {compact(outside)} {'is' if len(outside) == 1 else 'are'} not one this process may use; "
                         f"it may use {compact(may_use)}")
    return cpus


def argument_type(parse):
    """parse, which raises ValueError, as an argparse type, which prints an ArgumentTypeError's own message."""
    def argument(text: str):
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return argument


affinity_argument = argument_type(cpu_list)


def compact(cpus) -> str:
    """A CPU list as taskset -c writes it: '0-3,5'."""
    runs = [[cpu for _, cpu in run]  # consecutive CPUs lie at one distance from their place in the sorted list
            for _, run in itertools.groupby(enumerate(sorted(cpus)), key=lambda pair: pair[1] - pair[0])]
    return ",".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def affinity_setting(cpus) -> str:
    """How a run's CPU affinity reads in its records and tables: 'free', or 'CPUs 1'."""
    return f"CPUs {compact(cpus)}" if cpus else FREE


def recorded_affinity(fssgd: dict) -> str:
    """A saved run's CPU affinity from its machine_info.fssgd: runs from before --cpu-affinity ran free."""
    return fssgd.get("cpu_affinity") or FREE
