"""The glossary in docs/measurement.md defines every word the code prints as a verdict, an ending or a warning."""

from helpers import ROOT
from perf.judge import words

MEASUREMENT = ROOT / "docs" / "measurement.md"


def glossary_words(text: str) -> list[str]:
    """The first column of the glossary's table, as written."""
    section = text.split("\n## Glossary\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [row.split("|")[1].strip() for row in rows[2:]]  # past the header and its rule


def undefined(text: str) -> list[str]:
    return [word for word in words.PRINTED if word not in glossary_words(text)]


def test_every_word_the_code_prints_is_in_the_glossary():
    assert undefined(MEASUREMENT.read_text()) == []


def test_a_glossary_that_lacks_a_printed_word_is_caught():
    text = MEASUREMENT.read_text()
    without = "\n".join(line for line in text.splitlines() if not line.startswith("| CLEAR |"))
    assert undefined(without) == ["CLEAR"]


def test_each_word_has_one_row_whatever_its_case():
    # 'pass' (a batch of trials) and 'PASS' (once the gate's verdict) were one word with two meanings.
    found = [word.lower() for word in glossary_words(MEASUREMENT.read_text())]
    assert len(found) == len(set(found))


def test_ci_prints_not_gated_as_the_code_spells_it():
    for script in (ROOT / ".ci" / "run", ROOT / "docs" / "github-actions-example.yml"):
        assert f": {words.NOT_GATED} - " in script.read_text(), script
