"""Every command the README and docs/ name answers --help without a traceback, and names only options and tox
environments that exist."""

import re
import shlex
import subprocess
import sys

import pytest
from helpers import ROOT

COMMANDS = ["pytest", "perf.gate", "perf.report", "perf.research.noise_study", "perf.research.releases",
            "perf.research.compare_study", "perf.research.worker_history", "perf.research.seed_programs",
            "solvers.prerequisites", "perf.report.device_check"]


@pytest.mark.parametrize("module", COMMANDS)
def test_each_command_answers_help(module):
    result = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage:" in result.stdout and "Traceback" not in result.stderr


def options_in(text: str) -> set[str]:
    """The options text names, each whole: '--cpu-affinity=CPUS' names --cpu-affinity, and never --cpu."""
    return set(re.findall(r"(?<![\w-])--\w[\w-]*", text))


def pytest_options() -> set[str]:
    """The options pytest --help names."""
    result = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return options_in(result.stdout)


def test_an_option_is_matched_whole_not_by_its_beginning():
    assert options_in("  --cpu-affinity=CPUS  pin the workers (with --devices cpu); a--b, --") == {
        "--cpu-affinity", "--devices"}


def test_pytest_help_names_the_suites_own_options():
    assert {"--profile", "--threads", "--solvers", "--devices", "--fail-on-slower"} <= pytest_options()


class Parsed(Exception):
    """Raised once a command's own parser accepted its arguments: nothing is run."""


def documented_commands(prefix: str = "python -m perf.") -> list[str]:
    """Every command starting with prefix in a code block of the README and the manual (docs/*.md), continuations
    joined, commands chained with && apart and comments dropped; those with a shell variable or a placeholder left
    out."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = path.read_text().split("```")[1::2]
        lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
        commands = [part.strip() for line in lines for part in line.split(" #")[0].split("&&")]
        found += [command for command in commands if command.startswith(prefix)
                  and not any(mark in command for mark in ("$", "...", "…", "<"))]
    return sorted(set(found))


@pytest.mark.parametrize("command", documented_commands())
def test_each_documented_command_is_accepted_by_its_parser(command, monkeypatch):
    import argparse
    import importlib
    import shlex

    module, *argv = shlex.split(command)[2:]
    depth = [0]

    def stopping_after(parse):
        def parsed(self, *args, **kwargs):  # a subcommand's parser is parsed inside the command's own
            depth[0] += 1
            try:
                result = parse(self, *args, **kwargs)
            finally:
                depth[0] -= 1
            if not depth[0]:
                raise Parsed(result)
            return result
        return parsed

    for name in ("parse_args", "parse_known_args"):
        monkeypatch.setattr(argparse.ArgumentParser, name, stopping_after(getattr(argparse.ArgumentParser, name)))
    entry = importlib.import_module(module if module.count(".") > 1 else f"{module}.__main__")
    with pytest.raises(Parsed):
        entry.main(argv)


def test_the_documented_commands_are_found():
    commands = documented_commands()
    assert "python -m perf.gate HEAD~1 HEAD" in commands and len(commands) > 10
    assert any(command.startswith("python -m perf.research.noise_study record") for command in commands)


def test_every_option_of_a_documented_pytest_command_exists():
    options = pytest_options()
    commands = documented_commands("pytest ")
    assert "pytest perf/ --cpu-affinity quiet --benchmark-compare --fail-on-slower=10% --decide" in commands
    for command in commands:
        for word in shlex.split(command):
            if word.startswith("--"):
                assert word.split("=")[0] in options, f"{command}: pytest has no {word}"


def test_every_documented_tox_environment_exists():
    pytest.importorskip("tox")  # the dev extra's
    names = {name for command in documented_commands("tox ") for words in [shlex.split(command)]
             for option, value in zip(words, words[1:]) if option == "-e" for name in value.split(",")}
    assert {"tf-cpu", "tf-gpu", "peers", "peers-gpu", "tf212-cpu"} <= names
    result = subprocess.run([sys.executable, "-m", "tox", "config", "-e", ",".join(sorted(names)), "-k",
                             "description"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
