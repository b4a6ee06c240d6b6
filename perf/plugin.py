"""The suite's pytest plugin, loaded by the root conftest.py: the options, the solver × device × n parametrization, the
skips that say why, the fixtures that time a run, and the hooks that record it and print its answer. One module, as
perf/ and tests/ take the same options, parametrization and skips, and the hooks read them."""

import functools
import inspect
import os
import random
from pathlib import Path

import pytest
from pytest_benchmark.session import PerformanceRegression

import solvers
from perf.judge import words
from perf.judge.outcome import ALLOW_UNAVAILABLE, DEFAULT_THRESHOLD, NOT_MEASURED, NotMeasured, threshold_argument
from perf.measure import count, counting, cpus, environment, gpu
from perf.measure.benchmark import Measurement
from perf.measure.pool import Pool
from perf.measure.profiles import (DEFAULT_PROFILE, PROFILES, SHRINK_VARIABLE, profile_named, seconds_argument,
                                   shrink_factor)
from perf.measure.schedule import Schedule
from perf.gate import decide
from perf.report import compare, summary
from perf.report.rows import derived_keys, rows_of
from perf.step_summary import SUMMARY_VARIABLE, SummaryError, check_summary_targets, summarized
from perf.storage import DEFAULT_STORAGE, RunError, StorageError, check_storage, read_run, runs_folder
from solvers import packages, tensorflow_support

SESSION = pytest.StashKey()
ORDER_SEED = pytest.StashKey()  # the seed of the passes' benchmark order, recorded in each benchmark's extra_info
STORAGE_WARNINGS = pytest.StashKey()  # saved runs left out of the comparison, said with it
ENVIRONMENT = pytest.StashKey()  # machine_info.fssgd, described once (described())
# The comparison's ending, to be written in Markdown once pytest's exit status is settled (pytest_unconfigure).
SUMMARY = pytest.StashKey()
REGRESSED = ("--benchmark-compare-fail: pytest-benchmark found the absolute times above regressed (they move with the "
             "machine's speed; --fail-on-slower judges the paired ratios)")


def pytest_addoption(parser):
    group = parser.getgroup("fssgd-bench")
    group.addoption("--profile", choices=sorted(PROFILES), default=DEFAULT_PROFILE,
                    help=f"benchmark sizes, step counts and trials (default: {DEFAULT_PROFILE})")
    group.addoption("--threads", type=environment.threads_argument, default=tensorflow_support.DEFAULT_THREADS,
                    help="TensorFlow intra- and inter-op threads: N pins both to N; 0 (default) keeps "
                         "TensorFlow's own thread pools, as the seed program ran")
    group.addoption("--cpu-affinity", type=cpus.affinity_argument, default=(), metavar="LIST",
                    help="the CPUs every worker process is timed on, as taskset -c takes them: 1, 0,1, 0-1, or quiet: "
                         "the one taking the fewest block-device interrupts, as the gate's default (default: free, as "
                         "the seed ran); recorded, and runs of two settings are never compared")
    group.addoption("--budget", type=seconds_argument, metavar="SECONDS",
                    help="after the profile's trials, benchmarks not yet precise enough to call the comparison's "
                         "threshold (--fail-on-slower, default 10%%) that can still become so get more, in passes of "
                         "fresh workers; none starts after this many seconds of such passes (default: the profile's, "
                         + ", ".join(
                             f"{name} {profile.budget_s:.0f}" for name, profile in PROFILES.items())
                         + "; 0: the profile's trials only)")
    group.addoption("--count", action="store_true",
                    help="after the timing, also count each CPU benchmark's instructions a step under valgrind's "
                         f"callgrind, in {counting.COUNT_PROCESSES} fresh processes, beside numpy_loop's: the answer "
                         "splits each time ratio into more work and a slower rate, the run saves the counts, and a "
                         "comparison of two counted runs judges them (docs/measurement.md, Counted)")
    group.addoption("--solvers", default=",".join(solvers.REGISTRY),
                    help="comma-separated solver names (default: all)")
    group.addoption("--devices", help="comma-separated devices, cpu and/or gpu (default: each where it can run; one "
                                      "named here that nothing could be timed on leaves a comparison NOT MEASURED)")
    group.addoption("--fail-on-slower", type=threshold_argument, metavar="PCT",
                    help="with --benchmark-compare: exit 1 naming each benchmark judged slower than the saved run by "
                         "more than PCT (e.g. 10%%), from each benchmark's ratio to numpy_loop over both runs' "
                         f"trials; without it the verdicts are printed at {DEFAULT_THRESHOLD:.0%}% and nothing fails")
    group.addoption("--decide", action="store_true",
                    help="with --benchmark-compare: the rows still CAN'T TELL are handed to the gate (python -m "
                         "perf.gate) in the same command, the saved run's commit against the working tree, those "
                         f"benchmarks alone, on a screening budget of {decide.GATE_BUDGET_S_BASE} s and "
                         f"{decide.GATE_BUDGET_S_PER_ROW} s a row, at most {decide.GATE_BUDGET_S} s; its verdicts become "
                         "theirs (docs/usage.md, Comparing saved runs)")
    group.addoption(ALLOW_UNAVAILABLE, action="store_true",
                    help="with --benchmark-compare: a device named by --devices that nothing could be timed on "
                         "is allowed, said, instead of leaving the comparison NOT MEASURED")
    group.addoption("--summary", type=Path, metavar="FILE",
                    help=f"with --benchmark-compare: also write its ending in Markdown here (${SUMMARY_VARIABLE}, "
                         "where set, is appended to without it): the verdict, the comparison's table, this run's "
                         "answer")


