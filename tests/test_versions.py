"""What the gate compares (perf/gate/versions.py): the working tree, an interpreter, a revision."""

import sys

import pytest

from perf.gate.versions import ROOT, GateError, checked_out


def test_a_version_is_the_working_tree_an_interpreter_or_a_revision_in_a_worktree_removed_after():
    with checked_out(".", "candidate") as version:
        assert (version.tree, version.python) == (ROOT, sys.executable)
    with checked_out(sys.executable, "baseline") as version:
        assert version.tree == ROOT and version.description.endswith(sys.executable)
    with checked_out("HEAD", "baseline") as version:
        tree = version.tree
        assert (tree / "solvers" / "__init__.py").is_file() and tree != ROOT
    assert not tree.exists()


def test_a_spec_that_names_nothing_is_refused_with_what_it_may_be():
    with pytest.raises(GateError, match="neither a git revision of this repository.*nor an executable Python"):
        with checked_out("no-such-revision-or-python", "baseline"):
            pass
