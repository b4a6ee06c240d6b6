"""Command-line options, the solver × device × n parametrization, and the skips that say why."""

import os
import tempfile
from pathlib import Path

import pytest

import solvers
from perf import environment, measure, runs, summary
from perf.profiles import DEFAULT_PROFILE, PROFILES
from solvers import tensorflow_support

pytest_plugins = ["pytester"]

DEFAULT_STORAGE = f"file://./{environment.SAVED_RUNS}"


def pytest_addoption(parser):
    group = parser.getgroup("fssgd-bench")
    group.addoption("--profile", choices=sorted(PROFILES), default=DEFAULT_PROFILE,
                    help=f"benchmark sizes and iterations (default: {DEFAULT_PROFILE})")
    group.addoption("--threads", type=tensorflow_support.threads_argument, default=tensorflow_support.DEFAULT_THREADS,
                    help="TensorFlow intra- and inter-op threads: N pins both to N; 0 (default) keeps "
                         "TensorFlow's own thread pools, as the seed program ran")
    group.addoption("--solvers", default=",".join(solvers.REGISTRY),
                    help="comma-separated solver names (default: all)")
    group.addoption("--devices", default=",".join(solvers.DEVICES),
                    help="comma-separated devices, cpu and/or gpu (default: both)")


def selected(config, option: str, known) -> list[str]:
    names = [name.strip() for name in config.getoption(option).split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise pytest.UsageError(f"--{option}: unknown {', '.join(unknown)}; choose from {', '.join(known)}")
    if not names:
        raise pytest.UsageError(f"--{option}: {config.getoption(option)!r} names none; choose from {', '.join(known)}")
    return names


def check_selection(config):
    """A selection of solvers and devices that leaves no benchmark is a mistake, not an empty run."""
    chosen = [solvers.get(name) for name in selected(config, "solvers", solvers.REGISTRY)]
    devices = selected(config, "devices", solvers.DEVICES)
    if not any(device in solver.devices for solver in chosen for device in devices):
        runs_on = "; ".join(f"{solver.name} runs on {'/'.join(solver.devices)}" for solver in chosen)
        raise pytest.UsageError(f"--solvers with --devices {','.join(devices)}: no benchmark left ({runs_on})")


def pytest_configure(config):
    check_selection(config)
    os.environ[tensorflow_support.THREADS_VARIABLE] = str(config.getoption("threads"))
    # One storage folder per environment; runs before pytest-benchmark's own (trylast) configure reads it.
    if getattr(config.option, "benchmark_storage", None) == DEFAULT_STORAGE:
        config.option.benchmark_storage = f"file://./{environment.runs_folder()}"
    check_benchmark_files(config)


def check_benchmark_files(config):
    """Stop before any benchmark runs when a saved run cannot be compared or a result could not be written.

    pytest-benchmark would find out only at the end, with a traceback, or compare against an older run than the
    one asked for. Nothing here modifies or deletes a saved run.
    """
    if not hasattr(config.option, "benchmark_storage"):
        return  # pytest-benchmark is not loaded (-p no:benchmark)
    storage = config.option.benchmark_storage
    if "://" not in storage:  # a bare path is a file storage to pytest-benchmark too
        storage = "file://" + storage
    if not storage.startswith("file://"):
        return  # elasticsearch storage: pytest-benchmark's own business
    folder = Path(storage[len("file://"):])
    from pytest_benchmark.utils import get_machine_id

    runs_folder = folder / get_machine_id()
    if config.option.benchmark_save or config.option.benchmark_autosave:
        if reason := unwritable(runs_folder, create=True):
            raise pytest.UsageError(f"--benchmark-save/--benchmark-autosave: cannot write to {runs_folder} ({reason})")
    if config.option.benchmark_json:
        path = Path(config.option.benchmark_json)
        if reason := "it is a folder" if path.is_dir() else unwritable(path.parent, create=False):
            raise pytest.UsageError(f"--benchmark-json: cannot write {path} ({reason})")
    if compare := config.option.benchmark_compare:
        check_saved_runs(folder, get_machine_id(), compare)


def unwritable(folder: Path, create: bool) -> str | None:
    """Why no file can be created in folder, or None; tried for real, as permissions lie to root and to read-only mounts."""
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as error:
        return error.strerror or str(error)


def check_saved_runs(folder: Path, machine_id: str, compare):
    """Refuse --benchmark-compare when a run it would read is unreadable or not pytest-benchmark's JSON."""
    from pytest_benchmark.storage.file import FileStorage

    # pytest-benchmark's own lookup, so the files checked are exactly the ones it would load.
    storage = FileStorage(folder, logger=None, default_machine_id=machine_id)
    candidates = storage.query("[0-9][0-9][0-9][0-9]_" if compare is True else compare)
    broken = [f"  {path}: {reason}" for path in candidates if (reason := unusable_run(path))]
    if broken:
        raise pytest.UsageError(
            "--benchmark-compare: these saved runs cannot be read, so nothing was run; they are left as they are. "
            "Move them out of the storage folder, or compare one good run with --benchmark-compare=NNNN:\n"
            + "\n".join(broken)
        )


def unusable_run(path: Path) -> str | None:
    try:
        runs.read_run(path)
    except runs.RunError as error:
        return str(error)
    return None


def pytest_generate_tests(metafunc):
    config = metafunc.config
    if "solver" in metafunc.fixturenames:
        metafunc.parametrize("solver", [
            pytest.param(solvers.get(name), id=name, marks=pytest.mark.tensorflow if "tensorflow" in solvers.get(name).needs else ())
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
    # Tests of a solver alone (tests/test_solvers.py) run it on its first device, the CPU.
    if solver and (reason := solver.unavailable_reason(device or solver.devices[0])):
        pytest.skip(reason)
    if request.node.get_closest_marker("tensorflow") and (reason := tensorflow_support.unavailable_reason()):
        pytest.skip(reason)
    if request.node.get_closest_marker("gpu") and not tensorflow_support.gpu_names():
        pytest.skip(tensorflow_support.NO_GPU)


def pytest_report_header(config):
    name = config.getoption("profile")
    return [f"fssgd-bench: profile {name} (--threads {tensorflow_support.threads_setting(config.getoption('threads'))}); "
            f"the whole profile took {PROFILES[name].wall_time_here} on a 2-core Xeon VM, a subset takes less"]


def pytest_benchmark_update_json(config, benchmarks, output_json):
    measure.anchor_to_reference(output_json["benchmarks"])


def pytest_benchmark_update_machine_info(config, machine_info):
    machine_info["fssgd"] = environment.describe(config.getoption("profile"))


@pytest.hookimpl(trylast=True)  # after pytest-benchmark's tables
def pytest_terminal_summary(terminalreporter, config):
    """The answer for this run, per device and size, when anything was timed (never under --benchmark-disable)."""
    session = getattr(config, "_benchmarksession", None)
    if session is None or session.disabled or not session.benchmarks:
        return
    versions = environment.versions()
    setting = ", ".join(filter(None, [
        f"profile {config.getoption('profile')}",
        versions["tensorflow"] and f"TensorFlow {versions['tensorflow']}",
        f"NumPy {versions['numpy']}",
        f"threads: {tensorflow_support.threads_setting(tensorflow_support.threads())}",
    ]))
    lines = summary.summary_lines([bench.as_dict(include_data=False) for bench in session.benchmarks], setting)
    if lines:
        terminalreporter.write_sep("-", "fssgd-bench: the answer for this run")
        for line in lines:
            terminalreporter.write_line(line)
