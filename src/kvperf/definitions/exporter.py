"""Exporter metrics: a definition's JSONPaths evaluated over a result document (pure).

``exporter.redistimeseries.metrics`` names values of the tool's JSON (memtier's layout:
``$."ALL STATS".Totals."Ops/sec"``, ``…"Percentile Latencies"."p50.00"``). Each becomes a
metric named by its own path; a path with a wildcard gives one metric per concrete path it
reaches (``$."precision_summary".*.qps`` → ``$.precision_summary."0.9".qps`` …). A path that
finds nothing, or finds something that is not a number, is reported as missing, never
dropped silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kvperf.definitions.jsonpath import JsonPathError, find, has_wildcard


@dataclass(frozen=True)
class MetricValue:
    name: str
    value: float | None
    missing: str = ""  # why there is no value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def evaluate(paths: tuple[str, ...], document: Any) -> tuple[MetricValue, ...]:
    """One value per path (per concrete path for wildcards), in the order given."""
    out: list[MetricValue] = []
    for path in paths:
        try:
            found = find(path, document)
            wildcard = has_wildcard(path)
        except JsonPathError as exc:
            out.append(MetricValue(path, None, f"bad path: {exc}"))
            continue
        if not found:
            out.append(MetricValue(path, None, "not in the result"))
        for match in found:
            name = match.path if wildcard else path
            number = _number(match.value)
            out.append(MetricValue(name, number, "" if number is not None
                                   else f"not a number: {str(match.value)[:40]!r}"))
    return tuple(out)
