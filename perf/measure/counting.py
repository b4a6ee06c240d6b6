"""A run's counts: benchmarks counted under callgrind (perf/measure/count.py) in fresh counted worker sets, several
at once, each counting every benchmark and, beside it, the timing reference at the same size in the same process."""

import os
import random
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from perf.measure import TIMING_REFERENCE, Key, count
from perf.measure.workers import WorkerSet

# The counted processes a run takes (--count): a count repeats to a fraction of a percent between processes
# (docs/measurement.md, "Counted: instructions a step"), so three give its median and show a process that strayed.
COUNT_PROCESSES = 3
# A count repeats to the instruction in one memory layout, but the layout moves it: the same numpy_loop step counted
# 0.5% more or less with its tree at another path, numpy_lean's 0.6% (docs/results/counted/README.md). So each counted
# process sees its tree through a link whose path is one of this many lengths, drawn per process: the processes then
# sample layouts, and the spread between them holds what the layout moves.
LAYOUTS = 64


@dataclass
class Counted:
    """A benchmark's instructions a step, one a counted process, and the timing reference's in the same processes;
    failure: why a process gave none (the benchmark then has no count); settings: what the counts depend on
    (count.settings(), and the CPU features valgrind presented)."""
    per_step: list[float] = field(default_factory=list)
    reference_per_step: list[float] = field(default_factory=list)
    failure: str | None = None
    settings: dict = field(default_factory=dict)


def counted_process(version, threads: int, keys: list[Key], layout: int = 0) -> dict[Key, dict | str]:
    """{key: its counted trial (count.counted_trial), or why it gave none}, in one fresh counted worker set that sees
    the version's tree through a link layout characters longer than the shortest."""
    found = {}
    with tempfile.TemporaryDirectory(prefix="fssgd-layout-") as folder:
        link = Path(folder) / ("t" + "x" * layout)
        link.symlink_to(Path(version.tree).resolve(), target_is_directory=True)
        workers = WorkerSet(replace(version, tree=link), threads, sorted({key.solver for key in keys}), counted=True)
        try:
            for key in keys:
                try:
                    found[key] = count.counted_trial(workers, key.solver, key.device, key.n)
                except (count.CountFailed, count.NotCountable) as error:
                    found[key] = str(error)
        finally:
            workers.close()
    return found


def counted(version, threads: int, keys: list[Key], processes: int, at_once: int | None = None) -> dict[Key, Counted]:
    """keys counted in processes fresh counted worker sets, at_once of them at a time (default: one a CPU: counts
    need no quiet CPU, and valgrind runs one thread of a process at a time)."""
    reference, device = TIMING_REFERENCE
    wanted = list(dict.fromkeys([*keys, *(Key(reference, device, key.n) for key in keys)]))
    layouts = random.Random().sample(range(LAYOUTS), processes)
    each = counted_processes([(version, wanted, layout) for layout in layouts], threads, at_once)
    settings, found = count.settings(), {}
    for key in keys:
        mine = found[key] = Counted()
        for process in each:
            own, beside = process[key], process[Key(reference, device, key.n)]
            if isinstance(own, str) or isinstance(beside, str):
                mine.failure = mine.failure or (own if isinstance(own, str) else beside)
                continue
            mine.per_step.append(own["per_step"])
            mine.reference_per_step.append(beside["per_step"])
            mine.settings = {**settings, "cpu_features": own["cpu_features"]}
    return found


def counted_processes(asked: list[tuple], threads: int, at_once: int | None = None) -> list[dict[Key, dict | str]]:
    """counted_process of each (version, keys, layout) asked, at_once at a time (default: one a CPU), in the order
    asked."""
    at_once = at_once or len(os.sched_getaffinity(0))
    with ThreadPoolExecutor(max_workers=max(1, min(at_once, len(asked)))) as pool:
        return list(pool.map(lambda each: counted_process(each[0], threads, each[1], each[2]), asked))
