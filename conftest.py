"""The user's conftest: loads the suite's pytest plugin, here as the one conftest every run loads, perf/'s and
tests/' alike."""

pytest_plugins = ["perf.plugin"]
