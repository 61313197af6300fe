"""`kvperf cache list|prune`: the dataset snapshot cache of `run --definitions`
(store/snapshots.py) — its snapshots, most recently used first, with their size, keys and
preload; prune removes the least recently used until the rest fit ``--max-size`` (default
the cache's cap, $KVPERF_SNAPSHOT_CACHE_SIZE or 20 GiB)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime

from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.checks import snapshot_dir, snapshot_max_bytes
from kvperf.pipeline.request.cache import CacheFlags, CacheRequest
from kvperf.store.snapshots import Snapshot, SnapshotCache

ACTIONS = ("list", "prune")


@dataclass(frozen=True)
class CacheEntry:
    """A snapshot as listed."""

    id: str
    size: int
    keys: int
    server: str
    last_used: str
    preload: str
    preload_seconds: float


@dataclass(frozen=True)
class CacheListed:
    """The snapshots kept (``entries``) and, for prune, the removed ones."""

    root: str
    entries: list[CacheEntry]
    removed: list[CacheEntry]
    max_bytes: int
    unusable: list[tuple[str, str]]  # (id, why): preloads that run for real every time

    @property
    def total(self) -> int:
        return sum(e.size for e in self.entries)

    @property
    def exit_code(self) -> int:
        return 0


def cache_request(flags: CacheFlags) -> CacheRequest:
    """The flags checked (UsageError: an unknown action, a size that is none)."""
    if flags.action not in ACTIONS:
        raise UsageError(f"kvperf cache {flags.action!r}: give one of {', '.join(ACTIONS)}")
    if flags.max_size is not None and flags.action != "prune":
        raise UsageError("--max-size applies to kvperf cache prune")
    cap = snapshot_max_bytes(flags.max_size if flags.max_size is not None
                             else os.environ.get("KVPERF_SNAPSHOT_CACHE_SIZE"))
    return CacheRequest(flags.action, snapshot_dir(flags.snapshot_cache), cap)


def _entry(snapshot: Snapshot) -> CacheEntry:
    record = snapshot.record
    used = datetime.fromtimestamp(record["last_used"], UTC).isoformat(timespec="seconds")
    return CacheEntry(snapshot.id, record["bytes"], record["dbsize"], record["server"], used,
                      " ".join(record["preload"]), record["preload_seconds"])


def cache(request: CacheRequest) -> CacheListed:
    """List the snapshots, or prune them to ``request.max_bytes`` first."""
    store = SnapshotCache(request.root, request.max_bytes)
    removed = store.prune(request.max_bytes) if request.action == "prune" else []
    return CacheListed(str(request.root), [_entry(s) for s in store.entries()],
                       [_entry(s) for s in removed], request.max_bytes,
                       store.unusable_marks())
