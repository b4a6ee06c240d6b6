"""Saved runs, in pytest-benchmark's file storage: where a run goes (a folder per environment), the checks on the storage
before a benchmark session, and the one reader of pytest-benchmark's JSON (saved runs and --benchmark-json alike)."""

import json
import re
import tempfile
from pathlib import Path

from perf.judge.outcome import NotMeasured
from perf.measure import cpus, gpu
from perf.measure.environment import tensorflow_distribution

SAVED_RUNS = ".benchmarks"  # pytest-benchmark's default storage, one folder per environment inside it
DEFAULT_STORAGE = f"file://./{SAVED_RUNS}"  # pytest-benchmark's default --benchmark-storage


def storage_key(affinity: tuple[int, ...] = ()) -> str:
    """A folder name per environment, so CPU-only and GPU results, two GPU models', and free and pinned runs
    (--cpu-affinity) never share a baseline."""
    distribution = tensorflow_distribution()
    key = f"{distribution[0]}-{distribution[1]}" if distribution else "numpy-only"
    if gpus := gpu.models():  # wherever a driver sees one: JAX's and PyTorch's GPU runs need no TensorFlow
        key += "-" + gpus[0].split(",")[0]
    if affinity:
        key += f"-cpus{cpus.compact(affinity)}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", key)


def runs_folder(affinity: tuple[int, ...] = ()) -> Path:
    """Where this environment's runs are saved, relative to where pytest runs, unless --benchmark-storage says."""
    return Path(SAVED_RUNS) / storage_key(affinity)


class RunError(Exception):
    """A file that is not a usable pytest-benchmark run; the message is the one-line reason, without the path."""


class StorageError(Exception):
    """A benchmark session's storage or output cannot be used; the message says which and why."""


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


def environment_folders(root=Path(SAVED_RUNS)) -> list[Path]:
    """The folders in root that hold a run, one per environment (storage_key; tox's too), by name."""
    return sorted(folder for folder in Path(root).glob("*/") if folder.is_dir()
                  and any(path.is_file() for path in folder.rglob("*.json")))


def storage_folders(given: list[Path], loaded: list[Path]) -> list[Path]:
    """Folders pytest-benchmark reads and writes: the folders given, .benchmarks, and saved runs' storage."""
    folders = [path for path in given if path.is_dir()]
    for path in loaded:
        folders += [parent for parent in path.resolve().parents if parent.name == SAVED_RUNS]
    return [folder.resolve() for folder in folders]


# Checked before a benchmark session --------------------------------------------------------------------------------


def check_storage(option, like) -> list[str]:
    """StorageError or NotMeasured before any benchmark runs, where pytest-benchmark finds these out only at the end,
    with a traceback, or compares another run; a warning for each other saved run that cannot be read, left out.
    --benchmark-compare with no run named is pointed at the newest saved run like this one (newest_like;
    docs/usage.md). Nothing here modifies or deletes a saved run."""
    if not hasattr(option, "benchmark_storage"):
        return []  # pytest-benchmark is not loaded (-p no:benchmark)
    storage = option.benchmark_storage
    if "://" in storage and not storage.startswith("file://"):
        return []  # elasticsearch storage: pytest-benchmark's own business
    folder = Path(storage.removeprefix("file://"))  # a bare path is a file storage to pytest-benchmark too
    from pytest_benchmark.utils import get_machine_id

    runs_folder = folder / get_machine_id()
    if (option.benchmark_save or option.benchmark_autosave) and (reason := unwritable(runs_folder, create=True)):
        raise StorageError(f"--benchmark-save/--benchmark-autosave: cannot write to {runs_folder} ({reason})")
    if option.benchmark_json:
        path = Path(option.benchmark_json)
        if reason := "it is a folder" if path.is_dir() else unwritable(path.parent, create=False):
            raise StorageError(f"--benchmark-json: cannot write {path} ({reason})")
    if not (compare := option.benchmark_compare):
        return []
    if compare is not True:
        return check_named_runs(folder, get_machine_id(), compare)
    chosen, warnings = newest_like(folder, get_machine_id(), like)
    option.benchmark_compare = str(chosen)  # pytest-benchmark loads a path given as it is
    return warnings


def unwritable(folder: Path, create: bool) -> str | None:
    """Why no file can be created in folder, or None; tried for real, as permissions lie to root and to read-only mounts."""
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as error:
        return error.strerror or str(error)


def saved_runs(folder: Path, machine_id: str, *names) -> list[Path]:
    """The saved runs pytest-benchmark's own lookup finds (every numbered one, or those names match), oldest first, so
    the files checked are exactly the ones it would load."""
    from pytest_benchmark.storage.file import FileStorage

    return FileStorage(folder, logger=None, default_machine_id=machine_id).query(*names or ("[0-9][0-9][0-9][0-9]_",))


def cannot_compare(broken: list[str]) -> NotMeasured:
    return NotMeasured(f"--benchmark-compare: the saved run to compare with cannot be read, so nothing was run; it "
                       f"is left as it is (move it out of the folder, or name another with "
                       f"--benchmark-compare=NNNN): {'; '.join(broken)}")


def check_named_runs(folder: Path, machine_id: str, compare: str) -> list[str]:
    """Refuse --benchmark-compare=NAME when no saved run matches it, or one it matches cannot be read (pytest-benchmark
    compares every run the name matches)."""
    candidates = saved_runs(folder, machine_id, compare)
    if not candidates:
        saved = saved_runs(folder, machine_id)
        raise StorageError(f"--benchmark-compare={compare}: no saved run matches it in {folder / machine_id} "
                           f"(saved: {', '.join(path.name for path in saved) or 'none'}), so nothing was run")
    if broken := [f"{path}: {error}" for path in candidates if (error := unreadable(path))]:
        raise cannot_compare(broken)
    return []


def newest_like(folder: Path, machine_id: str, like) -> tuple[Path, list[str]]:
    """The saved run --benchmark-compare compares with: the newest whose machine_info.fssgd is like(fssgd), else the
    newest (its comparison then says what differs, and counts neither way); a warning for each older one that cannot
    be read. NotMeasured where there is none, or a newer one than it cannot be read: that might be the one meant."""
    saved = saved_runs(folder, machine_id)
    if not saved:
        raise NotMeasured(f"--benchmark-compare: no saved run in {folder / machine_id} to compare with (a first run, "
                          f"or another environment's folder: save one with --benchmark-autosave)")
    broken, chosen = {}, None
    for path in reversed(saved):
        try:
            fssgd = read_run(path)["machine_info"].get("fssgd")
        except RunError as error:
            broken[path] = str(error)
            continue
        if isinstance(fssgd, dict) and like(fssgd):
            chosen = path
            break
    at = saved.index(chosen) if chosen else len(saved) - 1
    if newer := [f"{path}: {broken[path]}" for path in saved[at:] if path in broken]:
        raise cannot_compare(newer)
    return saved[at], [f"{path} cannot be read ({error}): left out; only {saved[at].name} is compared"
                       for path in saved[:at] if (error := broken.get(path) or unreadable(path))]


def unreadable(path: Path) -> str | None:
    try:
        read_run(path)
    except RunError as error:
        return str(error)
    return None
