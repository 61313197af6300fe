"""Parsing valkey-benchmark / redis-benchmark ``--csv`` output robustly.

In cluster mode the tool prints a preamble (node list) before the CSV header; the header is
found wherever it is. Numbers that are not finite (an ``inf`` rps from a run too short to time)
are rejected: a row that measured nothing is an error, never a result.
"""

from __future__ import annotations

import csv
import math

HEADER = ("test", "rps", "avg_latency_ms", "min_latency_ms", "p50_latency_ms",
          "p95_latency_ms", "p99_latency_ms", "max_latency_ms")


def parse_csv_rows(text: str) -> list[dict[str, str]]:
    """All data rows after the CSV header line; raise ValueError if there is no header."""
    lines = text.replace("\r", "\n").splitlines()
    for i, line in enumerate(lines):
        if line.startswith('"test"'):
            reader = csv.DictReader(lines[i:])
            return [row for row in reader if row.get("test") and row.get("rps") is not None]
    raise ValueError("no CSV header (\"test\",\"rps\",…) in the tool's output")


def pick_row(rows: list[dict[str, str]], title: str | None) -> dict[str, str]:
    """The row for ``title`` (case-insensitive), or the only row when there is one."""
    if title is not None:
        for row in rows:
            if row["test"].upper() == title.upper():
                return row
    if len(rows) == 1:
        return rows[0]
    names = ", ".join(repr(r["test"]) for r in rows) or "none"
    raise ValueError(f"expected one result row for {title!r}, found: {names}")


def row_numbers(row: dict[str, str]) -> dict[str, float]:
    """The numeric fields of a row as floats; raise ValueError for missing or non-finite ones."""
    out = {}
    for name in HEADER[1:]:
        raw = row.get(name)
        try:
            value = float(raw) if raw is not None else math.nan
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ValueError(f"{name} is {raw!r} in row {row.get('test')!r}: the run measured "
                             "nothing (too few requests to time?)")
        out[name] = value
    if out["rps"] <= 0:
        raise ValueError(f"rps is {out['rps']} in row {row.get('test')!r}")
    return out
