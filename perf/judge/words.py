"""Every word a verdict, a run's ending or a warning prints, in one home, so that tests/test_glossary.py can check each."""

# The comparison of two saved runs, per benchmark (perf/judge/rules.py, change_verdict). Verdicts are kept in lower
# case (in saved JSON, in code) and printed in upper case.
SLOWER, FASTER, UNCHANGED, CANT_TELL = "slower", "faster", "unchanged", "can't tell"
COMPARISON_VERDICTS = (SLOWER, FASTER, UNCHANGED, CANT_TELL)

# The gate, per benchmark timed on both versions (rules.judged; UNCONFIRMED from perf/gate/stages.py). CLEAR, not
# "pass": a pass is a batch of trials in fresh workers, and the gate's verdict is a rule of its own.
REGRESSION, IMPROVEMENT, CLEAR, INCONCLUSIVE, UNCONFIRMED = (
    "regression", "improvement", "clear", "inconclusive", "unconfirmed")
JUDGED = (REGRESSION, IMPROVEMENT, CLEAR, INCONCLUSIVE, UNCONFIRMED)
# The gate, per benchmark it could not time on both versions (perf/gate/interleave.py: availability).
MISSING, NEW, SKIPPED, ERROR = "missing", "new", "skipped", "error"
UNJUDGED = (MISSING, NEW, SKIPPED, ERROR)
GATE_VERDICTS = JUDGED + UNJUDGED
# The gate's verdicts that fail it (perf/gate/ending.py): a confirmed regression, a repeated error, a lost benchmark.
FAILING = (REGRESSION, ERROR, MISSING)


def verdict_read(saved: str) -> str:
    """A verdict as a saved file spells it, in today's word: gate JSON saved before CLEAR had its name says "pass"
    (docs/results/noise-study/)."""
    return CLEAR if saved == "pass" else saved


# How a gate or a comparison ends, beside its exit status (perf/judge/outcome.py), and what CI prints where it has
# no earlier commit to gate against (.ci/run, which cannot import this: the test checks it says the same). A usage
# error is the gate's own word for its exit 2: a mistake in the command, not something it could not measure.
PASSED, FAILED, NOT_MEASURED, NOT_GATED, USAGE_ERROR = "passed", "FAILED", "NOT MEASURED", "NOT GATED", "usage error"
# How a bisect ends (perf/gate/bisect.py), beside NOT MEASURED and a usage error.
FOUND, NOTHING_TO_FIND, UNDECIDED = "FOUND", "NOTHING TO FIND", "UNDECIDED"
ENDINGS = (PASSED, FAILED, NOT_MEASURED, NOT_GATED, USAGE_ERROR, FOUND, NOTHING_TO_FIND, UNDECIDED)

# What a run's lines say of a setting that changes its figures: two runs that differ in their environment
# (perf/report/compare.py), and the test tooling FSSGD_SLOWDOWN and FSSGD_SHRINK (perf/report/summary.py).
NOT_LIKE_WITH_LIKE, SLOWED, SHRUNK = "not like with like", "SLOWED on purpose", "SHRUNK"
WARNINGS = (NOT_LIKE_WITH_LIKE, SLOWED, SHRUNK)


def printed(word: str) -> str:
    """A word as the terminal prints it: a verdict in upper case, any other as it is."""
    return word.upper() if word in COMPARISON_VERDICTS + GATE_VERDICTS else word


PRINTED = tuple(printed(word) for word in COMPARISON_VERDICTS + GATE_VERDICTS + ENDINGS + WARNINGS)
