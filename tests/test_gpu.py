"""The GPU half on the CPU: the memory settings every worker starts with, out-of-memory errors from each framework,
each framework's own view of the GPU, and what a GPU run records; the GPU itself faked."""

import sys
from types import SimpleNamespace

import pytest

import solvers
from perf import plugin, storage
from perf.measure import environment, gpu
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
    assert worker_module.given_back("jax") is None  # bookkeeping: a framework that cannot say fails no trial
