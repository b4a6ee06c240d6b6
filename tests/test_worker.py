"""The worker process and its protocol, for real: what the gate and the suite ask of it, and what it answers."""

import os
import sys

import pytest

import solvers
from solvers import packages
from perf.measure.pool import Pool
from perf.measure.worker import ROOT, Version, Worker, WorkerStopped

NUMPY_LEAN = {"solver": "numpy_lean", "device": "cpu", "n": 1000}


@pytest.fixture
def worker():
    started = Worker(Version("suite", "this tree", ROOT, sys.executable), threads=1, preload=["numpy_loop", "numpy_lean"])
    yield started
    started.close()


@pytest.mark.e2e
def test_the_worker_says_per_solver_and_device_why_it_cannot_run_and_times_a_trial_round_by_round(worker):
    listing = worker.ask({"op": "solvers", "only": ["numpy_loop", "jax_step"]})["solvers"]
    plan = worker.ask({"op": "plan", **NUMPY_LEAN, "most_steps": 100, "round_s": 0.01, "probe_steps": 10,
                       "most_calls": 50})
    opened = worker.ask({"op": "open", **NUMPY_LEAN, **plan})
    rounds = [worker.ask({"op": "round"}) for _ in range(2)]
    closed = worker.ask({"op": "close"})
    missing = worker.ask({"op": "open", "solver": "nope", "device": "cpu", "n": 1000, **plan})
    assert set(listing) == {"numpy_loop", "jax_step"} and listing["numpy_loop"] == {"cpu": None}
    # Each package answers for its own GPU, so a version where TensorFlow sees one and JAX does not skips jax_step.
    assert listing["jax_step"]["gpu"] == solvers.get("jax_step").unavailable_reason("gpu")
    assert plan["steps"] == 100 and plan["calls"] >= 1
    assert opened["setup_s"] > 0 and opened["first_run_s"] > 0 and all(reply["round_s"] > 0 for reply in rounds)
    assert closed["closed"] and closed["fit"]["iterations"] == 100
    assert missing == {"missing": "no solver nope in this version"}


@pytest.mark.e2e
def test_a_trial_beside_the_timing_reference_times_it_before_or_after_each_round_in_the_same_process(worker):
    opened = worker.ask({"op": "open", **NUMPY_LEAN, "steps": 50, "calls": 1, "warm_up": False,
                         "reference_steps": 20})
    before = worker.ask({"op": "round", "reference": "before"})
    after = worker.ask({"op": "round", "reference": "after"})
    alone = worker.ask({"op": "round"})
    closed = worker.ask({"op": "close"})
    assert opened["first_run_s"] is None and "placement" in opened  # its first trial of numpy_lean: checked
    assert before.keys() == after.keys() == {"round_s", "reference_round_s"} and alone.keys() == {"round_s"}
    assert closed["fit"]["iterations"] == 50
    again = worker.ask({"op": "open", **NUMPY_LEAN, "steps": 50, "calls": 1})
    assert "placement" not in again  # checked once per benchmark and worker


@pytest.mark.e2e
def test_a_failure_in_a_trial_names_its_kind_and_carries_the_traceback(worker):
    reply = worker.ask({"op": "open", **NUMPY_LEAN, "steps": 0, "calls": 1})
    assert reply["kind"] == "ValueError" and reply["error"].startswith("ValueError: ")
    assert "Traceback (most recent call last)" in reply["trace"]


@pytest.mark.e2e
def test_a_worker_that_ended_says_so(worker):
    worker.process.kill()  # as a crash in a native library would end it
    worker.process.wait(timeout=60)
    with pytest.raises(WorkerStopped, match="the worker process of the suite, this tree, stopped"):
        worker.ask({"op": "solvers", "only": []})


@pytest.mark.e2e
def test_the_pool_starts_its_workers_together_on_first_use_and_replaces_one_that_stopped():
    with Pool(2, threads=1, solvers=["numpy_lean"]) as pool:
        assert pool.workers == [None, None]  # nothing started before a benchmark is timed
        first = pool[0]
        assert all(worker is not None for worker in pool.workers)
        assert [worker.preload for worker in first.processes.values()] == [["numpy_lean", "numpy_loop"]]
        second_pid = pool[1].process.pid
        first.process.kill()
        first.process.wait(timeout=60)
        assert pool[0] is not first and pool[0].ask({"op": "solvers", "only": ["numpy_lean"]})["solvers"]
        assert pool[1].process.pid == second_pid  # the one still serving is kept
    assert pool.workers == [None, None]


