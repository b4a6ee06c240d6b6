"""The README's answer, × numpy_loop at the seed's size, written from a saved run between markers, never by hand."""

from pathlib import Path

from perf.measure import TIMING_REFERENCE, Key
from perf.report.runs import Run
from perf.report.tables import markdown, with_interval
from solvers.problem import SEED_N

START = "<!-- answer: written by python -m perf.report RUN --answer-into FILE; do not edit by hand -->"
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


def write_answer(path: Path, run: Run) -> None:
    """Replaces what lies between START and END in path with the run's answer table; the rest is left as it is."""
    text = path.read_text(encoding="utf-8")
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise AnswerError(f"{path} needs one block from {START} to {END} to write the answer into")
    before, rest = text.split(START)
    _, after = rest.split(END)
    path.write_text(before + START + "\n" + "\n".join(answer_table(run)) + END + after, encoding="utf-8")
