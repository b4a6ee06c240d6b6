"""Placement is strict: an op asked for a device that is not there fails instead of running elsewhere."""

import importlib

import pytest

import solvers
from perf.measure.placement import misplaced, recording_placement
from perf.measure.solver_runs import PLACEMENT_UNRECORDED
from solvers import packages, tensorflow_support
from solvers.problem import seed_problem

pytestmark = pytest.mark.tensorflow
TF_SOLVERS = [name for name, solver in solvers.REGISTRY.items() if "tensorflow" in solver.needs and "gpu" in solver.devices]


def test_sessions_refuse_soft_placement_and_pin_threads(monkeypatch):
    monkeypatch.setenv(tensorflow_support.THREADS_VARIABLE, "2")
    config = tensorflow_support.session_config()
    assert config.allow_soft_placement is False
    assert config.intra_op_parallelism_threads == config.inter_op_parallelism_threads == 2


@pytest.fixture
def no_gpu():
    if packages.tensorflow_gpu_names():
        pytest.skip("this machine has a GPU; the test needs one without")


@pytest.mark.parametrize("name", TF_SOLVERS)
def test_gpu_request_without_a_gpu_is_refused_with_the_reason_benchmarks_skip_with(no_gpu, name):
    with pytest.raises(solvers.SolverUnavailable, match=f"^{name} cannot run on gpu here: no GPU visible to TensorFlow$"):
        solvers.get(name).prepare(seed_problem(100, 5), "gpu")


def solver_module(name):
    """The solver's own prepare, past the registry's availability check: what strict placement alone does."""
    return importlib.import_module(f"solvers.{name}")


@pytest.mark.parametrize("name", TF_SOLVERS)
def test_past_that_check_strict_placement_still_fails_the_request(no_gpu, name):
    tf = tensorflow_support.import_tensorflow()
    with pytest.raises(tf.errors.InvalidArgumentError, match="GPU"):
        with solver_module(name).prepare(seed_problem(100, 5), "gpu") as run:
            run(5)


@pytest.mark.parametrize("name", TF_SOLVERS)
def test_with_soft_placement_the_same_request_would_silently_run_on_the_cpu(no_gpu, name, monkeypatch):
    # The control for the test above: strictness, not an accident of the graph, makes it fail.
    soft = tensorflow_support.session_config()
    soft.allow_soft_placement = True
    monkeypatch.setattr(tensorflow_support, "session_config", lambda: soft)
    with solver_module(name).prepare(seed_problem(100, 5), "gpu") as run:
        assert run(5).iterations == 5


# The placement record: what TensorFlow's runtime says it did, checked against the device asked for.

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU = "/job:localhost/replica:0/task:0/device:GPU:0"


@pytest.mark.parametrize("placement, asked, reason", [
    ({CPU: 40}, "cpu", None),
    ({GPU: 40}, "gpu", None),
    ({"/job:localhost/replica:0/task:0/device:XLA_GPU:0": 3}, "gpu", None),
    ({CPU: 40}, "gpu", f"asked for gpu, but TensorFlow placed float ops elsewhere: 40 on {CPU}"),
    ({GPU: 38, CPU: 2}, "gpu", f"asked for gpu, but TensorFlow placed float ops elsewhere: 2 on {CPU}"),
    ({GPU: 1, CPU: 9}, "cpu", f"asked for cpu, but TensorFlow placed float ops elsewhere: 1 on {GPU}"),
    ({"somewhere": 1}, "cpu", "asked for cpu, but TensorFlow placed float ops elsewhere: 1 on somewhere"),
    ({}, "gpu", "TensorFlow recorded no op placement, so it cannot be checked"),
])
def test_misplaced_says_which_ops_ran_elsewhere(placement, asked, reason):
    assert misplaced(placement, asked) == reason


RECORDED = [name for name in TF_SOLVERS if name not in PLACEMENT_UNRECORDED]


@pytest.mark.parametrize("name", RECORDED)
def test_every_solver_run_is_recorded_on_the_cpu_it_asked_for_and_the_record_changes_nothing(name):
    tf = tensorflow_support.import_tensorflow()
    session_init = tf.compat.v1.Session.__init__
    problem = seed_problem(100, 20)
    with solvers.get(name).prepare(problem, "cpu") as run:
        unrecorded = run()
    with recording_placement() as placement:
        prepared = solvers.get(name).prepare(problem, "cpu")
        run = prepared.__enter__()
        run(1)
    try:
        assert placement and set(placement) == {CPU}, placement
        assert misplaced(placement, "cpu") is None
        assert run() == unrecorded  # the extra traced run left no state behind
    finally:
        prepared.__exit__(None, None, None)
    assert tf.compat.v1.Session.__init__ is session_init


@pytest.mark.parametrize("name", sorted(PLACEMENT_UNRECORDED))
def test_the_solvers_exempt_from_the_check_really_record_nothing(name):
    # If TensorFlow starts reporting their placement, drop them from PLACEMENT_UNRECORDED so they are checked too.
    with recording_placement() as placement:
        with solvers.get(name).prepare(seed_problem(100, 5), "cpu") as run:
            run(1)
    assert placement == {}
