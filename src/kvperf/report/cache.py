"""`kvperf cache list|prune`'s table: a line per dataset snapshot, most recently used
first, and the removed ones after a prune."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rich.table import Table
from rich.text import Text


class SnapshotLine(Protocol):
    """A snapshot as listed (pipeline/commands/cache.py ``CacheEntry``)."""

    @property
    def id(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def keys(self) -> int: ...
    @property
    def server(self) -> str: ...
    @property
    def last_used(self) -> str: ...
    @property
    def preload(self) -> str: ...
    @property
    def preload_seconds(self) -> float: ...


def size_text(size: int) -> str:
    """Bytes as a short size: ``512 B``, ``74.9 KiB``, ``3.1 GiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def snapshots_table(title: str, entries: Sequence[SnapshotLine]) -> Table:
    table = Table(title=title, title_justify="left")
    for name, justify in (("snapshot", "left"), ("size", "right"), ("keys", "right"),
                          ("server", "left"), ("last used", "left"),
                          ("preload s", "right"), ("preload", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for e in entries:
        table.add_row(e.id, size_text(e.size), f"{e.keys:,}", e.server, e.last_used,
                      f"{e.preload_seconds:.1f}", Text(e.preload[:100]))
    return table
