"""A version's workers, a process per framework: each request reaches the process of its solver's framework, and no
process imports two frameworks."""

import ctypes
import importlib.util
import itertools
import os
import subprocess
import sys

import pytest

import solvers
from perf.measure import cpus, workers
from perf.measure import worker as worker_module
from perf.measure.pool import Pool
from perf.measure.worker import FRAMEWORKS, ROOT, Version, Worker, malloc_settings
from perf.measure.workers import NO_FRAMEWORK, WorkerSet, framework_of
from solvers import packages

VERSION = Version("suite", "this tree", ROOT, sys.executable)
# Found, not imported: JAX loaded in this process would change which GPU questions it asks in a process of their own.
NEEDS_JAX = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed (the jax extra)")


class FakeWorker:
    """A worker process that answers from its preload, and says what it was asked."""

    started = []

    def __init__(self, version, threads, preload, affinity=(), import_cpu=None, framework=None, counted=False):
        self.preload, self.framework, self.import_cpu, self.asked = preload, framework, import_cpu, []
        self.counted = counted
        self.process = type("Process", (), {"pid": 1000 + len(FakeWorker.started), "poll": lambda self: None})()
        FakeWorker.started.append(self)

    def ask(self, request):
        self.asked.append(request)
        if request["op"] == "names":
            return {"names": ["numpy_loop", "jax_step", "only_in_another_version", "tf1_feed_dict"]}
        if request["op"] == "solvers":
            return {"solvers": {name: {"cpu": None} for name in request["only"]}}
        return {"op": request["op"], "pid": self.process.pid}

    def close(self):
        pass


@pytest.fixture
def fake_workers(monkeypatch):
    FakeWorker.started = []
    monkeypatch.setattr(workers, "Worker", FakeWorker)
    return FakeWorker.started


def frameworks_needed(name: str) -> set[str]:
    return {package for package in solvers.get(name).needs if package in FRAMEWORKS}


def test_the_workers_frameworks_are_the_solvers_gpu_frameworks():
    """perf/measure/worker.py keeps its own list, since it serves other revisions' solvers, which may lack
    solvers.packages': this tree's two name the same frameworks."""
    assert set(FRAMEWORKS) == set(packages.GPU_FRAMEWORKS)


def test_two_solvers_share_a_process_exactly_when_they_need_the_same_frameworks(fake_workers):
    every = WorkerSet(VERSION, 1, list(solvers.REGISTRY))
    opened_in = {}
    for name in [*solvers.REGISTRY, "only_in_another_version"]:
        every.ask({"op": "open", "solver": name})
        opened_in[name] = next(worker for worker in fake_workers if {"op": "open", "solver": name} in worker.asked)
    for first, second in itertools.combinations(solvers.REGISTRY, 2):
        shared = opened_in[first] is opened_in[second]
        assert shared == (frameworks_needed(first) == frameworks_needed(second)), (first, second)
    for name, worker in opened_in.items():
        assert name in worker.preload  # imported before it is timed
        # A process that keeps every framework out but its own: the NumPy and numba solvers' keeps out all of them.
        assert worker.framework is not None or name == "only_in_another_version"
    # A solver only another version has: a process of its own, which keeps nothing out, its needs unknown here.
    assert [worker.preload for worker in fake_workers if worker.framework is None] == [["only_in_another_version"]]


def test_a_process_per_framework_starts_at_once_each_with_its_solvers_and_those_alongside(fake_workers):
    WorkerSet(VERSION, 1, ["jax_step", "numpy_lean", "tf1_feed_dict", "jax_fori_loop"], alongside=("numpy_loop",))
    assert [worker.preload for worker in fake_workers] == [["jax_step", "jax_fori_loop", "numpy_loop"],
                                                           ["numpy_lean", "numpy_loop"],
                                                           ["tf1_feed_dict", "numpy_loop"]]


def test_a_counted_set_starts_every_framework_process_counted_and_a_timed_one_none(fake_workers):
    WorkerSet(VERSION, 1, ["jax_step", "numpy_lean"], counted=True)
    WorkerSet(VERSION, 1, ["jax_step", "numpy_lean"])
    assert [worker.counted for worker in fake_workers] == [True, True, False, False]


def test_an_extra_pass_starts_only_its_benchmarks_frameworks_each_importing_all_its_selected_solvers(fake_workers):
    pool = Pool(1, 1, ["jax_step", "numpy_lean", "tf1_feed_dict", "tf1_callable"])
    assert pool.extra(1, ["numpy_lean"]) is pool[1]
    assert [worker.preload for worker in fake_workers] == [["numpy_lean", "numpy_loop"]]
    pool.extra(2, ["tf1_callable", "numpy_lean"])
    assert [worker.preload for worker in fake_workers[1:]] == [["tf1_feed_dict", "tf1_callable", "numpy_loop"],
                                                               ["numpy_lean", "numpy_loop"]]
    # Each has imported its solvers before the pass times anything.
    assert all(worker.asked[:1] == [{"op": "solvers", "only": []}] for worker in fake_workers)
    # A solver whose framework the pass did not start gets its process on first use, as any other.
    pool[2].ask({"op": "open", "solver": "jax_step"})
    assert fake_workers[-1].preload == ["jax_step", "numpy_loop"]


