"""The dataset snapshot cache on disk: a preload's RDB by its identity
(definitions/snapshot.py), size-capped, least recently used evicted first.

Layout (``--snapshot-cache`` / ``$KVPERF_SNAPSHOT_CACHE``, default
``$XDG_CACHE_HOME/kvperf/snapshots``)::

    <id>.rdb        the server's RDB right after the preload
    <id>.json       its sidecar, written last (format 1): the identity's inputs, DBSIZE,
                    the sampled keys and their facts, size, created and last used
    <id>.unusable   a snapshot that loaded into different data (an encoding, a value):
                    the reason; that preload runs for real from then on
    lock            held while the cache changes

An RDB without its sidecar is not a snapshot (a save that did not finish). Sizes count
the RDB files; ``prune`` removes the least recently used until the rest fits.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, cast

from kvperf.definitions.snapshot import SnapshotKey
from kvperf.server.keysample import KeyFacts
from kvperf.store.files import write_text_atomic

FORMAT = 1
DEFAULT_MAX_BYTES = 20 * 1024**3  # 20 GiB


class FactsRecord(TypedDict):
    key: str  # latin-1: every byte one character
    type: str
    encoding: str
    digest: str


class SidecarRecord(TypedDict):
    format: int
    id: str
    preload: list[str]
    settings: list[list[str]]
    server: str
    primaries: int
    tool: str
    dbsize: int
    sample: list[FactsRecord]
    bytes: int
    rdb_version: str
    created: float
    last_used: float
    preload_seconds: float


@dataclass(frozen=True)
class Snapshot:
    """A cached snapshot: its RDB and what it holds."""

    rdb: Path
    record: SidecarRecord

    @property
    def id(self) -> str:
        return self.record["id"]

    @property
    def sample(self) -> dict[bytes, KeyFacts]:
        return {f["key"].encode("latin-1"): KeyFacts(f["type"], f["encoding"], f["digest"])
                for f in self.record["sample"]}


def rdb_version(path: Path) -> str:
    """The RDB header's magic and version (``REDIS0011``, ``VALKEY080``), or ``?``."""
    try:
        with path.open("rb") as handle:
            head = handle.read(9)
    except OSError:
        return "?"
    return head.decode("ascii", errors="replace") if head[:5] in (b"REDIS", b"VALKE") \
        else "?"


class SnapshotCache:
    """One cache directory; every change under its lock (runs may share it)."""

    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = root
        self.max_bytes = max_bytes

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / "lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _read(self, sidecar: Path) -> Snapshot | None:
        try:
            record = cast(SidecarRecord, json.loads(sidecar.read_text()))
        except (OSError, ValueError):
            return None
        rdb = sidecar.with_suffix(".rdb")
        if record.get("format") != FORMAT or not rdb.is_file():
            return None
        return Snapshot(rdb, record)

    def find(self, key: str) -> Snapshot | None:
        """The snapshot of ``key``, marked used now; None when there is none."""
        with self._locked():
            found = self._read(self.root / f"{key}.json")
            if found is not None:
                found.record["last_used"] = time.time()
                write_text_atomic(self.root / f"{key}.json", json.dumps(found.record) + "\n")
        return found

    def unusable(self, key: str) -> str | None:
        """Why ``key``'s snapshot was found unusable earlier, or None."""
        try:
            return (self.root / f"{key}.unusable").read_text().strip() or "unusable"
        except OSError:
            return None

    def mark_unusable(self, key: str, reason: str) -> None:
        """Drop ``key``'s snapshot and remember why (its preload runs for real)."""
        with self._locked():
            self._remove(key)
            write_text_atomic(self.root / f"{key}.unusable", reason + "\n")

    def discard(self, key: str) -> None:
        """Drop ``key``'s snapshot (a file that would not load); the next preload saves
        a new one."""
        with self._locked():
            self._remove(key)

    def _remove(self, key: str) -> None:
        for suffix in (".json", ".rdb"):
            (self.root / f"{key}{suffix}").unlink(missing_ok=True)

    def add(self, key: SnapshotKey, rdb: Path, dbsize: int, sample: dict[bytes, KeyFacts],
            preload_seconds: float) -> Snapshot:
        """``rdb`` copied in as ``key``'s snapshot (linked when on one filesystem: the
        server replaces its file on the next save, never rewrites it), then the cache
        pruned to its size, this one kept."""
        with self._locked():
            target = self.root / f"{key.id}.rdb"
            _link_or_copy(rdb, target)
            now = time.time()
            record = SidecarRecord(
                format=FORMAT, id=key.id, preload=list(key.preload),
                settings=[list(pair) for pair in key.settings], server=key.server,
                primaries=key.primaries, tool=key.tool, dbsize=dbsize,
                sample=[FactsRecord(key=k.decode("latin-1"), type=f.type, encoding=f.encoding,
                                    digest=f.digest) for k, f in sample.items()],
                bytes=target.stat().st_size, rdb_version=rdb_version(target), created=now,
                last_used=now, preload_seconds=round(preload_seconds, 3))
            write_text_atomic(self.root / f"{key.id}.json", json.dumps(record) + "\n")
            self._prune(self.max_bytes, keep=key.id)
        return Snapshot(target, record)

    def unusable_marks(self) -> list[tuple[str, str]]:
        """(id, reason) of every preload marked unusable, by id."""
        return [(path.stem, path.read_text().strip())
                for path in sorted(self.root.glob("*.unusable"))]

    def entries(self) -> list[Snapshot]:
        """Every snapshot, most recently used first."""
        found = [s for p in self.root.glob("*.json") if (s := self._read(p)) is not None]
        return sorted(found, key=lambda s: s.record["last_used"], reverse=True)

    def prune(self, max_bytes: int) -> list[Snapshot]:
        """Remove the least recently used snapshots until the rest hold ≤ ``max_bytes``
        (and RDBs a save left without a sidecar); the removed ones."""
        with self._locked():
            return self._prune(max_bytes)

    def _prune(self, max_bytes: int, keep: str | None = None) -> list[Snapshot]:
        for orphan in self.root.glob("*.rdb"):
            if not orphan.with_suffix(".json").exists():
                orphan.unlink(missing_ok=True)
        kept, removed, total = [], [], 0
        for snapshot in self.entries():
            size = snapshot.record["bytes"]
            if snapshot.id == keep or total + size <= max_bytes:
                kept.append(snapshot)
                total += size
            else:
                removed.append(snapshot)
                self._remove(snapshot.id)
        return removed


def _link_or_copy(source: Path, target: Path) -> None:
    tmp = target.with_name(f".{target.name}.{os.getpid()}")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)


def link_into(snapshot: Snapshot, directory: Path, name: str = "dump.rdb") -> Path:
    """The snapshot's RDB in ``directory`` for a server to load at start."""
    target = directory / name
    _link_or_copy(snapshot.rdb, target)
    return target
