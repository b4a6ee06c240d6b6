"""Command-line options, the solver × device × n parametrization, and the skips that say why."""

import os

import pytest

import solvers
from perf import environment
from perf.profiles import DEFAULT_PROFILE, PROFILES
from solvers import tensorflow_support

pytest_plugins = ["pytester", "perf.gate"]

DEFAULT_STORAGE = "file://./.benchmarks"


def pytest_addoption(parser):
    group = parser.getgroup("fssgd-bench")
    group.addoption("--profile", choices=sorted(PROFILES), default=DEFAULT_PROFILE,
                    help=f"benchmark sizes and iterations (default: {DEFAULT_PROFILE})")
    group.addoption("--threads", type=int, default=1,
                    help="TensorFlow intra- and inter-op threads, pinned so runs compare (default: 1)")
    group.addoption("--solvers", default=",".join(solvers.REGISTRY),
                    help="comma-separated solver names (default: all)")
    group.addoption("--devices", default=",".join(solvers.DEVICES),
                    help="comma-separated devices, cpu and/or gpu (default: both)")


def selected(config, option: str, known) -> list[str]:
    names = [name.strip() for name in config.getoption(option).split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise pytest.UsageError(f"--{option}: unknown {', '.join(unknown)}; choose from {', '.join(known)}")
    return names


def pytest_configure(config):
    selected(config, "solvers", solvers.REGISTRY)
    selected(config, "devices", solvers.DEVICES)
    os.environ[tensorflow_support.THREADS_VARIABLE] = str(config.getoption("threads"))
    # One storage folder per environment; runs before pytest-benchmark's own (trylast) configure reads it.
    if getattr(config.option, "benchmark_storage", None) == DEFAULT_STORAGE:
        config.option.benchmark_storage = f"{DEFAULT_STORAGE}/{environment.storage_key()}"


def pytest_generate_tests(metafunc):
    config = metafunc.config
    if "solver" in metafunc.fixturenames:
        metafunc.parametrize("solver", [
            pytest.param(solvers.get(name), id=name, marks=pytest.mark.tensorflow if solvers.get(name).needs_tensorflow else ())
            for name in selected(config, "solvers", solvers.REGISTRY)
        ])
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", [
            pytest.param(device, id=device, marks=pytest.mark.gpu if device == "gpu" else ())
            for device in selected(config, "devices", solvers.DEVICES)
        ])
    if "n" in metafunc.fixturenames:
        sizes = PROFILES[config.getoption("profile")].sizes
        metafunc.parametrize("n", sizes, ids=[f"n{n}" for n in sizes])


def timing_refused(config) -> bool:
    """pytest-benchmark silently stops timing under xdist; we fail loudly instead."""
    under_xdist = config.getoption("dist", "no") != "no" or hasattr(config, "workerinput")
    return under_xdist and not (config.getoption("benchmark_disable") or config.getoption("benchmark_skip"))


@pytest.fixture(scope="session")
def profile(request):
    return PROFILES[request.config.getoption("profile")]


@pytest.fixture(autouse=True)
def skip_unavailable(request):
    """The one place that skips (or refuses), from the markers and parameters each test carries."""
    if "benchmark" in request.fixturenames and timing_refused(request.config):
        pytest.fail("benchmarks cannot be timed under pytest-xdist (pytest-benchmark would silently disable them): "
                    "run `pytest perf/` without -n, or add --benchmark-disable to only check their answers", pytrace=False)
    params = getattr(request.node, "callspec", None) and request.node.callspec.params or {}
    solver, device = params.get("solver"), params.get("device")
    if solver and device and device not in solver.devices:
        pytest.skip(f"{solver.name} is {'/'.join(solver.devices)}-only")
    if request.node.get_closest_marker("tensorflow") and (reason := tensorflow_support.unavailable_reason()):
        pytest.skip(reason)
    if request.node.get_closest_marker("gpu") and not tensorflow_support.gpu_names():
        pytest.skip("no GPU visible to TensorFlow")


def pytest_benchmark_update_machine_info(config, machine_info):
    machine_info["fssgd"] = environment.describe(config.getoption("profile"))
