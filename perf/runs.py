"""The one reader of pytest-benchmark's saved runs and --benchmark-json files, with one set of messages."""

import json
from pathlib import Path


class RunError(Exception):
    """A file that is not a usable pytest-benchmark run; the message is the one-line reason, without the path."""


def read_run(path) -> dict:
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise RunError(f"cannot read it ({error.strerror or error})") from None
    try:
        run = json.loads(raw)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError alike
        raise RunError(f"not valid JSON, truncated? ({str(error).splitlines()[0]})") from None
    if not (isinstance(run, dict) and isinstance(run.get("machine_info"), dict) and isinstance(run.get("benchmarks"), list)
            and all(isinstance(bench, dict) and "fullname" in bench and isinstance(bench.get("stats"), dict)
                    for bench in run["benchmarks"])):
        raise RunError("not a pytest-benchmark saved run (needs machine_info and benchmarks with fullname and stats)")
    return run


def newest_run(folder) -> Path:
    candidates = [path for path in Path(folder).rglob("*.json") if path.is_file()]
    if not candidates:
        raise RunError("no .json file in this folder")
    # mtime orders saved runs (NNNN_*.json) and --benchmark-json files alike; the name breaks ties.
    return max(candidates, key=lambda path: (path.stat().st_mtime, path.name))