def test_pinned_the_next_extra_pass_imports_on_a_cpu_the_workers_are_not_timed_on_while_this_one_times(
        fake_workers, monkeypatch):
    monkeypatch.setattr(cpus, "allowed", lambda: [0, 1])
    pool = Pool(1, 1, ["numpy_lean", "tf1_feed_dict"], affinity=(1,))
    this = pool.extra(1, ["tf1_feed_dict", "numpy_lean"])
    # This pass's processes import on both CPUs; the next pass's, started at once, on CPU 0 alone, not waited for.
    assert [(worker.preload, worker.import_cpu) for worker in fake_workers] == [
        (["tf1_feed_dict", "numpy_loop"], 1), (["numpy_lean", "numpy_loop"], 0),
        (["tf1_feed_dict", "numpy_loop"], 0), (["numpy_lean", "numpy_loop"], 0)]
    assert [worker.asked for worker in fake_workers[2:]] == [[], []]
    following = pool.extra(2, ["numpy_lean"])
    # The prestarted one serves, and the pass after it gets its own, with this pass's one framework.
    assert following is not this and [worker.preload for worker in fake_workers[4:]] == [["numpy_lean", "numpy_loop"]]
    assert following.processes["numpy"] is fake_workers[3] and fake_workers[3].asked == [{"op": "solvers", "only": []}]
    # Free, no CPU is left over: nothing starts before its pass.
    free = Pool(1, 1, ["numpy_lean"])
    free.extra(1, ["numpy_lean"])
    assert len(fake_workers) == 6 and free.next_worker is None


def test_a_trial_is_opened_timed_and_closed_in_its_frameworks_process(fake_workers):
    both = WorkerSet(VERSION, 1, ["numpy_lean", "jax_step"])
    numpy, jax = fake_workers
    assert both.ask({"op": "plan", "solver": "jax_step"})["pid"] == jax.process.pid
    both.ask({"op": "open", "solver": "jax_step"})
    assert both.process is jax.process  # the pid a trial records is its own process's
    assert [both.ask({"op": op})["pid"] for op in ("round", "close")] == [jax.process.pid] * 2
    both.ask({"op": "open", "solver": "numpy_lean"})
    assert both.ask({"op": "round"})["pid"] == numpy.process.pid and both.process is numpy.process


def test_a_solver_not_started_with_gets_its_frameworks_process_when_first_asked_for(fake_workers):
    only_numpy = WorkerSet(VERSION, 1, ["numpy_lean"], alongside=("numpy_loop",))
    only_numpy.ask({"op": "open", "solver": "tf1_callable"})
    assert [worker.preload for worker in fake_workers] == [["numpy_lean", "numpy_loop"], ["tf1_callable", "numpy_loop"]]
    assert fake_workers[1].asked == [{"op": "open", "solver": "tf1_callable"}]


def test_each_solver_is_listed_by_its_own_process_and_a_solver_this_tree_lacks_by_one_of_its_own(fake_workers):
    listed = WorkerSet(VERSION, 1, ["numpy_loop", "jax_step"]).ask({"op": "solvers", "only": None})["solvers"]
    # Each process keeps every other framework out; the unknown solver's, none: its needs are its version's to say.
    assert [worker.framework for worker in fake_workers] == ["numpy", "jax", None, "tensorflow"]
    assert list(listed) == ["numpy_loop", "jax_step", "only_in_another_version", "tf1_feed_dict"]  # the version's order
    asked = {tuple(worker.preload): [request["only"] for request in worker.asked if request["op"] == "solvers"]
             for worker in fake_workers}
    assert asked == {("numpy_loop",): [["numpy_loop"]], ("jax_step",): [["jax_step"]],
                     ("only_in_another_version",): [["only_in_another_version"]],
                     ("tf1_feed_dict",): [["tf1_feed_dict"]]}


def test_listing_none_asks_every_started_process_so_that_it_returns_once_all_have_imported(fake_workers):
    assert WorkerSet(VERSION, 1, ["numpy_loop", "jax_step"]).ask({"op": "solvers", "only": []}) == {"solvers": {}}
    assert [worker.asked for worker in fake_workers] == [[{"op": "solvers", "only": []}]] * 2