def selected(config, option: str, known) -> list[str]:
    """The names an option gives (all known ones where it is not given), each checked."""
    if (given := config.getoption(option)) is None:
        return list(known)
    names = [name.strip() for name in given.split(",") if name.strip()]
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
    try:
        shrink_factor()
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    comparing = config.getoption("benchmark_compare", None)
    for option, why in (("--fail-on-slower", "a saved run to compare this one with"),
                        ("--decide", "the gate decides the rows a comparison with a saved run could not tell"),
                        ("--summary", "it is the comparison's ending in Markdown")):
        if config.getoption(option) and not comparing:
            raise pytest.UsageError(f"{option} needs --benchmark-compare: {why}")
    if config.getoption("count"):
        if config.getoption("benchmark_disable"):
            raise pytest.UsageError("--count needs the benchmarks timed: it counts after the timing, not under "
                                    "--benchmark-disable")
        if reason := count.unavailable_reason():
            raise pytest.UsageError(f"--count: cannot count here: {reason}")
    if comparing:
        try:
            check_summary_targets(config.getoption("summary"))  # before anything is timed
        except SummaryError as error:
            raise pytest.UsageError(str(error)) from None
    os.environ[tensorflow_support.THREADS_VARIABLE] = str(config.getoption("threads"))
    os.environ.update(gpu.memory_settings())  # before any framework here starts on a GPU the workers share
    config.stash[ORDER_SEED] = random.SystemRandom().randrange(2**32)
    # One storage folder per environment; runs before pytest-benchmark's own (trylast) configure reads it.
    if getattr(config.option, "benchmark_storage", None) == DEFAULT_STORAGE:
        config.option.benchmark_storage = f"file://./{runs_folder(config.getoption('cpu_affinity'))}"
    like = lambda fssgd: not compare.differences(fssgd, described(config), compare.ENVIRONMENT)  # noqa: E731
    try:
        config.stash[STORAGE_WARNINGS] = check_storage(config.option, like)
    except StorageError as error:
        raise pytest.UsageError(str(error)) from None
    except NotMeasured as error:
        summarized(compare.comparison_summary(NOT_MEASURED, [], [str(error)], [], []),  # pytest.exit gives this status
                   config.getoption("summary"), NOT_MEASURED, pytest.ExitCode.USAGE_ERROR, usage_error)
        pytest.exit(f"fssgd-bench: {words.NOT_MEASURED}: {error}", returncode=NOT_MEASURED)


