"""python -m perf.research.bisect_lines CASE: the bisect run on a made line of commits, to calibrate it (issue 65).

In a clone of BASE (a temporary directory), seven first-parent commits after it, each a harmless change (a comment
added to a solver module), except

- culprit-K: commit K (1-7) is a real code change that slows one solver: tf1_while_loop tracks the loss in its
  while_loop body (an extra pass over the data each iteration, the same answer);
- clean: none;
- drift: commits 2, 4 and 6 each add one divergence check to numpy_loop's step (np.isfinite on a gradient, the
  other gradient, the loss): a few per cent each, their sum passing the threshold;

then `python -m perf.gate.bisect BASE HEAD --benchmarks ... [gate options]` in the clone, its JSON and what it printed
kept under OUT/CASE.json and OUT/CASE.txt, and OUT/table.md remade from every case there: expected and found
commit, steps and their verdicts, wall time. --neighbour runs a bounded noisy neighbour beside the search (on the
CPUs but the gate's quiet one). Other options are the bisect's and the gate's, passed as they are.

    python -m perf.research.bisect_lines culprit-4 --out docs/results/bisect
"""

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from perf.judge import words
from perf.measure import cpus
from perf.measure.environment import cpu_model
from perf.measure.worker import ROOT
from perf.research.neighbour import noisy_neighbour

COMMITS = 7
WHILE_LOOP, NUMPY_LOOP = "solvers/tf1_while_loop.py", "solvers/numpy_loop.py"
BENCHMARKS = {"culprit": "tf1_while_loop-cpu-n1000", "clean": "tf1_while_loop-cpu-n1000",
              "drift": "numpy_loop-cpu-n1000"}
# The culprit: the loss computed in the loop, each iteration, in place of once after it.
TRACKED_LOSS = [(
    """        def step(i, w, b):""",
    """        def step(i, w, b, loss):"""), (
    """            return i + 1, w - lr * grad_w, b - lr * grad_b

        zero = tf.constant(0.0, dtype=tf.float32)
        _, w, b = tf.while_loop(lambda i, w, b: i < iterations_fed, step, (tf.constant(0), zero, zero))
        loss = tf.reduce_sum((y - (w * x + b)) ** 2 / n)""",
    """            w, b = w - lr * grad_w, b - lr * grad_b
            return i + 1, w, b, tf.reduce_sum((y - (w * x + b)) ** 2 / n)  # the loss tracked as it goes

        zero = tf.constant(0.0, dtype=tf.float32)
        _, w, b, loss = tf.while_loop(lambda i, w, b, loss: i < iterations_fed, step,
                                      (tf.constant(0), zero, zero, tf.reduce_sum(y ** 2 / n)))""")]
# The drift: one divergence check a commit, each after the line it checks.
CHECKED = (("grad_w", "            grad_w = 2 / n * np.sum(-x * (y - y_pred))"),
           ("grad_b", "            grad_b = 2 / n * np.sum(-(y - y_pred))"),
           ("loss", "            loss = np.sum((y - y_pred) ** 2) / n"))


def changes(case: str) -> list[tuple[str, str, list]]:
    """The line's commits, oldest first: (message, path, [(old, new) replacements]); a harmless one adds a comment."""
    kind, _, at = case.partition("-")
    line = [(f"harmless {k}: a comment", (WHILE_LOOP, NUMPY_LOOP)[k % 2], []) for k in range(1, COMMITS + 1)]
    if kind == "culprit":
        line[int(at) - 1] = ("tf1_while_loop tracks the loss in its loop", WHILE_LOOP, TRACKED_LOSS)
    elif kind == "drift":
        for k, (name, checked) in zip((2, 4, 6), CHECKED):
            check = f"\n            if not np.isfinite({name}):\n                raise FloatingPointError(\"diverged\")"
            line[k - 1] = (f"numpy_loop checks {name} for divergence", NUMPY_LOOP, [(checked, checked + check)])
    return line


def made_line(clone: Path, base: str, case: str) -> tuple[str, list[str]]:
    """The clone of BASE with the case's commits; BASE's hash and the commits', oldest first."""
    git = lambda *args: subprocess.run(["git", *args], cwd=clone, check=True, capture_output=True,
                                       text=True).stdout.strip()
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(ROOT), str(clone)], check=True)
    git("checkout", "-q", "--detach", base)
    git("config", "user.name", "bisect calibration")
    git("config", "user.email", "calibration@example.org")
    commits = []
    for message, path, replacements in changes(case):
        text = (clone / path).read_text()
        for old, new in replacements or [(text, f"{text}# {message}\n")]:
            if old not in text:
                sys.exit(f"bisect_lines: {path} at {base} lacks the line to change: {old.splitlines()[0]!r}")
            text = text.replace(old, new, 1)
        (clone / path).write_text(text)
        git("commit", "-q", "-m", message, path)
        commits.append(git("rev-parse", "HEAD"))
    return git("rev-parse", "HEAD~7"), commits


