"""Saved runs: the one reader of pytest-benchmark's JSON (saved runs and --benchmark-json files alike), the checks on
its storage before a benchmark session, and a run loaded as rows."""

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from perf.report.rows import Key, Row, rows_of
from solvers.tensorflow_support import threads_setting


def onednn(fssgd: dict) -> str:
    """The oneDNN setting a run recorded and, where TensorFlow said, whether it was on ('?' in older runs)."""
    enabled = (fssgd.get("tensorflow") or {}).get("onednn")
    return fssgd.get("onednn_setting", "?") + ("" if enabled is None else f" ({'on' if enabled else 'off'})")


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


# A run as the report reads it ------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    path: Path
    document: dict
    rows: dict[Key, Row]  # the per-step tables' benchmarks
    studies: dict[str, list[Row]]  # the iteration sweep and time to accuracy
    notes: tuple[str, ...]

    @property
    def fssgd(self) -> dict:
        """What this suite recorded about the run's environment (machine_info.fssgd)."""
        return self.document["machine_info"].get("fssgd") or {}

    @property
    def threads(self) -> str:
        threads = self.fssgd.get("threads")
        return threads_setting(threads) if isinstance(threads, int) else "?"

    @property
    def onednn(self) -> str:
        return onednn(self.fssgd)

    @property
    def label(self) -> str:
        """TF version · devices · profile, read from what the run recorded about itself."""
        every = [*self.rows.values(), *(row for rows in self.studies.values() for row in rows)]
        version = (self.fssgd.get("tensorflow") or {}).get("version") or next(
            (row.get("tensorflow") for row in every if row.get("tensorflow")), None)
        devices = []
        for device in sorted({row.key.device for row in every}):
            names = {row.get("device_name") for row in every if row.key.device == device and row.get("device_name")}
            devices.append(f"{device} ({names.pop()})" if device != "cpu" and len(names) == 1 else device)
        parts = [f"TF {version}" if version else "no TF", "+".join(devices)]
        return " · ".join(parts + ([self.fssgd["profile"]] if self.fssgd.get("profile") else []))


def load_run(path: Path) -> Run:
    document = read_run(path)
    rows, notes = rows_of(document["benchmarks"])
    if not rows:
        raise RunError(f"no timed benchmark ({notes[0] if notes else 'it holds no benchmarks'})")
    studies = {}
    for row in rows:
        if row.study:
            studies.setdefault(row.study, []).append(row)
    per_step = {row.key: row for row in rows if not row.study}
    return Run(Path(path), document, per_step, studies, tuple(notes))


# Storage, checked before a benchmark session -----------------------------------------------------


def check_storage(option) -> None:
    """StorageError before any benchmark runs when a saved run cannot be compared or a result could not be written.

    pytest-benchmark would find out only at the end, with a traceback, compare against an older run than the
    one asked for, or say it cannot compare and pass. Nothing here modifies or deletes a saved run.
    """
    if not hasattr(option, "benchmark_storage"):
        return  # pytest-benchmark is not loaded (-p no:benchmark)
    storage = option.benchmark_storage
    if "://" not in storage:  # a bare path is a file storage to pytest-benchmark too
        storage = "file://" + storage
    if not storage.startswith("file://"):
        return  # elasticsearch storage: pytest-benchmark's own business
    folder = Path(storage[len("file://"):])
    from pytest_benchmark.utils import get_machine_id

    runs_folder = folder / get_machine_id()
    if option.benchmark_save or option.benchmark_autosave:
        if reason := unwritable(runs_folder, create=True):
            raise StorageError(f"--benchmark-save/--benchmark-autosave: cannot write to {runs_folder} ({reason})")
    if option.benchmark_json:
        path = Path(option.benchmark_json)
        if reason := "it is a folder" if path.is_dir() else unwritable(path.parent, create=False):
            raise StorageError(f"--benchmark-json: cannot write {path} ({reason})")
    if compare := option.benchmark_compare:
        check_saved_runs(folder, get_machine_id(), compare)


def unwritable(folder: Path, create: bool) -> str | None:
    """Why no file can be created in folder, or None; tried for real, as permissions lie to root and to read-only mounts."""
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as error:
        return error.strerror or str(error)


def check_saved_runs(folder: Path, machine_id: str, compare) -> None:
    """Refuse --benchmark-compare when a run it would read is unreadable, or a run it names is not there."""
    from pytest_benchmark.storage.file import FileStorage

    # pytest-benchmark's own lookup, so the files checked are exactly the ones it would load.
    storage = FileStorage(folder, logger=None, default_machine_id=machine_id)
    candidates = storage.query("[0-9][0-9][0-9][0-9]_" if compare is True else compare)
    if compare is not True and not candidates:
        saved = ", ".join(path.name for path in storage.query("[0-9][0-9][0-9][0-9]_")) or "none"
        raise StorageError(f"--benchmark-compare={compare}: no saved run matches it in {folder / machine_id} "
                           f"(saved: {saved}), so nothing was run")
    broken = [f"  {path}: {error}" for path in candidates if (error := unreadable(path))]
    if broken:
        raise StorageError(
            "--benchmark-compare: these saved runs cannot be read, so nothing was run; they are left as they are. "
            "Move them out of the storage folder, or compare one good run with --benchmark-compare=NNNN:\n"
            + "\n".join(broken)
        )


def unreadable(path: Path) -> str | None:
    try:
        read_run(path)
    except RunError as error:
        return str(error)
    return None
