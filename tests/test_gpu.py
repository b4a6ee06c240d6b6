"""The GPU half on the CPU: the memory settings every worker starts with, out-of-memory errors from each framework,
each framework's own view of the GPU, and what a GPU run records; the GPU itself faked."""

import io
import json
import signal
import sys
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

import solvers
from perf import plugin, storage
from perf.measure import cpus, environment, gpu
from perf.measure.trials import Measured
from perf.measure import worker as worker_module
from perf.measure.worker import ROOT, Version, Worker
from perf.report.compare import environment_line
from solvers import packages

H100 = "NVIDIA H100 80GB HBM3, 570.86"


def test_every_worker_starts_with_memory_growth_and_no_preallocation_unless_the_user_set_them(monkeypatch):
    started = []
    monkeypatch.setattr(worker_module.subprocess, "Popen", lambda *args, env, **kwargs: started.append(env))
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "true")  # the user's own choice wins
    Worker(Version("suite", "this tree", ROOT, sys.executable), threads=1)
    assert started[0]["TF_FORCE_GPU_ALLOW_GROWTH"] == "true"
    assert started[0]["XLA_PYTHON_CLIENT_PREALLOCATE"] == "true"
    assert gpu.memory_settings({}) == {"TF_FORCE_GPU_ALLOW_GROWTH": "true", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}


class OutOfMemoryError(RuntimeError):
    """PyTorch's torch.cuda.OutOfMemoryError, as far as its class name goes."""


class XlaRuntimeError(RuntimeError):
    """Older jaxlib's runtime error, which says RESOURCE_EXHAUSTED when an allocation fails, and carries other failures
    too."""


