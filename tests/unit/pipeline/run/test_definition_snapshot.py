"""Which snapshot a definition test starts from, and what its row says when none (pure
but for the cache directory): off, a plan that always preloads, an identity found
unusable earlier, a cached one, none yet."""

from __future__ import annotations

from pathlib import Path

from kvperf.pipeline.run.definition_snapshot import plan_preload
from kvperf.server.binary import ServerBinary
from kvperf.server.keysample import KeyFacts
from kvperf.store.snapshots import SnapshotCache
from tests.unit.definitions.test_snapshot import plan

BINARY = ServerBinary(Path("/nonexistent/valkey-server"), "valkey", "8.1.1", "fake")


def test_what_a_test_preloads_from(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path / "c")
    assert plan_preload(plan(preload_tool=None), cache, BINARY).source == "none"
    off = plan_preload(plan(), None, BINARY)
    assert off.record() == {"source": "fresh", "seconds": None,
                            "note": "snapshots off (--no-snapshots)"}
    cluster = plan_preload(plan("oss-cluster-3-primaries"), cache, BINARY)
    assert cluster.key is None and (cluster.why or "").startswith("not snapshotted: cluster")
    first = plan_preload(plan(), cache, BINARY, "kvload memtier")
    assert first.key is not None and first.snapshot is None and first.why is None
    rdb = tmp_path / "dump.rdb"
    rdb.write_bytes(b"REDIS0011")
    cache.add(first.key, rdb, 1000, {b"k": KeyFacts("string", "embstr", "00")}, 2.0)
    again = plan_preload(plan(), cache, BINARY, "kvload memtier")
    assert again.snapshot is not None and again.snapshot.id == first.key.id
    assert plan_preload(plan(), cache, BINARY, "memtier_benchmark").snapshot is None
    cache.mark_unusable(first.key.id, "key 'k' is string raw after loading")
    later = plan_preload(plan(), cache, BINARY, "kvload memtier")
    assert later.snapshot is None
    assert later.record()["note"] == (f"snapshot {first.key.id} unusable earlier: key 'k' "
                                      "is string raw after loading")
