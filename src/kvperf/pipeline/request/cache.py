"""``kvperf cache list|prune``: the flags as given and the checked request (plain data)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CacheFlags:
    action: str  # list | prune
    snapshot_cache: Path | None = None  # --snapshot-cache
    max_size: str | None = None  # prune --max-size (default: the cache's cap)


@dataclass(frozen=True)
class CacheRequest:
    action: str
    root: Path
    max_bytes: int