def test_out_of_memory_errors_are_told_by_class_name_without_importing_the_framework():
    # By name on purpose (perf/measure/gpu.py imports no framework), so this holds where none is installed.
    assert gpu.is_out_of_memory(OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert gpu.is_out_of_memory(XlaRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8 bytes."))
    assert not gpu.is_out_of_memory(XlaRuntimeError("INTERNAL: cuBLAS failed"))
    assert not gpu.is_out_of_memory(MemoryError("host"))


class InternalError(RuntimeError):
    """TensorFlow's tf.errors.InternalError, as far as its class name goes: some of its GPU out-of-memory errors, and
    many other failures."""


class BackendCompilerFailed(RuntimeError):
    """torch._dynamo.exc.BackendCompilerFailed: torch.compile's backend raised, the error its __cause__."""


class InductorError(BackendCompilerFailed):
    """torch._inductor.exc.InductorError, which repeats the inner error's class and message as its own message."""


def chained(error: BaseException, cause=None, context=None, hidden=False) -> BaseException:
    """error as Python raises it: `raise error from cause`, or while context was handled; hidden: `from None`."""
    error.__cause__, error.__context__, error.__suppress_context__ = cause, context, cause is not None or hidden
    return error


@pytest.mark.parametrize("message", [
    "Failed copying input tensor from /job:localhost/replica:0/task:0/device:CPU:0 to "
    "/job:localhost/replica:0/task:0/device:GPU:0 in order to run _EagerConst: Dst tensor is not initialized.",
    "Blas GEMM launch failed : a.shape=(1000, 1), b.shape=(1, 1), m=1000, n=1, k=1\n\t [[{{node MatMul}} = "
    "MatMul[T=DT_FLOAT, _device=\"/job:localhost/replica:0/task:0/device:GPU:0\"](X, W)]]",
    "failed to allocate 3.81G (4087755776 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
    "failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: "
    "CUDA_ERROR_OUT_OF_MEMORY; total memory reported: 0",
])
def test_a_tensorflow_internal_error_that_says_an_allocation_failed_is_out_of_memory(message):
    assert gpu.is_out_of_memory(InternalError(message))


@pytest.mark.parametrize("message", [
    "Failed to load in-memory CUBIN: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available for execution",
    "cuDNN launch failure : input shape ([1,1,1000,1])",
    "Src tensor is not initialized.",
    "Failed to create session.",
])
def test_a_tensorflow_internal_error_that_says_no_allocation_failed_stays_other(message):
    assert not gpu.is_out_of_memory(InternalError(message))


@pytest.mark.parametrize("message", [
    "Failed to allocate memory for the batch of component 0",  # tf.data's, in the host's memory
    "Blas GEMM launch failed : a.shape=(1000, 1), b.shape=(1, 1), m=1000, n=1, k=1 [Op:MatMul]",
    "Blas xGEMMBatched launch failed : a.shape=[5,2,3], b.shape=[5,3,810000], m=2, n=810000, k=3, batch_size=5",
])
def test_a_failed_allocation_whose_message_names_no_gpu_is_not_the_gpus(message):
    assert not gpu.is_out_of_memory(InternalError(message))


def test_an_error_raised_while_an_out_of_memory_error_was_handled_is_its_own():
    out_of_memory = OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    assert not gpu.is_out_of_memory(chained(KeyError("w"), context=out_of_memory))  # a bug in the handler
    assert gpu.is_out_of_memory(chained(RuntimeError("wrapped"), cause=out_of_memory))  # raise ... from
    assert gpu.is_out_of_memory(chained(RuntimeError("wrapped"), context=out_of_memory, hidden=True))  # from None


def test_only_a_gpu_trials_error_is_told_out_of_memory(monkeypatch):
    monkeypatch.setattr(gpu, "nvidia_smi", lambda *arguments: "")
    error = OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    assert gpu.out_of_memory(error, "cpu") is None
    assert gpu.out_of_memory(error, "gpu").startswith("out of memory: OutOfMemoryError: CUDA out of memory.")


def test_torch_compiles_wrapped_out_of_memory_error_is_found_by_its_chain_or_its_message():
    out_of_memory = OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
                                     "79.19 GiB of which 1.06 GiB is free.\nmore")
    # The chain alone: the wrapper's own message says nothing of memory.
    assert gpu.is_out_of_memory(chained(BackendCompilerFailed("backend='inductor' raised: see above"), out_of_memory))
    assert gpu.is_out_of_memory(chained(InductorError("see above"), context=out_of_memory, hidden=True))
    assert gpu.is_out_of_memory(chained(RuntimeError("a"), cause=chained(InductorError("b"), out_of_memory)))
    assert not gpu.is_out_of_memory(BackendCompilerFailed("backend='inductor' raised: see above"))
    assert not gpu.is_out_of_memory(chained(InductorError("b"), RuntimeError("CUDA error: an illegal memory access")))
    # The message alone, as torch.compile words it, where the original did not travel with it.
    assert gpu.is_out_of_memory(BackendCompilerFailed(
        "backend='inductor' raised:\nOutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert gpu.is_out_of_memory(InductorError("OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert gpu.is_out_of_memory(RuntimeError("CUDA error: out of memory\nCUDA kernel errors might be reported later"))


@pytest.fixture
def within_a_second():
    """A failure, not a hang, where the test is still running after a second."""
    def timed_out(*_):
        pytest.fail("still running after a second: an endless loop")

    previous = signal.signal(signal.SIGALRM, timed_out)
    signal.setitimer(signal.ITIMER_REAL, 1)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_a_chain_that_loops_is_walked_once(within_a_second):
    first, second = RuntimeError("first"), RuntimeError("second")
    chained(first, context=second, hidden=True), chained(second, cause=first)
    assert not gpu.is_out_of_memory(first)
    out_of_memory = chained(OutOfMemoryError("CUDA out of memory."), context=first, hidden=True)
    chained(second, cause=out_of_memory)
    assert gpu.is_out_of_memory(first) and gpu.out_of_memory_cause(first) is out_of_memory


def test_out_of_memory_quotes_the_error_found_in_the_chain_not_the_wrapper_around_it(monkeypatch):
    monkeypatch.setattr(gpu, "nvidia_smi", lambda *arguments: "")
    wrapped = chained(BackendCompilerFailed("backend='inductor' raised:\nOutOfMemoryError: CUDA out of memory. Tried "
                                            "to allocate 2.00 GiB"),
                      OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB\nmore"))
    assert gpu.out_of_memory_message(wrapped, gpu.holders()).startswith(
        "out of memory: OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (raised as "
        "BackendCompilerFailed); nvidia-smi could not say")
    # Only the message says it: quoted from the line that does, not from "backend='inductor' raised:".
    alone = BackendCompilerFailed("backend='inductor' raised:\nOutOfMemoryError: CUDA out of memory. Tried to "
                                  "allocate 2.00 GiB")
    assert gpu.out_of_memory_message(alone, gpu.holders()).startswith(
        "out of memory: BackendCompilerFailed: OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB; ")
    # Both say it, neither by class: the inner one, which the wrapper repeats, is quoted.
    inner = RuntimeError("CUDA error: out of memory\nCUDA kernel errors might be reported later")
    both = chained(BackendCompilerFailed("backend='inductor' raised:\nRuntimeError: CUDA error: out of memory"), inner)
    assert gpu.out_of_memory_message(both, gpu.holders()).startswith(
        "out of memory: RuntimeError: CUDA error: out of memory (raised as BackendCompilerFailed); ")


# 4 EiB: more than any machine can give, so the framework's own allocator fails at once, on the CPU too.
TOO_MUCH = (2**31, 2**31)


def test_tensorflows_own_out_of_memory_error_counts_and_its_other_errors_do_not():
    if reason := packages.unavailable_reason("tensorflow"):
        pytest.skip(reason)
    import tensorflow as tf

    with pytest.raises(tf.errors.ResourceExhaustedError) as raised:
        tf.zeros(TOO_MUCH, tf.uint8)
    assert gpu.is_out_of_memory(raised.value)
    assert not gpu.is_out_of_memory(tf.errors.InvalidArgumentError(None, None, "bad"))


def test_jaxs_own_out_of_memory_error_counts_and_its_other_errors_do_not():
    jax = pytest.importorskip("jax", reason="jax is not installed: its own out-of-memory error is not checked")

    with pytest.raises(jax.errors.JaxRuntimeError) as raised:
        jax.numpy.zeros(TOO_MUCH, jax.numpy.uint8).block_until_ready()
    assert gpu.is_out_of_memory(raised.value)
    assert not gpu.is_out_of_memory(jax.errors.JaxRuntimeError("INTERNAL: cuBLAS failed"))


def test_pytorchs_own_out_of_memory_error_counts():
    torch = pytest.importorskip("torch", reason="torch is not installed: its own out-of-memory error is not checked")

    # Made, not raised: only a GPU's allocator raises it.
    assert gpu.is_out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))


def test_out_of_memory_says_who_held_the_gpu_and_what_to_change(monkeypatch):
    monkeypatch.setattr(gpu, "nvidia_smi", lambda *arguments: "4121, 30210 MiB\n4122, 30118 MiB\n")
    message = gpu.out_of_memory_message(OutOfMemoryError("CUDA out of memory.\nmore"), gpu.holders())
    assert message.startswith("out of memory: OutOfMemoryError: CUDA out of memory.; 2 processes held the GPU then "
                              "(pid 4121: 30210 MiB; pid 4122: 30118 MiB)")
    assert "TF_FORCE_GPU_ALLOW_GROWTH=true" in message and "fewer trials" in message
    monkeypatch.setattr(gpu, "nvidia_smi", lambda *arguments: "")
    assert "nvidia-smi could not say" in gpu.out_of_memory_message(OutOfMemoryError(""), gpu.holders())


def item(solver: str, device: str):
    """A benchmark item as the plugin parametrizes it: a gpu one carries the gpu marker."""
    return SimpleNamespace(callspec=SimpleNamespace(params={"solver": solvers.get(solver), "device": device}),
                           get_closest_marker=lambda name: name == device or None)


def sees_a_gpu(*packages_that_do):
    return lambda package: None if package in packages_that_do else f"no GPU visible to {package}"


def test_a_jax_gpu_benchmark_runs_where_jax_sees_a_gpu_whatever_tensorflow_sees(monkeypatch):
    monkeypatch.setattr(packages, "unavailable_reason", lambda package: None)
    monkeypatch.setattr(packages, "gpu_unavailable_reason", sees_a_gpu("jax"))
    assert plugin.skip_reason(item("jax_step", "gpu")) is None
    assert plugin.skip_reason(item("tf1_while_loop", "gpu")) == "no GPU visible to tensorflow"
    assert plugin.skip_reason(item("torch_eager", "gpu")) == "no GPU visible to torch"
    assert plugin.skip_reason(item("numpy_loop", "gpu")) == "numpy_loop is cpu-only"


def test_a_gpu_benchmark_is_named_by_its_own_frameworks_view_of_the_device(monkeypatch):
    monkeypatch.setattr(packages, "gpu_name", lambda package: f"{package}'s GPU")
    assert environment.device_name(solvers.get("torch_compile"), "gpu") == "torch's GPU"
    assert environment.device_name(solvers.get("tf2_function"), "gpu") == "tensorflow's GPU"
    assert environment.device_name(solvers.get("tf2_function"), "cpu") == environment.cpu_model()


@pytest.fixture
def a_gpu(monkeypatch):
    """A driver that reports one H100 and CUDA 12.8."""
    monkeypatch.setattr(gpu, "models", lambda: (H100,))
    monkeypatch.setattr(gpu, "driver_cuda_version", lambda: "12.8")


def test_a_gpu_run_records_the_model_driver_cuda_and_memory_settings(a_gpu, monkeypatch):
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "true")  # the user's own, recorded as the run had it
    described = environment.describe("quick")
    assert described["nvidia_gpus"] == [H100] and described["cuda"]["driver"] == "12.8"
    assert described["gpu_memory_settings"] == {"TF_FORCE_GPU_ALLOW_GROWTH": "true",
                                                "XLA_PYTHON_CLIENT_PREALLOCATE": "true"}


def test_a_gpu_run_is_stored_apart_whether_or_not_tensorflow_is_installed(a_gpu, monkeypatch):
    assert storage.storage_key().endswith("-NVIDIA_H100_80GB_HBM3")
    monkeypatch.setattr(storage, "tensorflow_distribution", lambda: None)
    assert storage.storage_key() == "numpy-only-NVIDIA_H100_80GB_HBM3"


def test_runs_on_two_cuda_versions_are_not_like_with_like():
    then = {"nvidia_gpus": [H100], "cuda": {"driver": "12.8", "torch": "12.8"}}
    now = {"nvidia_gpus": [H100], "cuda": {"driver": "13.0", "torch": "13.0"}}
    assert environment_line(then, now) == "Not like with like: CUDA driver 12.8, torch 12.8 then, driver 13.0, torch 13.0 now."


def test_gpu_memory_is_given_back_and_its_peak_read_only_from_the_framework_that_ran(monkeypatch):
    calls = []
    cuda = SimpleNamespace(is_initialized=lambda: True, max_memory_allocated=lambda: 2**20,
                           empty_cache=lambda: calls.append("empty"), reset_peak_memory_stats=lambda: calls.append("reset"))
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    assert gpu.peak_bytes("torch") == 2**20 and gpu.peak_bytes("numba") is None
    gpu.released("torch")
    assert calls == ["empty", "reset"]

    def no_gpu(kind):
        raise RuntimeError(f"Unknown backend {kind}")

    monkeypatch.setitem(sys.modules, "jax", SimpleNamespace(devices=no_gpu))
    # bookkeeping: a framework that cannot say fails no trial
    assert worker_module.given_back("jax") == (None, None) and gpu.peak_at_open("jax") is None
    assert worker_module.given_back("torch") == (2**20, "trial")  # its peak was reset before the trial


@pytest.fixture
def fake_jax(monkeypatch):
    """JAX with one GPU whose peak_bytes_in_use, like the real one's, only ever rises; its backend not started until
    held["started"]."""
    held = {"peak": 0, "started": False}

    def devices(kind):
        assert held["started"], "reading the peak would have started JAX's backend"
        return [SimpleNamespace(memory_stats=lambda: {"peak_bytes_in_use": held["peak"]})]

    monkeypatch.setitem(sys.modules, "jax", SimpleNamespace(devices=devices))
    monkeypatch.setitem(sys.modules, "jax._src.xla_bridge",
                        SimpleNamespace(backends_are_initialized=lambda: held["started"]))
    return held


def test_a_jax_trials_peak_is_its_own_only_where_it_rose_during_the_trial(fake_jax):
    assert gpu.peak_at_open("jax") == 0  # no backend yet: JAX has held nothing, and none is started to say so
    fake_jax.update(started=True, peak=300)
    assert worker_module.given_back("jax", 0) == (300, "trial")
    assert gpu.peak_at_open("jax") == 300
    assert worker_module.given_back("jax", 300) == (300, "worker")  # the trial held at most 300
    fake_jax["peak"] = 500
    assert worker_module.given_back("jax", 300) == (500, "trial")
    assert worker_module.given_back("jax", None) == (500, "worker")  # not read at open: it cannot tell


def fake_jax_solver(held):
    """A GPU solver needing jax whose setup holds n bytes on the fake GPU."""

    @contextmanager
    def prepare(problem, device):
        held["started"] = True
        held["peak"] = max(held["peak"], problem.x.size)
        yield lambda steps: None

    return SimpleNamespace(name="jax_fake", needs=("jax",), devices=("gpu",), prepare=prepare,
                           unavailable_reason=lambda device: "a fake: never imported")


def test_the_worker_records_each_jax_trials_peak_with_its_scope(fake_jax, monkeypatch, capsys):
    monkeypatch.setitem(solvers.REGISTRY, "jax_fake", fake_jax_solver(fake_jax))
    monkeypatch.setattr(sys, "path", list(sys.path))  # serve puts the tree first
    monkeypatch.delenv(cpus.AFFINITY_VARIABLE, raising=False)
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    requests = [request for n in (300, 100, 500, 200, 300) for request in (
        {"op": "open", "solver": "jax_fake", "device": "gpu", "n": n, "steps": 1, "calls": 1, "warm_up": False},
        {"op": "close"})]
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(json.dumps(request) + "\n" for request in requests)))
    worker_module.serve(str(ROOT), ["jax_fake"])
    closed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "closed" in line]
    assert [(reply["gpu_peak_bytes"], reply["gpu_peak_scope"]) for reply in closed] == [
        (300, "trial"), (300, "worker"), (500, "trial"), (500, "worker"), (500, "worker")]


def test_a_trial_keeps_its_peak_and_what_it_is_the_peak_of_as_its_worker_closed_it():
    replies = {"open": {"setup_s": 0.5, "first_run_s": 0.1}, "round": {"round_s": 0.1},
               "close": {"closed": True, "fit": None, "gpu_peak_bytes": 300, "gpu_peak_scope": "worker"}}
    worker = SimpleNamespace(process=SimpleNamespace(pid=7), ask=lambda request: replies[request["op"]])
    trial = Measured({"solver": "jax_step", "device": "gpu", "n": 1000, "steps": 100, "calls": 1}, 1, 1).trial(worker)
    assert (trial.gpu_peak_bytes, trial.gpu_peak_scope) == (300, "worker")
