"""`--measure memory`'s table: per series and server, keys, bytes per key by INFO and by the
MEMORY USAGE sample, RSS per key and fragmentation (the median over runs)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping

from rich.table import Table

from kvperf.analysis.comparison import GroupKey, describe_group, group_key, metric_value
from kvperf.results.row import Row, is_ok

COLUMNS = ("series", "server", "keys", "bytes/key (INFO)", "bytes/key (MEMORY USAGE)",
           "RSS/key", "fragmentation")


def _median(rows: list[Row], metric: str) -> float | None:
    values = [v for r in rows if (v := metric_value(r, metric)) is not None]
    return statistics.median(values) if values else None


def _text(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def memory_cells(rows: list[Row]) -> list[str]:
    """keys … fragmentation of one series on one server (its ok rows)."""
    items = _median(rows, "memory.items")
    return [_text(items, 0), _text(_median(rows, "memory.bytes_per_key")),
            _text(_median(rows, "memory.sample_bytes_per_key")),
            _text(_median(rows, "memory.rss_bytes_per_key")),
            _text(_median(rows, "memory.mem_fragmentation_ratio"), 2)]


def memory_table(rows_by_server: Mapping[str, list[Row]]) -> Table | None:
    """One line per (series, server) with a memory reading; None when no row has one."""
    table = Table(title="memory per key")
    for name in COLUMNS:
        table.add_column(name, justify="left" if name in ("series", "server") else "right")
    lines: list[tuple[str, int, list[str]]] = []
    for position, (server, rows) in enumerate(rows_by_server.items()):
        groups: dict[GroupKey, list[Row]] = {}
        for row in rows:
            if is_ok(row) and row.get("memory"):
                groups.setdefault(group_key(row), []).append(row)
        lines += [(describe_group(key), position, [describe_group(key), server,
                                                   *memory_cells(group)])
                  for key, group in groups.items()]
    if not lines:
        return None
    for _, _, cells in sorted(lines, key=lambda line: (line[0], line[1])):
        table.add_row(*cells)
    return table
