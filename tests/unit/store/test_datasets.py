"""Generated datasets on disk: written once per spec and seed, reused byte for byte."""

from __future__ import annotations

from pathlib import Path

from kvperf.config.datasets import parse_generation
from kvperf.store.datasets import csv_header, csv_rows, materialize


def test_cached_by_spec_and_seed(tmp_path: Path) -> None:
    (spec,) = parse_generation({"docs.xml": {"doc_count": 50, "fields": [
        {"name": "title", "size": 30}]}}, "dataset_generation")
    path, made = materialize(tmp_path, spec, 3)
    assert made and path.suffix == ".csv" and path.name.startswith("docs-")
    first = path.read_bytes()
    again, made_again = materialize(tmp_path, spec, 3)
    assert (again, made_again) == (path, False) and again.read_bytes() == first
    other, made_other = materialize(tmp_path, spec, 4)
    assert made_other and other != path and other.read_bytes() != first
    assert csv_header(path) == ["id", "title"] and csv_rows(path) == 50
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, other.name])
