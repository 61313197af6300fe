"""The terminal tables of trials with faults (a row's ``failover`` record,
results/failover.py): per fault its time, the time to the first error and the unavailability
window it caused; per trial the errors by kind, p99 before / during / after the outages and
the acknowledged writes checked and lost; and per second the successes and errors around
the faults (``timeline_table``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from kvperf.results.row import Row

COLUMNS = ("trial", "fault", "at s", "to 1st error s", "unavailable s", "errors by kind",
           "p99 ms before/during/after", "acked writes lost")


def _num(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _fault(entry: Mapping[str, Any]) -> str:
    text = f"{entry['action']} {entry['target']}"
    return f"{text} (failed: {entry['error']})" if entry.get("error") else text


def _kinds(record: Mapping[str, Any]) -> str:
    kinds = record.get("errors_by_kind") or {}
    return ", ".join(f"{kind} {n:,}" for kind, n in kinds.items()) or "none"


def _p99(record: Mapping[str, Any]) -> str:
    p99 = record.get("p99_ms") or {}
    return "/".join(_num(p99.get(phase)) for phase in ("before", "during", "after"))


def _writes(record: Mapping[str, Any]) -> str:
    writes = record.get("acknowledged_writes")
    if writes is None:
        return "not checked"
    return f"{writes['lost']:,} of {writes['checked']:,}"


def failover_table(rows: list[Row]) -> Table | None:
    """A line per fault of every row with a ``failover`` record (None: no such row). The
    unavailability window is null ("never") when the load did not come back."""
    found = [r for r in rows if r.get("failover")]
    if not found:
        return None
    table = Table(title="failover under load")
    for name in COLUMNS:
        table.add_column(name, justify="left" if name in ("trial", "fault") else "right")
    for row in found:
        record = row["failover"]
        name = f"{row['command']} run {row.get('run', '?')}"
        for i, entry in enumerate(record.get("faults") or []):
            window = entry.get("window")
            first = ("-" if window is None else _num(window["time_to_first_error_s"]))
            gone = ("-" if window is None else
                    "never back" if window["unavailable_s"] is None
                    else _num(window["unavailable_s"]))
            whole = i == 0  # the trial's totals on its first fault's line
            table.add_row(name if whole else "", _fault(entry), f"{entry['at_s']:g}", first,
                          gone, _kinds(record) if whole else "",
                          _p99(record) if whole else "", _writes(record) if whole else "")
    return table


def _faults_in(record: Mapping[str, Any], t_s: int) -> str:
    """The faults that started in second ``t_s`` of the load."""
    start = record.get("start_unix") or 0
    return ", ".join(f"{f['action']} {f['target']}" for f in record.get("faults") or []
                     if t_s <= f["started_unix"] - start < t_s + 1)


def timeline_table(rows: list[Row]) -> Table | None:
    """Per second of each trial with faults: successful replies, errors and the faults
    that started in it (None: no such trial)."""
    found = [r for r in rows if (r.get("failover") or {}).get("seconds")]
    if not found:
        return None
    table = Table(title="failover timeline (per second of the load)")
    for name in ("trial", "second", "ok", "errors", "fault"):
        table.add_column(name, justify="left" if name in ("trial", "fault") else "right")
    for row in found:
        record = row["failover"]
        name = f"{row['command']} run {row.get('run', '?')}"
        for i, second in enumerate(record["seconds"]):
            table.add_row(name if i == 0 else "", f"{second['t_s']}", f"{second['ok']:,}",
                          f"{second['errors']:,}", _faults_in(record, second["t_s"]))
    return table