def pytest_generate_tests(metafunc):
    config = metafunc.config
    if "solver" in metafunc.fixturenames:
        metafunc.parametrize("solver", [
            pytest.param(solver, id=solver.name, marks=pytest.mark.tensorflow if "tensorflow" in solver.needs else ())
            for solver in map(solvers.get, selected(config, "solvers", solvers.REGISTRY))
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
    return profile_named(request.config.getoption("profile"))


@pytest.fixture(scope="session")
def schedule(request, profile):
    """Every benchmark of the run that will not skip, planned by its module's plan(); their trials are taken in
    passes (perf/measure/schedule.py) when the first of them is reported. The trial order's seed is recorded."""
    config = request.config
    with Pool(profile.trials, config.getoption("threads"), selected(config, "solvers", solvers.REGISTRY),
              config.getoption("cpu_affinity")) as pool:
        planned = Schedule(pool, profile, config.stash[ORDER_SEED], comparison_threshold(config),
                           config.getoption("budget"), counting.COUNT_PROCESSES if config.getoption("count") else 0)
        if not timing_refused(config) and not config.getoption("benchmark_disable"):
            for item in request.session.items:
                if "measurement" in item.fixturenames and skip_reason(item) is None:
                    planned.add(item.nodeid, *planned_by(item, profile))
        yield planned


def comparison_threshold(config) -> float:
    """The change a comparison of this run must call: --fail-on-slower's, else the verdicts' default."""
    return config.getoption("fail_on_slower") or DEFAULT_THRESHOLD


def planned_by(item, profile):
    """(solver, device, Plan) of a benchmark test, from its module's plan(), given whichever of the test's parameters
    and the profile it names."""
    params = {**item.callspec.params, "profile": profile}
    wanted = inspect.signature(item.module.plan).parameters
    return params["solver"], params["device"], item.module.plan(**{name: params[name] for name in wanted})


@pytest.fixture
def measurement(request, schedule, profile):
    """This benchmark's measurement: Measurement.reported(benchmark) hands its rounds to pytest-benchmark."""
    solver, device, plan = planned_by(request.node, profile)
    return Measurement(schedule, request.node.nodeid, solver, device, plan, profile)


@pytest.fixture(autouse=True)
def skip_unavailable(request):
    """The one place that skips (or refuses), from the markers and parameters each test carries."""
    if "benchmark" in request.fixturenames and timing_refused(request.config):
        pytest.fail("benchmarks cannot be timed under pytest-xdist (pytest-benchmark would silently disable them): "
                    "run `pytest perf/` without -n, or add --benchmark-disable to only check their answers", pytrace=False)
    if reason := skip_reason(request.node):
        pytest.skip(reason)


def skip_reason(item) -> str | None:
    """Why a test cannot run here, from its parameters and markers; None where it can."""
    params = getattr(item, "callspec", None) and item.callspec.params or {}
    solver, device = params.get("solver"), params.get("device")
    if solver and device and device not in solver.devices:
        return f"{solver.name} is {'/'.join(solver.devices)}-only"
    # Tests of a solver alone (tests/test_solvers.py) run it on its first device, the CPU. On a GPU each solver asks
    # its own framework (a JAX benchmark runs wherever JAX sees one, whatever TensorFlow sees).
    if solver and (reason := solver.unavailable_reason(device or solver.devices[0])):
        return reason
    if item.get_closest_marker("tensorflow") and (reason := packages.unavailable_reason("tensorflow")):
        return reason
    return None


def pytest_report_header(config):
    name, shrink = config.getoption("profile"), shrink_factor()
    profile = profile_named(name)
    budget_s = profile.budget_s if config.getoption("budget") is None else config.getoption("budget")
    more = (f", and more within {budget_s:.3g} s of passes where they cannot yet call "
            f"{comparison_threshold(config):.0%}" if budget_s else "")
    affinity = cpus.affinity_setting(config.getoption("cpu_affinity"))
    if shrink != 1:
        return [f"fssgd-bench: profile {name} {words.SHRUNK} {shrink:,}x by {SHRINK_VARIABLE} (test tooling: not the profile's "
                f"figures; {affinity}){more}"]
    return [f"fssgd-bench: profile {name}, {profile.trials} trials a benchmark{more}, each in a worker process of its "
            f"own (--threads {environment.threads_setting(config.getoption('threads'))}, {affinity}); on a terminal, "
            f"each pass is said as it ends"]


def pytest_benchmark_update_json(config, benchmarks, output_json):
    """The keys derived from the trials, beside them, for readers of the JSON (docs/extra-info.md)."""
    for row in rows_of(output_json["benchmarks"])[0]:
        # row.info is the benchmark's own extra_info. The order's seed is kept there, not in machine_info: drawn anew
        # every run, it would make pytest-benchmark warn on every comparison that the machine differs.
        row.info.update(derived_keys(row), order_seed=config.stash[ORDER_SEED],
                        **{key: described(config)[key] for key in ("cpu_affinity", "cpus_available")})


def described(config) -> dict:
    """The run's environment (machine_info.fssgd), described by its first reader, then only read: at our configure
    only for a comparison (describing imports TensorFlow, which runs that read none of it need not)."""
    if ENVIRONMENT not in config.stash:
        config.stash[ENVIRONMENT] = environment.describe(config.getoption("profile"), config.getoption("cpu_affinity"))
    return config.stash[ENVIRONMENT]


def pytest_benchmark_update_machine_info(config, machine_info):
    machine_info["fssgd"] = described(config)


@pytest.hookimpl(wrapper=True)
def pytest_benchmark_compare_machine_info(config, benchmarksession, machine_info, compared_benchmark):
    """pytest-benchmark's own warning that the machines differ names its storage relative to the working directory,
    and raises where the storage lies outside it (ionelmc/pytest-benchmark#217): a traceback for a valid
    --benchmark-storage. What differs is said in one line after the tables (perf/report/compare.py)."""
    try:
        return (yield)
    except ValueError:
        benchmarksession.logger.warning("The saved run was made on another machine or setup than this one.")
        return None


def pytest_sessionstart(session):
    session.config.stash[SESSION] = session  # its exit status is set from the comparison


@pytest.hookimpl(wrapper=True)  # around pytest-benchmark's tables: what follows them, and its traceback caught
def pytest_terminal_summary(terminalreporter, config):
    """The answer for this run, per device and size, and its comparison with a saved run, when anything was timed
    (never under --benchmark-disable). pytest-benchmark's own --benchmark-compare-fail ends the run with its
    message and exit status 1, not a traceback."""
    try:
        result, regressed = (yield), False
    except PerformanceRegression:
        result, regressed = None, True
    session = getattr(config, "_benchmarksession", None)
    if session is None:
        return result
    if session.disabled or not session.benchmarks:
        if config.getoption("benchmark_compare"):
            why = "--benchmark-disable" if session.disabled else "every one skipped or deselected"
            why = f"--benchmark-compare: no benchmark was timed ({why})"
            not_measured(config, terminalreporter, why)
            config.stash[SUMMARY] = ([], [why], [], [])
        return result
    benchmarks = [bench.as_dict(include_data=False) for bench in session.benchmarks]
    answer = summary.summary_lines(benchmarks, summary.setting(described(config)), summary.free_on(described(config)))
    write_section(terminalreporter, "fssgd-bench: the answer for this run", answer)
    if config.getoption("benchmark_compare"):
        compared_with_saved_run(config, terminalreporter, session, benchmarks, answer)
    if regressed:
        terminalreporter.write_line(f"fssgd-bench: {words.FAILED} {REGRESSED}", red=True, bold=True)
        config.stash[SESSION].exitstatus = pytest.ExitCode.TESTS_FAILED
        if SUMMARY in config.stash:
            config.stash[SUMMARY][0].append(REGRESSED)
    return result


def compared_with_saved_run(config, terminalreporter, session, benchmarks, answer: list[str]) -> None:
    """This run's verdicts against the saved run pytest-benchmark loaded (by its path), and the run's exit status from
    them (docs/usage.md, "How a gate or a comparison ends"). Its summary, with the answer, is written once pytest's
    exit status is settled (pytest_unconfigure)."""
    devices = config.getoption("devices") and selected(config, "devices", solvers.DEVICES)  # those named, required
    # The gate the CAN'T TELL line names is the one --decide runs: on this run's CPUs and threads.
    gate = {"affinity": config.getoption("cpu_affinity"), "threads": config.getoption("threads")}
    decider = config.getoption("decide") and functools.partial(decide.decided_by_gate, say=terminalreporter.write_line,
                                                               **gate)
    endings = []
    for path in session.compared_mapping or {}:  # pytest-benchmark compares with one saved run, here by its path
        saved = Path(getattr(session.storage, "path", "")) / path  # relative to its file storage
        try:
            found = compare.comparison(read_run(saved), str(path), described(config),
                                       benchmarks, comparison_threshold(config), devices or (),
                                       config.getoption("allow_unavailable_devices"),
                                       functools.partial(decide.gate_line, **gate), decider or None)
        except RunError as error:
            found = compare.Comparison([], [], f"cannot read {saved} again to compare with it: {error}")
        write_section(terminalreporter, "fssgd-bench: compared with a saved run",
                      config.stash[STORAGE_WARNINGS] + found.lines)
        endings.append(found)
    status, failures, unmeasured = compare.run_ending(endings, config.getoption("fail_on_slower"))
    config.stash[SUMMARY] = (failures, unmeasured, endings, answer)
    for why in failures:  # a failure is the run's ending, and what was not measured beside it is said too
        terminalreporter.write_line(f"fssgd-bench: {words.FAILED} {why}", red=True, bold=True)
        config.stash[SESSION].exitstatus = pytest.ExitCode.TESTS_FAILED
    for why in unmeasured:
        not_measured(config, terminalreporter, why)


def usage_error(why: str):
    """A summary that cannot be written before anything is timed (its targets were checked just before): a usage
    error, as pytest says one."""
    raise pytest.UsageError(why)


def pytest_unconfigure(config):
    """The comparison's summary, written only now: pytest's exit status is settled after the comparison ends (a
    failed test, --benchmark-compare-fail, pytest's --max-warnings), and the summary says the status pytest returns.
    One that cannot be written is said, and is a usage error unless the run already failed."""
    if SUMMARY not in config.stash:
        return
    failures, unmeasured, endings, answer = config.stash[SUMMARY]
    session = config.stash[SESSION]
    if session.testsfailed:  # a wrong answer fails its benchmark's test
        failures = [f"{session.testsfailed} test{'s' * (session.testsfailed != 1)} failed", *failures]
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    say = lambda why: terminal and terminal.write_line(f"fssgd-bench: error: {why}", red=True, bold=True)  # noqa: E731
    text = compare.comparison_summary(int(session.exitstatus), failures, unmeasured, list(endings), list(answer))
    session.exitstatus = summarized(text, config.getoption("summary"), session.exitstatus, pytest.ExitCode.USAGE_ERROR,
                                    say)


def not_measured(config, terminalreporter, why: str) -> None:
    """Say what could not be measured, and end the run NOT MEASURED unless it already failed."""
    terminalreporter.write_line(f"fssgd-bench: {words.NOT_MEASURED}: {why}", red=True, bold=True)
    if config.stash[SESSION].exitstatus == pytest.ExitCode.OK:
        config.stash[SESSION].exitstatus = NOT_MEASURED


def write_section(terminalreporter, title: str, lines: list[str]) -> None:
    if lines:
        terminalreporter.write_sep("-", title)
        for line in lines:
            terminalreporter.write_line(line)
