"""The README's answer, × numpy_loop at the seed's size and what the run says in words, written from a saved run
between markers, never by hand."""

from pathlib import Path

from perf.measure import TIMING_REFERENCE, Key
from perf.report import analysis
from perf.report.handoff import Handoff, applies, sentence
from perf.report.runs import Run
from perf.report.studies import ACCURACY
from perf.report.tables import markdown, number, with_interval
from solvers.problem import SEED_N

START = "<!-- answer: written by python -m perf.report RUN [--handoff FOLDER] --answer-into FILE; do not edit by hand -->"
END = "<!-- /answer -->"
# The answer's solvers, slowest first, and what each of their steps does, in the question's words.
STEPS = (("tf1_feed_dict", "the original TensorFlow 1 program: one `Session.run` with `feed_dict`"),
         ("tf1_constant", "the same, with x and y held in the graph as constants"),
         ("tf1_callable", "the constant-data step as `Session.make_callable`"),
         (TIMING_REFERENCE[0], "the original NumPy program"),
         ("tf1_while_loop", "every step inside one `Session.run` (`tf.while_loop`)"),
         ("tf2_function_xla", "the whole loop in one XLA-compiled `tf.function`"))


class AnswerError(Exception):
    """The answer cannot be written: the message says why."""


def answer_table(run: Run) -> list[str]:
    """The answer's solvers that the run timed on the CPU at the seed's size, × numpy_loop with its interval."""
    cells = [[f"`{solver}`", step, with_interval(run.rows[key].ratio)]
             for solver, step in STEPS if (key := Key(solver, "cpu", SEED_N)) in run.rows]
    if not cells:
        raise AnswerError(f"{run.path} timed none of the answer's solvers on the cpu at n = {SEED_N:,}")
    return markdown(["solver", "each step", f"× `{TIMING_REFERENCE[0]}` at n = {SEED_N:,}"], cells)


# What each part of a step is, in the answer's words.
PART_WORDS = {"feed_dict copies": "the feed's float64 → float32 copies", "Session.run call": "the `Session.run` call",
              "arithmetic": "the arithmetic", "loss fetch": "fetching the loss"}
CROSSING_SOLVERS = ("tf1_callable", "tf1_constant", "tf1_feed_dict")  # one Session.run a step, cheapest first
STANDARDIZED, RAW = "numpy_standardized", TIMING_REFERENCE[0]


def answer_lines(run: Run, handoff: Handoff | None = None) -> list[str]:
    """The answer's table, then what the run says in words: where a step goes (with the study's hand-off between
    CPUs, where given and the run is free), where one call a step overtakes numpy_loop, what standardizing x does."""
    sentences = [shares(run), handoff and (figures := applies(handoff, run.fssgd, "cpu", SEED_N))
                 and sentence(handoff, figures), crossings(run), standardizing(run)]
    return answer_table(run) + [f"- {sentence}" for sentence in sentences if sentence] + [""]


def shares(run: Run) -> str | None:
    whole = analysis.whole_step(run.rows, "cpu", SEED_N)
    parts = [(part, value) for part, value, _ in analysis.step_parts(run.rows, "cpu", SEED_N) if part in PART_WORDS]
    if not whole or not parts:
        return None
    ordered = sorted(parts, key=lambda item: -item[1].value)
    arithmetic = dict(parts).get("arithmetic")
    fixed = " is mostly fixed cost" if arithmetic and arithmetic.value < whole.value / 2 else ""
    return (f"A `{analysis.WHOLE_STEP}` step ({number(whole.value)} µs at n = {SEED_N:,} in this run){fixed}: "
            + ", ".join(f"{PART_WORDS[part]} {value.value / whole.value:.0%}" for part, value in ordered)
            + "; the parts interact, so they need not add up to the whole.")


def crossings(run: Run) -> str | None:
    sizes = sorted({key.n for key in run.rows if key.device == "cpu"})
    found = [(solver, where) for solver in CROSSING_SOLVERS
             if (where := analysis.measured_crossover(run.rows, solver, "cpu", between=False)) != "—"]
    if len(sizes) < 2 or not found:
        return None
    return (f"Against `{RAW}` (n = {sizes[0]:,} to {sizes[-1]:,}), one `Session.run` a step, interpolated between "
            "measured sizes: " + "; ".join(f"`{solver}` {where.replace('≈', 'crosses at n ≈ ')}"
                                           for solver, where in found) + ".")


def standardizing(run: Run) -> str | None:
    reached = {row.key.solver: (row.info.get("time_to_accuracy") or {}) for row in run.studies.get(ACCURACY, [])
               if row.key.device == "cpu"}
    standardized, raw = reached.get(STANDARDIZED, {}), reached.get(RAW, {})
    if not (standardized.get("reached") and raw.get("reached")):
        return None
    return (f"Standardizing x does more than any of them: `{STANDARDIZED}` reaches (w, b) within "
            f"{standardized['target']:g} of the least-squares answer in {standardized['iterations']:,} steps, where "
            f"`{RAW}` needs {raw['iterations']:,}.")


def write_answer(path: Path, run: Run, handoff: Handoff | None = None) -> None:
    """Replaces what lies between START and END in path with the run's answer; the rest is left as it is."""
    text = path.read_text(encoding="utf-8")
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise AnswerError(f"{path} needs one block from {START} to {END} to write the answer into")
    before, rest = text.split(START)
    _, after = rest.split(END)
    path.write_text(before + START + "\n" + "\n".join(answer_lines(run, handoff)) + END + after, encoding="utf-8")
