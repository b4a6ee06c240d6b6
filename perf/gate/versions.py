"""The versions a gate compares: a git revision checked out in a worktree, the working tree, or another interpreter."""

import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from perf.measure.worker import ROOT, Version


class GateError(Exception):
    """The versions cannot be compared; the message says why."""


class GateUsageError(GateError):
    """The command names what is not there (a revision, a solver): the user's to correct, before anything is timed."""


def git(*args, cwd=ROOT) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode:
        raise GateError(f"git {' '.join(args)}: {result.stderr.strip() or 'failed'}")
    return result.stdout.strip()


def has_commit(commit: str) -> bool:
    """Whether this repository has the commit, so that a gate can check it out."""
    try:
        git("cat-file", "-e", f"{commit}^{{commit}}")
    except (GateError, OSError):
        return False
    return True


@contextmanager
def checked_out(spec: str, label: str):
    """The Version that spec names, `SPEC[:NAME=VALUE,...]` with environment variables for its workers (the same
    interpreter with oneDNN on and off); a revision is checked out in a temporary worktree for the duration."""
    spec, _, settings = spec.partition(":")
    try:
        variables = dict(setting.split("=", 1) for setting in settings.split(",") if setting)
    except ValueError:
        raise GateUsageError(f"{settings!r}: environment settings are NAME=VALUE, comma-separated") from None
    with plain_checked_out(spec, label) as version:
        yield version.with_env(**variables) if variables else version


@contextmanager
def plain_checked_out(spec: str, label: str):
    if spec == ".":
        yield Version(label, "the working tree", ROOT, sys.executable)
        return
    if Path(spec).is_file() and os.access(spec, os.X_OK):
        yield Version(label, f"the working tree run by {spec}", ROOT, spec)
        return
    try:
        commit = git("rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}")
    except GateError:
        raise GateUsageError(f"{spec!r} is neither a git revision of this repository (is the history there? a shallow "
                        f"clone lacks the commit before HEAD), nor '.', nor an executable Python interpreter") from None
    with tempfile.TemporaryDirectory(prefix="fssgd-gate-") as folder:
        tree = Path(folder) / "tree"
        git("worktree", "add", "--detach", "--quiet", str(tree), commit)
        try:
            yield Version(label, f"{spec} ({commit[:10]})", tree, sys.executable)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
