"""perf/report/answer.py: the README's answer table, written from a saved run between its markers."""

import pytest
from helpers import ROOT

from perf.report.__main__ import main
from perf.report.answer import END, START, AnswerError, answer_table, write_answer
from perf.report.runs import load_run

FULL_RUN = ROOT / "docs" / "results" / "full" / "full.json"


def test_the_readmes_answer_is_the_committed_runs_as_the_command_writes_it():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split(START)[1].split(END)[0]
    assert block == "\n" + "\n".join(answer_table(load_run(FULL_RUN)))


def test_only_the_block_between_the_markers_is_rewritten_and_again_gives_the_same(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"# Title\n\nbefore\n{START}\nstale table\n{END}\nafter\n", encoding="utf-8")
    write_answer(page, load_run(FULL_RUN))
    first = page.read_text(encoding="utf-8")
    assert first.startswith(f"# Title\n\nbefore\n{START}\n| solver |") and first.endswith(f"{END}\nafter\n")
    assert "stale table" not in first and "| `tf1_feed_dict` |" in first
    write_answer(page, load_run(FULL_RUN))
    assert page.read_text(encoding="utf-8") == first


@pytest.mark.parametrize("text", ["no markers", f"{END}\n{START}\n", f"{START}\n{END}\n{START}\n{END}\n"])
def test_a_file_without_one_block_is_refused_and_left_as_it_is(tmp_path, text, capsys):
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    with pytest.raises(AnswerError, match="needs one block from"):
        write_answer(page, load_run(FULL_RUN))
    assert main([str(FULL_RUN), "--out", str(tmp_path / "report"), "--no-plots", "--answer-into", str(page)]) == 2
    assert f"error: --answer-into {page}: {page} needs one block" in capsys.readouterr().err
    assert page.read_text(encoding="utf-8") == text
