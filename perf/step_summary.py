"""Where a gate's or a comparison's ending goes in Markdown: the --summary file and $GITHUB_STEP_SUMMARY, for both."""

import os
from pathlib import Path

SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"  # the file GitHub Actions shows on the job's page


class SummaryError(Exception):
    """A summary file that cannot be written; the message names it."""


def summary_targets(path: Path | None) -> list[tuple[Path, str]]:
    """Where a summary goes, and how: the --summary file afresh, and $GITHUB_STEP_SUMMARY appended to, as every step
    of a CI job writes there."""
    targets = [(Path(path), "w")] if path else []
    if os.environ.get(SUMMARY_VARIABLE):
        targets.append((Path(os.environ[SUMMARY_VARIABLE]), "a"))
    return targets


def check_summary_targets(path: Path | None) -> None:
    """Raise SummaryError where a summary could not be written, so that a command stops before timing anything."""
    for target, _ in summary_targets(path):
        try:
            with open(target, "a"):
                pass
        except OSError as error:
            raise SummaryError(f"cannot write the summary to {target}: {error.strerror or error}") from None


def write_summary(text: str, path: Path | None) -> None:
    """The summary to the --summary file and to $GITHUB_STEP_SUMMARY, each where given; SummaryError naming the path
    that could not be written."""
    for target, mode in summary_targets(path):
        try:
            with open(target, mode, encoding="utf-8") as summary:
                summary.write(text.rstrip("\n") + "\n\n")  # a blank line apart from what a later step appends
        except OSError as error:
            raise SummaryError(f"cannot write the summary to {target}: {error.strerror or error}") from None
