"""A saved run as the report reads it: its rows, its studies, what it recorded about its environment."""

from dataclasses import dataclass
from pathlib import Path

from perf.measure import Key
from perf.measure.environment import threads_setting
from perf.report.rows import Row, rows_of
from perf.storage import RunError, read_run


def onednn(fssgd: dict) -> str:
    """The oneDNN setting a run recorded and, where TensorFlow said, whether it was on ('?' in older runs)."""
    enabled = (fssgd.get("tensorflow") or {}).get("onednn")
    return fssgd.get("onednn_setting", "?") + ("" if enabled is None else f" ({'on' if enabled else 'off'})")


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
    def label(self) -> str:
        """TF version · devices · profile, read from what the run recorded about itself."""
        every = [*self.rows.values(), *(row for rows in self.studies.values() for row in rows)]
        version = (self.fssgd.get("tensorflow") or {}).get("version") or next(
            (row.tensorflow for row in every if row.tensorflow), None)
        devices = []
        for device in sorted({row.key.device for row in every}):
            names = {row.device_name for row in every if row.key.device == device and row.device_name}
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


