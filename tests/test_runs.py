"""perf.report.runs: the one reader of saved runs, its messages, and the newest run in a folder."""

import os

import pytest

from helpers import write_run as write
from perf.storage import RunError, newest_run, read_run

GOOD_RUN = {"machine_info": {"node": "test"}, "benchmarks": [
    {"fullname": "perf/test_fssgd.py::test_fssgd[numpy_loop-cpu-n100]", "stats": {"median": 0.001}}]}


def test_a_good_run_is_returned_as_is(tmp_path):
    assert read_run(write(tmp_path / "run.json", GOOD_RUN)) == GOOD_RUN


def test_a_missing_file_cannot_be_read(tmp_path):
    with pytest.raises(RunError, match=r"^cannot read it \(No such file or directory\)$"):
        read_run(tmp_path / "missing.json")


@pytest.mark.parametrize("raw", [b'{"machine_info": {', b'{"machine_info": "\xff"}'], ids=["truncated", "bad_utf8"])
def test_broken_json_is_named_as_such(tmp_path, raw):
    (tmp_path / "run.json").write_bytes(raw)
    with pytest.raises(RunError, match=r"^not valid JSON, truncated\? \(.+\)$"):
        read_run(tmp_path / "run.json")


@pytest.mark.parametrize("document", [
    [], {"benchmarks": []}, {"machine_info": {}, "benchmarks": {}},
    {"machine_info": {}, "benchmarks": [{"name": "x"}]},
    {"machine_info": {}, "benchmarks": [{"fullname": "x", "stats": None}]},
], ids=["list", "no_machine_info", "benchmarks_not_a_list", "no_fullname", "stats_not_a_dict"])
def test_foreign_json_is_not_a_saved_run(tmp_path, document):
    message = "not a pytest-benchmark saved run (needs machine_info and benchmarks with fullname and stats)"
    with pytest.raises(RunError) as raised:
        read_run(write(tmp_path / "run.json", document))
    assert str(raised.value) == message


def test_newest_run_is_the_latest_modified_json_in_any_subfolder(tmp_path):
    older = write(tmp_path / "0002_b.json", GOOD_RUN)
    (tmp_path / "machine").mkdir()
    newer = write(tmp_path / "machine" / "0001_a.json", GOOD_RUN)
    (tmp_path / "notes.txt").write_text("not a run")
    os.utime(older, (1_000, 1_000))
    os.utime(newer, (2_000, 2_000))
    assert newest_run(tmp_path) == newer


def test_a_folder_without_json_has_no_newest_run(tmp_path):
    (tmp_path / "notes.txt").write_text("not a run")
    with pytest.raises(RunError, match=r"^no \.json file in this folder$"):
        newest_run(tmp_path)
