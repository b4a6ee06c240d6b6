"""Whether it got slower: two versions timed on one machine in one job, trials interleaved, judged by paired ratios."""

# What the research builds on (perf/research/); the rest of the gate is its own.
from perf.gate.interleave import GATE_THREADS, Outcome, Unjudged
from perf.gate.stages import (DEFAULT_BUDGET_S, MIN_PASSES, Stopping, benchmarks_named, confirming, fixed,
                              flagged_keys, measured, screened, screening, verdicts)
from perf.gate.versions import GateError, checked_out

__all__ = ["DEFAULT_BUDGET_S", "GATE_THREADS", "MIN_PASSES", "GateError", "Outcome", "Stopping", "benchmarks_named",
           "checked_out", "confirming", "fixed", "flagged_keys", "measured", "screened", "screening", "Unjudged", "verdicts"]
