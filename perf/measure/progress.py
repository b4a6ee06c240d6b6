"""Where a run is, on the terminal only: what a long benchmark will take, each long round as it ends, each pass."""

from contextlib import contextmanager

# Rounds shorter than this pass in a blink; longer ones would look like a hang without a word.
MIN_ROUND_S = 2.0

_write = None  # one line to the terminal, set by perf/conftest.py for each test when stdout is a terminal


@contextmanager
def reporting(write):
    """Progress lines of the benchmarks run inside the block go to write(line)."""
    global _write
    _write, previous = write, _write
    try:
        yield
    finally:
        _write = previous


def say(line: str) -> None:
    if _write is not None:
        _write(line)


def expected(label: str, trials: int, rounds_per_trial: int, round_s: float, steps: int) -> None:
    """What a benchmark of long rounds will take: its trials, each of up to rounds_per_trial rounds."""
    if round_s >= MIN_ROUND_S:
        rounds = (f"{trials} timed round{'s' * (trials != 1)}" if rounds_per_trial == 1
                  else f"{trials} trials of up to {rounds_per_trial} timed rounds")
        say(f"{label}: {rounds} of {steps:,} steps, about {round_s:.0f} s each")


def round_done(label: str, done: int, rounds: int, round_s: float) -> None:
    if round_s >= MIN_ROUND_S:
        say(f"{label}: round {done} of {rounds} took {round_s:.1f} s")


def pass_done(done: int, passes: int, benchmarks: int, seconds: float) -> None:
    """A pass, every benchmark's next trial: said whatever its rounds took, since the first test waits for them all."""
    say(f"pass {done} of {passes}: a trial of each of {benchmarks} benchmark{'s' * (benchmarks != 1)} in {seconds:.0f} s")


def listed(labels: list[str], most: int = 3) -> str:
    return ", ".join(labels[:most]) + (f" and {len(labels) - most} more" if len(labels) > most else "")


def extra_pass_done(done: int, labels: list[str], threshold: float, spent_s: float, budget_s: float) -> None:
    """A pass past the profile's, for the benchmarks whose trials could not yet call the comparison's threshold."""
    say(f"pass {done}: a trial more of {len(labels)} benchmark{'s' * (len(labels) != 1)} not yet precise enough to "
        f"call {threshold:.0%} ({listed(labels)}); {spent_s:.0f} s of the {budget_s:.0f} s budget")


def imprecise_left(labels: list[str], threshold: float, when: str) -> None:
    say(f"{len(labels)} benchmark{'s' * (len(labels) != 1)} still not precise enough to call {threshold:.0%} {when} "
        f"({listed(labels)})")


def counted(benchmarks: int, processes: int, seconds: float) -> None:
    say(f"counted: the instructions of {benchmarks} benchmark{'s' * (benchmarks != 1)} in {processes} processes "
        f"under callgrind, in {seconds:.0f} s")
