"""perf/report/answer.py: the README's answer table, written from a saved run between its markers."""

import pytest
from helpers import ROOT, benchmark_entry, result_document, write_run

from perf.report.__main__ import main
from perf.report.answer import END, START, AnswerError, answer_lines, write_answer
from perf.report.handoff import read_handoff
from perf.report.runs import load_run

FULL_RUN = ROOT / "docs" / "results" / "full" / "full.json"
HANDOFF_STUDY = ROOT / "docs" / "results" / "handoff"


def test_the_readmes_answer_is_the_committed_runs_as_the_command_writes_it():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split(START)[1].split(END)[0]
    assert block == "\n" + "\n".join(answer_lines(load_run(FULL_RUN), read_handoff(HANDOFF_STUDY)))


def test_the_answers_words_say_only_what_the_run_measured(tmp_path):
    # One size, no studies: where a step goes, and neither a crossing nor time to accuracy.
    ratios = {"tf1_feed_dict": 30.0, "tf1_feed_dict_no_loss": 22.0, "tf1_constant": 20.0,
              "tf1_constant_no_loss": 13.0, "tf1_while_loop": 1.0}
    entries = [benchmark_entry(solver, "cpu", 1_000, 10.0 * ratio, ratio=ratio, spread=0.0)
               for solver, ratio in ratios.items()] + [benchmark_entry("numpy_loop", "cpu", 1_000, 10.0)]
    words = answer_lines(load_run(write_run(tmp_path / "quick.json", result_document(entries, profile="quick"))))
    assert words[-3:] == ["", "- A `tf1_feed_dict` step (300 µs at n = 1,000 in this run) is mostly fixed cost: the `Session.run` "
                     "call 40%, the feed's float64 → float32 copies 33%, fetching the loss 27%, the arithmetic 3%; the parts "
                     "interact, so they need not add up to the whole.", ""]
    # The full run also says where one call a step overtakes numpy_loop, and what standardizing x does.
    words = " ".join(answer_lines(load_run(FULL_RUN)))
    assert "interpolated between measured sizes: `tf1_callable` crosses at n ≈" in words
    assert "Standardizing x does more" in words


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