def expected(case: str, commits: list[str]) -> str | None:
    """The commit a right search names: the culprit, the drift's second check (where its sum first passes the gate's
    bar), or none on the clean line."""
    kind, _, at = case.partition("-")
    return {"culprit": lambda: commits[int(at) - 1], "drift": lambda: commits[3], "clean": lambda: None}[kind]()


def bisected(clone: Path, arguments: list[str]) -> subprocess.CompletedProcess:
    """python -m perf.gate.bisect ARGUMENTS run in the clone, with the clone's own code."""
    return subprocess.run([sys.executable, "-m", "perf.gate.bisect", *arguments], cwd=clone, capture_output=True,
                          text=True)


def table(out: Path) -> str:
    rows = ["| case | benchmark | expected | found | exit | steps: verdicts | wall | machine, date |",
            "|---|---|---|---|---|---|---|---|"]
    for path in sorted(out.glob("*.json")):
        run = json.loads(path.read_text())
        steps = ", ".join(step["verdict"] for step in run["search"]["steps"])
        rows.append(f"| {run.get('name', run['case'])} | {run['benchmarks']} | {run['expected_position'] or 'none'} | "
                    f"{run['found_position'] or 'none'} | {run['search']['status']} | "
                    f"{len(run['search']['steps'])}: {steps} | {run['search']['wall_s'] / 60:.1f} min | "
                    f"{run['cpu_model']}, {run['date'][:10]} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.research.bisect_lines", description=__doc__.splitlines()[0])
    parser.add_argument("case", help="culprit-K (K = 1..7), clean or drift")
    parser.add_argument("--base", default="HEAD", help="the commit the line starts from (GOOD)")
    parser.add_argument("--out", type=Path, default=Path("docs/results/bisect"))
    parser.add_argument("--benchmarks", help="the gate's selection (default: the case's solver at n = 1,000)")
    parser.add_argument("--name", help="the record's name (default: the case)")
    parser.add_argument("--neighbour", action="store_true", help="a bounded noisy neighbour beside the search "
                                                                   "(perf/research/neighbour.py)")
    options, bisect_options = parser.parse_known_args(argv)
    kind, _, at = options.case.partition("-")
    if not (kind in ("clean", "drift") and not at or kind == "culprit" and at in map(str, range(1, COMMITS + 1))):
        parser.error(f"unknown case {options.case!r}: culprit-K (K = 1..{COMMITS}), clean or drift")
    options.out.mkdir(parents=True, exist_ok=True)
    benchmarks = options.benchmarks or BENCHMARKS[kind]
    name = options.name or options.case + "-neighbour" * options.neighbour
    with tempfile.TemporaryDirectory(prefix="bisect-line-") as directory:
        clone = Path(directory) / "clone"
        good, commits = made_line(clone, options.base, options.case)
        report = Path(directory) / "bisect.json"
        began = time.perf_counter()
        with noisy_neighbour(cpus.quiet_cpu()) if options.neighbour else contextlib.nullcontext():
            done = bisected(clone, [good, commits[-1], "--benchmarks", benchmarks, *bisect_options, "--json",
                                    str(report)])
        wall = time.perf_counter() - began
        (options.out / f"{name}.txt").write_text(done.stdout + done.stderr)
        if not report.exists():
            sys.exit(f"bisect_lines: the bisect saved nothing (exit {done.returncode}): {done.stderr[-500:]}")
        search = json.loads(report.read_text())
    want = expected(options.case, commits)
    position = lambda commit: commits.index(commit) + 1 if commit in commits else None
    run = {"case": options.case, "name": name, "benchmarks": benchmarks, "options": bisect_options, "base": good,
           "neighbour": options.neighbour,
           "commits": commits, "expected_position": position(want), "found_position": position(search["culprit"]),
           "right": search["culprit"] == want and search["ending"] == (words.FOUND if want else words.NOTHING_TO_FIND),
           "wall_s": wall, "cpu_model": cpu_model(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "search": search}
    (options.out / f"{name}.json").write_text(json.dumps(run, indent=1) + "\n")
    (options.out / "table.md").write_text(table(options.out) + "\n")
    print(f"bisect_lines: {name}: expected {run['expected_position']}, found {run['found_position']}, "
          f"exit {search['status']}, {len(search['steps'])} steps, {wall / 60:.1f} min: "
          f"{'right' if run['right'] else 'WRONG'}")
    return 0 if run["right"] else 1


if __name__ == "__main__":
    sys.exit(main())
