"""Sweeps (pure): the series parameters a run varies, and each one's effect.

A config key listed with several values (``"pipelines": [1, 16]``) is expanded into series;
a run's *swept keys* are the series fields (results/row.KEY_FIELDS, the command aside) with
more than one distinct value among its timed rows. For each swept key the other fields make
the *lines*: series equal but for that key. A line with two values or more is a sweep line:
per value its mean rps and mean p99 over timed runs, and its speed-up, rps divided by the
rps at the line's first (smallest) value — Rapidbyte's "P=16 vs P=1" table.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kvperf.analysis.comparison import GroupKey, describe_group, group_rows
from kvperf.results.row import KEY_FIELDS, Row, field_of

SWEEP_FIELDS = tuple(f for f in KEY_FIELDS if f != "command")
# How series labels name a field (analysis/comparison.describe_group); others by field name.
SHORT = {"data_size": "d", "pipeline": "P", "clients": "c", "io_threads": "io"}


@dataclass(frozen=True)
class SweepPoint:
    """One value of the swept key on one line."""

    value: str
    runs: int
    rps: float | None
    p99_ms: float | None
    speedup: float | None  # rps ÷ the line's first point's rps


@dataclass(frozen=True)
class SweepLine:
    """The series that differ only in the swept key: ``series`` names the rest."""

    series: str
    points: list[SweepPoint]


@dataclass(frozen=True)
class Sweep:
    """One swept key: its values in order and its lines."""

    key: str
    label: str  # the key as series labels write it (P, d, c, io, or the field name)
    values: list[str]
    lines: list[SweepLine]


def value_text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple | dict):
        items = value.items() if isinstance(value, dict) else value
        return ",".join(f"{k}={v}" for k, v in items) or "-"
    return str(value)


def _order(value: Any) -> tuple[int, float, str]:
    if value is None:
        return (0, 0.0, "")
    if isinstance(value, int | float):
        return (1, float(value), "")
    return (2, 0.0, value_text(value))


def swept_keys(rows: Iterable[Row]) -> list[str]:
    """The series fields with more than one distinct value among the timed rows."""
    keys = list(group_rows(rows))
    return [name for name in SWEEP_FIELDS
            if len({dict(k).get(name) for k in keys}) > 1]


def _mean(rows: list[Row], name: str) -> float | None:
    values = [float(v) for r in rows for v in [field_of(r, name)]
              if isinstance(v, int | float) and math.isfinite(v) and v > 0]
    return statistics.fmean(values) if values else None


def _line(series: str, points: list[tuple[Any, list[Row]]]) -> SweepLine:
    first = _mean(points[0][1], "rps")
    out = []
    for value, rows in points:
        rps = _mean(rows, "rps")
        speedup = rps / first if rps is not None and first else None
        out.append(SweepPoint(value_text(value), len(rows), rps, _mean(rows, "p99_latency_ms"),
                              speedup))
    return SweepLine(series, out)


def _others(key: GroupKey, name: str) -> GroupKey:
    return tuple((f, None if f == name else v) for f, v in key)


def sweep(rows: list[Row], name: str) -> Sweep:
    """The lines of one swept key (lines with one value left out)."""
    lines: dict[GroupKey, dict[Any, list[Row]]] = {}
    for key, group in group_rows(rows).items():
        lines.setdefault(_others(key, name), {}).setdefault(dict(key).get(name), []).extend(group)
    kept = {other: by_value for other, by_value in lines.items() if len(by_value) > 1}
    varying = [f for f in SWEEP_FIELDS if f not in SHORT and f not in ("cluster_mode", "tls")
               and len({dict(other).get(f) for other in kept}) > 1]
    out, values = [], set()
    for other, by_value in kept.items():
        ordered = sorted(by_value.items(), key=lambda item: _order(item[0]))
        values |= {v for v, _ in ordered}
        out.append(_line(_label(other, varying), ordered))
    return Sweep(name, SHORT.get(name, name), [value_text(v) for v in sorted(values, key=_order)],
                 out)


def _label(other: GroupKey, varying: list[str]) -> str:
    """The other series' label: describe_group's, plus the fields it leaves out that tell
    this sweep's lines apart."""
    fields = dict(other)
    return " ".join([describe_group(other), *(f"{f}={value_text(fields[f])}" for f in varying)])


def sweeps(rows: list[Row]) -> list[Sweep]:
    """One Sweep per swept key that has at least one line."""
    found = [sweep(rows, name) for name in swept_keys(rows)]
    return [s for s in found if s.lines]
