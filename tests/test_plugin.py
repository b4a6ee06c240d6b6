"""The suite's pytest plugin apart from the runs it wires: a run's environment described once, then only read."""

from types import SimpleNamespace

import pytest

from perf import plugin


def test_a_run_describes_its_environment_once_and_every_reader_reads_that(monkeypatch):
    profiles = []
    monkeypatch.setattr(plugin.environment, "describe",
                        lambda profile, affinity: profiles.append(profile) or {"profile": profile})
    config = SimpleNamespace(stash=pytest.Stash(), getoption={"profile": "seed", "cpu_affinity": ()}.get)
    as_compared, as_saved = {}, {}
    plugin.pytest_benchmark_update_machine_info(config, as_compared)  # pytest-benchmark's, as it loads the saved run
    plugin.pytest_benchmark_update_machine_info(config, as_saved)  # and as it saves this one
    assert as_compared["fssgd"] is as_saved["fssgd"] is plugin.described(config) and profiles == ["seed"]
