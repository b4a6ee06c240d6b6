"""Benchmark profiles: which sizes, how many iterations and rounds; chosen with --profile."""

from dataclasses import dataclass

from solvers.problem import SEED_ITERATIONS, SEED_N


@dataclass(frozen=True)
class Profile:
    sizes: tuple[int, ...]
    iterations: int
    rounds: int


PROFILES = {
    # CI and first look: the seed size and one large one, about two minutes on 2 cores.
    "quick": Profile(sizes=(1_000, 100_000), iterations=1_000, rounds=5),
    # The n-sweep the report fits t = α + β·n to.
    "full": Profile(sizes=(100, 1_000, 10_000, 100_000, 1_000_000), iterations=1_000, rounds=5),
    # The original question itself; a tf1_feed_dict round takes tens of seconds, hence few rounds.
    "seed": Profile(sizes=(SEED_N,), iterations=SEED_ITERATIONS, rounds=3),
}
DEFAULT_PROFILE = "quick"