# Each framework's own out-of-memory error, as a trial's call raises it on a full GPU.
OUT_OF_MEMORY = {
    "tensorflow": "import tensorflow as tf\nerror = tf.errors.ResourceExhaustedError(None, None, 'OOM when allocating')",
    "jax": "import jax\nerror = jax.errors.JaxRuntimeError('RESOURCE_EXHAUSTED: Out of memory while trying to allocate')",
    "torch": "import torch\nerror = torch.cuda.OutOfMemoryError('CUDA out of memory.')",
}
EXHAUSTED_PLUGIN = '''
import contextlib
import dataclasses

import solvers
import solvers.numpy_lean as lean

# A GPU trial, faked: numpy_lean asked for the GPU raises what a framework raises there.
solvers.REGISTRY["numpy_lean"] = dataclasses.replace(solvers.REGISTRY["numpy_lean"], devices=("cpu", "gpu"))

{error}


@contextlib.contextmanager
def prepare(problem, device):
    def exhausted(iterations):
        raise error

    yield exhausted


lean.prepare = prepare
'''


@pytest.mark.e2e
@pytest.mark.parametrize("framework", OUT_OF_MEMORY)
def test_out_of_memory_in_any_framework_is_named_so_and_frees_the_trial_for_the_next(framework, tmp_path, monkeypatch):
    if reason := packages.unavailable_reason(framework):
        pytest.skip(reason)
    (tmp_path / "exhaust_memory.py").write_text(EXHAUSTED_PLUGIN.format(error=OUT_OF_MEMORY[framework]))
    (tmp_path / "sitecustomize.py").write_text("import exhaust_memory\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT)]))
    started = Worker(Version("suite", "this tree", ROOT, sys.executable), threads=1, preload=["numpy_lean"])
    try:
        reply = started.ask({"op": "open", **NUMPY_LEAN, "device": "gpu", "steps": 10, "calls": 1})
        closed = started.ask({"op": "close"})
        again = started.ask({"op": "open", "solver": "numpy_loop", "device": "cpu", "n": 100, "steps": 10, "calls": 1})
    finally:
        started.close()
    assert reply["kind"] == "out of memory" and reply["error"].startswith("out of memory: ")
    assert "held the GPU" in reply["error"] or "nvidia-smi could not say" in reply["error"]
    assert closed == {"closed": False}  # the worker closed the trial itself, before answering
    assert again["setup_s"] > 0


@pytest.mark.e2e
def test_a_cpu_trials_error_keeps_its_traceback_whatever_it_says_of_memory(tmp_path, monkeypatch):
    error = ('class OutOfMemoryError(RuntimeError): pass\n'
             'error = OutOfMemoryError("Failed to allocate memory for the batch; CUDA out of memory")')
    (tmp_path / "exhaust_memory.py").write_text(EXHAUSTED_PLUGIN.format(error=error))
    (tmp_path / "sitecustomize.py").write_text("import exhaust_memory\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT)]))
    started = Worker(Version("suite", "this tree", ROOT, sys.executable), threads=1, preload=["numpy_lean"])
    try:
        reply = started.ask({"op": "open", **NUMPY_LEAN, "steps": 10, "calls": 1})
    finally:
        started.close()
    assert reply["kind"] == "OutOfMemoryError" and reply["error"].startswith("OutOfMemoryError: Failed to allocate")
    assert "Traceback (most recent call last)" in reply["trace"]


@pytest.mark.parametrize("given, started_with", [(None, "3"), ("0", "0")])
def test_a_worker_is_quiet_unless_the_user_asked_for_tensorflows_log(monkeypatch, given, started_with):
    from perf.measure import worker as worker_module

    started = []
    monkeypatch.setattr(worker_module.subprocess, "Popen", lambda *args, env, **kwargs: started.append(env))
    if given is None:
        monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    else:
        monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", given)
    Worker(Version("suite", "this tree", ROOT, sys.executable), threads=1)
    assert started[0]["TF_CPP_MIN_LOG_LEVEL"] == started_with
