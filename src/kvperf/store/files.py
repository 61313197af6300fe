"""metrics.json: loaded once, appended to, and replaced atomically after every trial."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from kvperf.core.errors import StoreError
from kvperf.results.histogram import HistogramFile
from kvperf.results.row import Row, format_of, upgrade


def write_json_atomic(path: Path, data: Any) -> None:
    """Write to a temp file in the same directory, fsync, then rename over ``path``."""
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write to a temp file in the same directory, fsync, then rename over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_rows(path: Path, *, as_written: bool = False) -> list[Row]:
    """The rows of a metrics.json file (kvperf's or the seed system's), kvperf's upgraded to
    the current format (``results.row.upgrade``; a newer format is refused, exit 2).
    ``as_written``: check the format but keep each row exactly as the file has it (the
    store identifies a row by the hash of what was written). A results directory stands for
    the metrics.json in it."""
    if path.is_dir():
        if not (path / "metrics.json").is_file():
            raise StoreError(f"{str(path)!r} is a directory without a metrics.json")
        path = path / "metrics.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise StoreError(f"results file {str(path)!r} not found") from None
    except json.JSONDecodeError as exc:
        raise StoreError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise StoreError(f"{path} is not a list of result rows")
    if as_written:
        for row in data:
            format_of(row, str(path))
        return data
    return [_upgraded(row, index, path) for index, row in enumerate(data)]


def _upgraded(row: Row, index: int, path: Path) -> Row:
    """One row brought to the current format; StoreError naming the file and the row when
    a field an upgrade step reads is not what that format has (tests/unit/fuzz found an
    old row whose ``server`` was a number crash the upgrade)."""
    try:
        return upgrade(row, str(path))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{path}: row {index} is not a kvperf result row of format "
                         f"{row.get('kvperf_format')} ({type(exc).__name__}: {exc})") from None


class MetricsFile:
    """The run's metrics.json. Existing rows are kept; each new row is persisted at once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[Row] = (read_rows(path, as_written=True)
                                           if path.exists() else [])
        self.new_rows: list[Row] = []

    def append(self, row: Row) -> None:
        self.rows.append(row)
        self.new_rows.append(row)
        try:
            write_json_atomic(self.path, self.rows)
        except OSError as exc:
            raise StoreError(f"cannot write {self.path}: {exc.strerror or exc}") from None


def read_histograms(base: Path, row: Row) -> HistogramFile | None:
    """The histograms file a row names (relative to its metrics.json), or None. A client
    harness's latency is closed-loop, uncorrected for coordinated omission: its file's
    ``service`` histogram only, even where an older kvperf also wrote it as ``corrected`` —
    unless the harness ran open loop at a rate (``harness.rate``): then it is ``corrected``
    alone, timed from each batch's intended send time."""
    name = row.get("histogram_file")
    if not name:
        return None
    try:
        data = json.loads((base / name).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    found = {str(k): v for k, v in data.items() if isinstance(v, str)}
    harness = row.get("harness")
    if harness and not harness.get("rate"):  # closed loop: a format 9 client row also
        found.pop("corrected", None)  # wrote it as "corrected"
    return found
