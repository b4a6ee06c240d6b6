"""The README is a landing page: short, and every page it links to is in the repository."""

import re

from helpers import ROOT

README = ROOT / "README.md"
MOST_WORDS = 900  # what it is, the two commands, the answer, a sample, one paragraph a use; the rest is in docs/


def linked_paths(text: str) -> list[str]:
    """The repository paths of its Markdown links and images, without their #anchors; web addresses left out."""
    return [target.split("#")[0] for target in re.findall(r"\]\(([^)\s]+)\)", text)
            if not re.match(r"[a-z]+:", target) and not target.startswith("#")]


def test_the_readme_is_a_landing_page():
    assert len(README.read_text(encoding="utf-8").split()) <= MOST_WORDS


def test_every_page_the_readme_links_to_exists():
    paths = linked_paths(README.read_text(encoding="utf-8"))
    assert "docs/gate.md" in paths  # the links are found at all
    assert [path for path in paths if not (ROOT / path).exists()] == []


def test_a_link_to_a_missing_page_is_found():
    assert linked_paths("see [x](docs/nowhere.md#part) and [y](https://example.org/a)") == ["docs/nowhere.md"]
