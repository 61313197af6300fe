"""Generated datasets on disk: ``<dir>/<stem>-<spec hash>.csv``, written once, atomically.

The hash covers the spec, the seed and the generator's version, so a file is reused only
for the same inputs (byte-identical by construction) and a changed spec gets a new file.
"""

from __future__ import annotations

import csv
from pathlib import Path

from kvperf.config.datasets import GenerationSpec, generate_csv
from kvperf.store.files import write_text_atomic


def dataset_path(directory: Path, spec: GenerationSpec, seed: int) -> Path:
    return directory / f"{Path(spec.name).stem}-{spec.cache_key(seed)}.csv"


def materialize(directory: Path, spec: GenerationSpec, seed: int) -> tuple[Path, bool]:
    """The spec's CSV file, generated unless cached; returns (path, generated now)."""
    path = dataset_path(directory, spec, seed)
    if path.is_file():
        return path, False
    write_text_atomic(path, generate_csv(spec, seed))
    return path, True


def csv_header(path: Path) -> list[str]:
    """A CSV file's column names (its first line)."""
    with path.open(newline="") as handle:
        return next(csv.reader(handle), [])


def csv_rows(path: Path) -> int:
    """Data rows of a CSV file (records after the header; quoted newlines counted right)."""
    with path.open(newline="") as handle:
        return max(sum(1 for _ in csv.reader(handle)) - 1, 0)
