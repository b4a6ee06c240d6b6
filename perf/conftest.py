"""Which benchmarks run (a study's own SOLVERS only, the studies beyond the per-step tables only when asked for), and
where their progress is said."""

import pytest

from perf.measure import progress

FULL_PROFILE_MARKER = ("full_profile: a study beyond the per-step tables; runs with --profile full "
                       "or when its module is named on the command line")


def pytest_configure(config):
    config.addinivalue_line("markers", FULL_PROFILE_MARKER)


def wanted(item, full_profile: bool, named: set) -> bool:
    solver = getattr(item, "callspec", None) and item.callspec.params.get("solver")
    # A study that only some solvers make sense for names them in its module's SOLVERS.
    if solver and solver.name not in getattr(getattr(item, "module", None), "SOLVERS", (solver.name,)):
        return False
    # Keeps `pytest perf/` quick: the sweeps cost minutes, and the per-step tables answer the question.
    return full_profile or not item.get_closest_marker("full_profile") or item.path in named


def pytest_collection_modifyitems(config, items):
    named = {(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args}
    full_profile = config.getoption("profile") == "full"
    deselected = [item for item in items if not wanted(item, full_profile, named)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if wanted(item, full_profile, named)]


@pytest.fixture(autouse=True)
def progress_on_the_terminal(request):
    """Long rounds say where they are, on a terminal only: never in the JSON, the tables or a CI log."""
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or not reporter.isatty:
        yield
        return

    def write(line):
        with capture.global_and_fixture_disabled():  # past pytest's capture of the test's own output
            reporter.ensure_newline()
            reporter.write_line(f"  {line}")

    with progress.reporting(write):
        yield
