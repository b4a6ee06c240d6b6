"""Where a gate's or a comparison's ending goes in Markdown: the --summary file and $GITHUB_STEP_SUMMARY, for both."""

import os
from pathlib import Path

SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"  # the file GitHub Actions shows on the job's page


class SummaryError(Exception):
    """A summary file that cannot be written; the message names it."""


def check_summary_targets(path: Path | None) -> None:
    """Raise SummaryError where a summary could not be written, so that a command stops before timing anything."""
    write_summary(None, path)


def write_summary(text: str | None, path: Path | None) -> None:
    """The summary to the --summary file afresh and appended to $GITHUB_STEP_SUMMARY, as every step of a CI job writes
    there, each where given (None: each opened to append, nothing written); SummaryError naming what cannot be."""
    targets = [(Path(path), "w")] if path else []
    if os.environ.get(SUMMARY_VARIABLE):
        targets.append((Path(os.environ[SUMMARY_VARIABLE]), "a"))
    for target, mode in targets:
        try:
            with open(target, "a" if text is None else mode, encoding="utf-8") as summary:
                if text is not None:
                    summary.write(text.rstrip("\n") + "\n\n")  # a blank line apart from what a later step appends
        except OSError as error:
            raise SummaryError(f"cannot write the summary to {target}: {error.strerror or error}") from None


def summarized(text: str, path: Path | None, status, usage_error, say):
    """The exit status once text is written where the summary goes: status, or, where it cannot be written (said by
    say(why)), usage_error in place of a pass: a CI page that shows nothing reads as nothing wrong."""
    try:
        write_summary(text, path)
    except SummaryError as error:
        say(str(error))
        return usage_error if status == 0 else status
    return status
