"""Placement is strict: an op asked for a device that is not there fails instead of running elsewhere."""

import pytest

import solvers
from solvers import tensorflow_support
from solvers.problem import seed_problem

pytestmark = pytest.mark.tensorflow
TF_SOLVERS = [name for name, solver in solvers.REGISTRY.items() if solver.needs_tensorflow and "gpu" in solver.devices]


def test_sessions_refuse_soft_placement_and_pin_threads(monkeypatch):
    monkeypatch.setenv(tensorflow_support.THREADS_VARIABLE, "2")
    config = tensorflow_support.session_config()
    assert config.allow_soft_placement is False
    assert config.intra_op_parallelism_threads == config.inter_op_parallelism_threads == 2


@pytest.fixture
def no_gpu():
    if tensorflow_support.gpu_names():
        pytest.skip("this machine has a GPU; the test needs one without")


@pytest.mark.parametrize("name", TF_SOLVERS)
def test_gpu_request_without_a_gpu_fails(no_gpu, name):
    tf = tensorflow_support.import_tensorflow()
    with pytest.raises(tf.errors.InvalidArgumentError, match="GPU"):
        with solvers.get(name).prepare(seed_problem(100, 5), "gpu") as run:
            run()


@pytest.mark.parametrize("name", TF_SOLVERS)
def test_with_soft_placement_the_same_request_would_silently_run_on_the_cpu(no_gpu, name, monkeypatch):
    # The control for the test above: strictness, not an accident of the graph, makes it fail.
    soft = tensorflow_support.session_config()
    soft.allow_soft_placement = True
    monkeypatch.setattr(f"solvers.{name}.session_config", lambda: soft)
    with solvers.get(name).prepare(seed_problem(100, 5), "gpu") as run:
        assert run().iterations == 5
