"""Staircase trials shown (a config's ``staircase``): per trial a terminal table of its
steps — connections, achieved rps, p50 and p99 (corrected latency) — from the row's
``client.staircase`` (kvload's per-step results)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from kvperf.results.row import Row

HEADER = ("step", "connections", "seconds", "rps", "p50 ms", "p99 ms", "p99.9 ms")


def _num(value: object) -> float:
    """A number of kvload's JSON (null, from a non-finite value: NaN)."""
    return float(value) if isinstance(value, (int, float)) else float("nan")


def staircase_tables(rows: list[Row]) -> list[Table]:
    """One table per row that ran a staircase (none for other rows)."""
    tables = []
    for row in rows:
        steps = (row.get("client") or {}).get("staircase")
        if not steps:
            continue
        table = Table(title=escape(f"staircase · {row['command']} run {row['run']} "
                                   f"(up to {row['clients']} connections)"))
        for name in HEADER:
            table.add_column(name, justify="right")
        for s in steps:
            table.add_row(str(s["step"]), str(s["connections"]), f"{s['from_s']}–{s['to_s']}",
                          f"{_num(s['ops_sec']):,.0f}", f"{_num(s['p50_ms']):.3f}",
                          f"{_num(s['p99_ms']):.3f}", f"{_num(s['p99_9_ms']):.3f}")
        tables.append(table)
    return tables
