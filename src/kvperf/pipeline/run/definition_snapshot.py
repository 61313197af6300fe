"""A definition test's preload from the dataset snapshot cache (store/snapshots.py): which
snapshot a plan may start from, its check once the server loaded it (DBSIZE, the sampled
keys' type, ``OBJECT ENCODING`` and value digest as the snapshot recorded them after its
real preload), and the save after a real preload. What the row says of it
(``definition.preload``: source ``snapshot``, ``fresh`` or ``reused`` — a server kept
from the test before, its data checked as a loaded snapshot's — seconds, the snapshot's
id, why not).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from kvperf.definitions.plan import Plan
from kvperf.definitions.snapshot import SnapshotKey, snapshot_key, snapshot_refusal
from kvperf.results.records import PreloadRecord
from kvperf.server.binary import ServerBinary
from kvperf.server.keysample import key_facts, sample_keys, save_rdb
from kvperf.server.resp import ConnectionLost, Endpoint, RespError
from kvperf.store.snapshots import Snapshot, SnapshotCache

log = logging.getLogger("kvperf")
LOAD_TIMEOUT = 1800.0  # seconds a server may take to load a snapshot before answering PING


@dataclass
class PreloadState:
    """What a test's preload was: planned from the cache, then what happened."""

    key: SnapshotKey | None = None  # None: no snapshot for this plan (``why``)
    snapshot: Snapshot | None = None  # the one to start from
    why: str | None = None  # why no snapshot, or why the one found was not used
    source: str = "fresh"
    seconds: float | None = None
    saved: str | None = None  # the snapshot a real preload was saved as
    reused_from: str | None = None  # source ``reused``: the test that left the server
    times: dict[str, float] = field(default_factory=dict)

    def record(self) -> PreloadRecord:
        found = PreloadRecord(source=self.source,
                              seconds=None if self.seconds is None else round(self.seconds, 3))
        if self.key is not None:
            found["snapshot"] = self.key.id
        if self.why:
            found["note"] = self.why
        if self.saved:
            found["saved"] = self.saved
        if self.reused_from:
            found["reused_from"] = self.reused_from
        return found


def plan_preload(plan: Plan, cache: SnapshotCache | None, binary: ServerBinary,
                 tool: str = "") -> PreloadState:
    """The snapshot ``plan`` starts from, if the cache has a usable one."""
    if plan.preload is None:
        return PreloadState(source="none")
    if cache is None:
        return PreloadState(why="snapshots off (--no-snapshots)")
    refused = snapshot_refusal(plan)
    if refused is not None:
        return PreloadState(why=f"not snapshotted: {refused}")
    key = snapshot_key(plan, binary.product, binary.version, tool)
    unusable = cache.unusable(key.id)
    if unusable is not None:
        return PreloadState(key, why=f"snapshot {key.id} unusable earlier: {unusable}")
    return PreloadState(key, cache.find(key.id))


def mismatch(snapshot: Snapshot, endpoint: Endpoint, keys: int) -> str | None:
    """How the loaded server differs from what the snapshot recorded, or None."""
    expected = snapshot.record["dbsize"]
    if keys != expected:
        return f"DBSIZE {keys} after loading, the snapshot holds {expected}"
    sample = snapshot.sample
    found = key_facts(endpoint, list(sample))
    for key, want in sample.items():
        got = found.get(key)
        if got != want:
            shown = key.decode(errors="replace")
            return (f"key {shown!r} is {got.describe() if got else 'missing'} after loading, "
                    f"{want.describe()} after its preload (type, OBJECT ENCODING, digest)")
    return None


def verified(state: PreloadState, cache: SnapshotCache, endpoint: Endpoint, keys: int,
             name: str) -> bool:
    """Whether the loaded snapshot holds its data; if not, the cache is told (a value or
    an encoding that differs: that preload runs for real from now on) and the log says so."""
    assert state.snapshot is not None and state.key is not None
    try:
        problem = mismatch(state.snapshot, endpoint, keys)
    except (RespError, ConnectionLost, OSError) as exc:
        problem = f"reading its sampled keys failed: {exc}"
    if problem is None:
        return True
    if problem.startswith("DBSIZE"):
        cache.discard(state.key.id)
    else:
        cache.mark_unusable(state.key.id, problem)
    state.why = f"snapshot {state.key.id} unusable: {problem}; preloaded"
    log.warning("%s: snapshot %s unusable: %s; preloading", name, state.key.id, problem)
    return False


def unloadable(state: PreloadState, cache: SnapshotCache, error: Exception, name: str
               ) -> None:
    """The server did not start from the snapshot (a corrupt or foreign RDB): dropped."""
    assert state.key is not None
    cache.discard(state.key.id)
    reason = f"the server did not load it ({str(error).splitlines()[0][:300]})"
    state.why = f"snapshot {state.key.id} unusable: {reason}; preloaded"
    log.warning("%s: snapshot %s unusable: %s; preloading", name, state.key.id, reason)


def save(state: PreloadState, cache: SnapshotCache | None, endpoint: Endpoint, keys: int,
         name: str) -> None:
    """After a real preload: SAVE, and the RDB with its sample into the cache."""
    if cache is None or state.key is None or cache.unusable(state.key.id) is not None:
        return
    started = time.monotonic()
    try:
        rdb = save_rdb(endpoint)
        sample = {k: f for k, f in key_facts(endpoint, sample_keys(endpoint)).items()
                  if f is not None}
        cache.add(state.key, rdb, keys, sample, state.seconds or 0.0)
    except (RespError, ConnectionLost, OSError) as exc:
        log.warning("%s: the preload was not saved as snapshot %s: %s", name, state.key.id,
                    exc)
        return
    state.saved = state.key.id
    log.info("%s: preloaded in %.1fs; saved as snapshot %s in %.1fs", name,
             state.seconds or 0.0, state.key.id, time.monotonic() - started)
