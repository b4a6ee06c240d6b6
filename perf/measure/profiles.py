"""Benchmark profiles: which sizes, how many steps, trials and rounds; chosen with --profile."""

from dataclasses import dataclass

from solvers.problem import SEED_ITERATIONS, SEED_N


@dataclass(frozen=True)
class Profile:
    sizes: tuple[int, ...]
    steps: int
    # Independent trials per benchmark, each with its own setup (perf/measure/trials.py); five is the fewest whose
    # range covers their median with at least 90% (93.75%); three cover it with 75%.
    trials: int
    # At most this many rounds per trial; fewer where a round is long (trials.TRIAL_TARGET_S).
    rounds_per_trial: int
    # Caps n × steps, so the large sizes of a quick look stay quick; None: all the steps at every size.
    max_sample_steps: int | None = None
    # True: every benchmark's first trial warms up at the full count (and measures whether later ones must);
    # False: only solvers that compile per count do (Solver.compiles_per_count), the others warm up on one step.
    full_warm_up: bool = True
    # Rounds estimated longer than this run fewer steps (perf/measure.round_plan), except full_count_solvers.
    max_round_s: float | None = None
    full_count_solvers: tuple[str, ...] = ()
    # Its wall time on this project's machine (2-core Xeon VM), printed when a run starts.
    wall_time_here: str = "not measured"

    def steps_at(self, n: int) -> int:
        if self.max_sample_steps is None:
            return self.steps
        return max(1, min(self.steps, self.max_sample_steps // n))


PROFILES = {
    # CI and first look: the seed size at 1,000 steps and n = 1e5 at 100.
    "quick": Profile(sizes=(1_000, 100_000), steps=1_000, trials=5, rounds_per_trial=5, max_sample_steps=10**7,
                     wall_time_here="1.5 min"),
    # The n-sweep the report fits t = α + β·n to.
    "full": Profile(sizes=(100, 1_000, 10_000, 100_000, 1_000_000), steps=1_000, trials=5, rounds_per_trial=5,
                    wall_time_here="20 min"),
    # The original question itself, in minutes: its two programs and the in-graph loops run all 1e5 steps (a
    # tf1_feed_dict round is ~25 s, so three trials of one round); per-step solvers whose round would pass 5 s
    # (tf2_eager: ~160 s) run fewer, and the summary says so.
    "seed": Profile(sizes=(SEED_N,), steps=SEED_ITERATIONS, trials=3, rounds_per_trial=1, full_warm_up=False,
                    max_round_s=5.0, full_count_solvers=("numpy_loop", "tf1_feed_dict"), wall_time_here="3.5 min"),
}
DEFAULT_PROFILE = "quick"
