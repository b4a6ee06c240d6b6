"""A noisy neighbour for the noise study: bursts of CPU and memory work on another CPU than the gate's, bounded.

It stands for the other tenants of a shared machine, whose load comes and goes: each burst streams
a 64 MB array through the caches and memory (a copy and a sum), bursts and pauses lasting 50 ms to
2 s at random. It runs pinned to every CPU but the gate workers' one, holds MEMORY_MB at most, and
stops with the block that started it, or at the latest when its parent process is gone.
"""

import os
import subprocess
import sys
from contextlib import contextmanager

MEMORY_MB = 128  # two 64 MB arrays

LOAD = """
import os, random, sys, time
import numpy as np
cpus, seed, parent = {int(c) for c in sys.argv[1].split(",")}, int(sys.argv[2]), os.getppid()
os.sched_setaffinity(0, cpus)
rng = random.Random(seed)
a, b = np.ones(8 * 2**20), np.empty(8 * 2**20)
while os.getppid() == parent:
    until = time.perf_counter() + rng.uniform(0.05, 2.0)
    while time.perf_counter() < until:
        np.copyto(b, a)
        a[::4096] += b.sum() * 1e-30
    time.sleep(rng.uniform(0.05, 2.0))
"""


@contextmanager
def noisy_neighbour(avoid_cpu: int, seed: int = 0):
    """The load, on every CPU this process may use but avoid_cpu (on avoid_cpu itself where there is no other)."""
    cpus = sorted(os.sched_getaffinity(0) - {avoid_cpu}) or [avoid_cpu]
    load = subprocess.Popen([sys.executable, "-c", LOAD, ",".join(map(str, cpus)), str(seed)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        yield cpus
    finally:
        load.kill()
        load.wait()
