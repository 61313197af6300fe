"""The snapshot cache on disk: add (sidecar last), find marks it used, prune by least
recent use down to a size, the cap applied after each add, orphan RDBs, unusable marks."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kvperf.definitions.snapshot import SnapshotKey
from kvperf.server.keysample import KeyFacts
from kvperf.store.snapshots import SnapshotCache, rdb_version

SAMPLE = {b"k\xff1": KeyFacts("hash", "listpack", "00ff")}


def key(n: int) -> SnapshotKey:
    return SnapshotKey(f"{n:016x}", ("--key-maximum=10",), (), "valkey 8.1", 1)


def rdb(tmp_path: Path, n: int, size: int = 1000) -> Path:
    path = tmp_path / f"src{n}.rdb"
    path.write_bytes(b"REDIS0011" + bytes(size - 9))
    return path


def aged(cache: SnapshotCache, n: int, when: float) -> None:
    sidecar = cache.root / f"{key(n).id}.json"
    record = json.loads(sidecar.read_text())
    record["last_used"] = when
    sidecar.write_text(json.dumps(record))


def test_add_find_and_the_sample_round_trip(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path / "c")
    added = cache.add(key(1), rdb(tmp_path, 1), 10, SAMPLE, 1.5)
    assert added.record["rdb_version"] == "REDIS0011" == rdb_version(added.rdb)
    found = cache.find(key(1).id)
    assert found is not None and found.sample == SAMPLE and found.record["dbsize"] == 10
    assert found.record["last_used"] >= added.record["last_used"]
    assert cache.find(key(2).id) is None
    (cache.root / f"{key(1).id}.rdb").unlink()  # a sidecar without its RDB is no snapshot
    assert cache.find(key(1).id) is None


def test_prune_removes_the_least_recently_used_first(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path / "c")
    for n in (1, 2, 3):
        cache.add(key(n), rdb(tmp_path, n), 10, SAMPLE, 1.0)
    for n, when in ((1, 300.0), (2, 100.0), (3, 200.0)):  # 2 least recently used, then 3
        aged(cache, n, when)
    (cache.root / "feedbeef.rdb").write_bytes(b"x")  # a save that left no sidecar
    removed = cache.prune(2500)
    assert [s.id for s in removed] == [key(2).id]
    assert [s.id for s in cache.entries()] == [key(1).id, key(3).id]
    assert not (cache.root / "feedbeef.rdb").exists()
    assert [s.id for s in cache.prune(1000)] == [key(3).id]
    assert [s.id for s in cache.prune(0)] == [key(1).id] and cache.entries() == []


def test_the_cap_applies_after_each_add_and_keeps_the_new_one(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path / "c", max_bytes=1500)
    cache.add(key(1), rdb(tmp_path, 1), 10, SAMPLE, 1.0)
    aged(cache, 1, 100.0)
    cache.add(key(2), rdb(tmp_path, 2, 2000), 10, SAMPLE, 1.0)  # beyond the cap alone
    assert [s.id for s in cache.entries()] == [key(2).id]


def test_added_snapshot_is_linked_and_survives_its_source(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path / "c")
    source = rdb(tmp_path, 1)
    added = cache.add(key(1), source, 10, SAMPLE, 1.0)
    assert os.stat(source).st_ino == os.stat(added.rdb).st_ino  # one filesystem: a link
    source.unlink()
    assert cache.find(key(1).id) is not None


def test_unusable_marks_and_discard(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path / "c")
    cache.add(key(1), rdb(tmp_path, 1), 10, SAMPLE, 1.0)
    cache.add(key(2), rdb(tmp_path, 2), 10, SAMPLE, 1.0)
    cache.mark_unusable(key(1).id, "key 'a' is hash hashtable after loading")
    assert cache.find(key(1).id) is None
    assert cache.unusable(key(1).id) == "key 'a' is hash hashtable after loading"
    cache.discard(key(2).id)
    assert cache.find(key(2).id) is None and cache.unusable(key(2).id) is None