@pytest.mark.e2e
@pytest.mark.tensorflow
@NEEDS_JAX
def test_no_worker_process_imports_a_framework_its_solvers_do_not_need():
    """Real processes, JAX's and TensorFlow's (PyTorch is not installed here; the rule is the same), each listing and
    timing its own solver beside the timing reference."""
    started = WorkerSet(VERSION, 1, ["jax_step", "tf1_feed_dict", "numpy_lean"], alongside=("numpy_loop",))
    try:
        listed = started.ask({"op": "solvers", "only": None})["solvers"]  # every solver's reasons: every package asked
        opened = started.ask({"op": "open", "solver": "jax_step", "device": "cpu", "n": 100, "steps": 10, "calls": 1,
                              "reference_steps": 10})
        timed = started.ask({"op": "round", "reference": "after"})
        closed = started.ask({"op": "close"})
        loaded = {framework: process.ask({"op": "frameworks"})["frameworks"]
                  for framework, process in started.processes.items()}
    finally:
        started.close()
    assert set(listed) == set(solvers.REGISTRY)
    assert "setup_s" in opened and timed.keys() == {"round_s", "reference_round_s"} and closed["closed"]
    assert loaded["jax"] == ["jax"] and loaded["tensorflow"] == ["tensorflow"] and loaded[NO_FRAMEWORK] == []
    assert {framework for framework in loaded if framework in FRAMEWORKS} == {"jax", "tensorflow", "torch"}


@pytest.mark.e2e
def test_a_solver_whose_framework_a_process_keeps_out_is_answered_as_kept_out_not_as_not_installed():
    numpy_only = Worker(VERSION, threads=1, preload=["numpy_lean"], framework=NO_FRAMEWORK)
    try:
        listed = numpy_only.ask({"op": "solvers", "only": ["jax_step"]})["solvers"]["jax_step"]
        opened = numpy_only.ask({"op": "open", "solver": "jax_step", "device": "cpu", "n": 100, "steps": 10, "calls": 1})
        loaded = numpy_only.ask({"op": "frameworks"})["frameworks"]
    finally:
        numpy_only.close()
    why = "jax_step needs jax, kept out of this worker process: each framework's solvers run in a process of their own"
    assert listed == {"cpu": f"{why} (perf/measure/workers.py)", "gpu": f"{why} (perf/measure/workers.py)"}
    assert opened == {"error": listed["cpu"], "kind": "kept out"} and loaded == []


@pytest.mark.e2e
@NEEDS_JAX
def test_the_jax_process_never_imports_torch_nor_the_torch_process_jax(tmp_path, monkeypatch):
    """PyTorch is not installed here: a stand-in torch package on PYTHONPATH, whose import each process records, shows
    which process imports it. Both frameworks importable, as on a GPU machine."""
    (tmp_path / "torch.py").write_text("__version__ = '0.0.0+stand-in'\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    started = WorkerSet(VERSION, 1, ["jax_step", "torch_eager"], alongside=("numpy_loop",))
    try:
        listed = started.ask({"op": "solvers", "only": ["jax_step", "torch_eager"]})["solvers"]
        loaded = {framework: process.ask({"op": "frameworks"})["frameworks"]
                  for framework, process in started.processes.items()}
    finally:
        started.close()
    assert loaded == {"jax": ["jax"], "torch": ["torch"]}
    assert listed["jax_step"]["cpu"] is None and "kept out" not in str(listed)


# Whether glibc served a 1 MiB malloc by mmap (1) or from the heap (0), in a process started with a given environment.
MMAPPED = """
import ctypes
class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype, libc.malloc.restype = Mallinfo2, ctypes.c_void_p
before = libc.mallinfo2().hblks
libc.malloc(1 << 20)
print(libc.mallinfo2().hblks - before)
"""


def mmapped_in(env: dict) -> int:
    return int(subprocess.run([sys.executable, "-c", MMAPPED], env=env, capture_output=True, text=True,
                              check=True).stdout)


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="needs glibc 2.33 or later (mallinfo2)")
def test_every_worker_keeps_a_mib_in_the_heap_as_glibc_would_not_unless_the_user_set_it(monkeypatch):
    """glibc's own default, a threshold that starts at 128 KiB and moves with what the process freed, mmaps a fresh
    1 MiB block; under the settings every worker starts with it stays in the heap, whatever ran before."""
    def worker_environment() -> dict:
        started = []
        with monkeypatch.context() as patched:
            patched.setattr(worker_module.subprocess, "Popen", lambda *args, env, **kwargs: started.append(env))
            Worker(VERSION, threads=1)
        return started[0]

    for name in malloc_settings({}):
        monkeypatch.delenv(name, raising=False)
    glibcs = dict(os.environ)
    assert mmapped_in(glibcs) == 1 and mmapped_in(worker_environment()) == 0
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")  # the user's own choice wins
    users = worker_environment()
    assert mmapped_in(users) == 1
    assert {name: users[name] for name in malloc_settings()} == malloc_settings()  # as the run records them


@pytest.mark.e2e
def test_a_worker_process_has_the_malloc_settings_in_its_environment():
    started = Worker(VERSION, threads=1, preload=["numpy_lean"], framework=NO_FRAMEWORK)
    try:
        assert started.ask({"op": "frameworks"}) == {"frameworks": []}  # started and serving
        environ = open(f"/proc/{started.process.pid}/environ", "rb").read().decode().split("\0")
    finally:
        started.close()
    assert {*(f"{name}={value}" for name, value in malloc_settings().items()), "FSSGD_FRAMEWORK=numpy"} <= set(environ)
