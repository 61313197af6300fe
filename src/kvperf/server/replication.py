"""Replicas of a primary kvperf started: REPLICAOF, waiting until they are in sync, and
the replication lag sampled while a measure stage runs."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from kvperf.core.errors import ServerError
from kvperf.server.process import wait_until
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError, parse_info

SYNC_TIMEOUT = 300.0
_SLAVE = re.compile(r"state=(\w+),offset=(\d+)")


def attach(replica: Endpoint, primary: Endpoint) -> None:
    """Make ``replica`` replicate ``primary``."""
    with RespClient(replica) as client:
        reply = client.call("REPLICAOF", primary.host, str(primary.port))
    if isinstance(reply, RespError):
        raise ServerError(f"REPLICAOF at {replica}: {reply}")


def lagging(info: dict[str, str], replicas: int) -> str | None:
    """Why the replicas of INFO replication ``info`` are not in sync yet, or None (pure):
    every one online with the primary's offset."""
    offset = info.get("master_repl_offset", "0")
    states = [_SLAVE.search(v) for k, v in info.items() if re.fullmatch(r"slave\d+", k)]
    found = [m for m in states if m]
    if len(found) < replicas:
        return f"{len(found)} of {replicas} replica(s) connected"
    behind = [f"{m.group(1)} at offset {m.group(2)}" for m in found
              if m.group(1) != "online" or m.group(2) != offset]
    return f"replica(s) {', '.join(behind)} (primary at {offset})" if behind else None


def wait_in_sync(primary: Endpoint, replicas: int, timeout: float = SYNC_TIMEOUT) -> None:
    """Until every replica is online at the primary's offset (ServerError after timeout)."""
    last: list[str | None] = [None]

    def synced() -> bool:
        with RespClient(primary) as client:
            reply = client.call("INFO", "replication")
        last[0] = lagging(parse_info(reply if isinstance(reply, bytes) else b""), replicas)
        return last[0] is None

    if not wait_until(synced, timeout, interval=0.1):
        raise ServerError(f"replicas of {primary} not in sync within {timeout:.0f}s: {last[0]}")


LAG_INTERVAL = 0.1  # seconds between samples of INFO replication during the measure stage


def replica_lag(primary: dict[str, str], replica: dict[str, str]) -> int:
    """The primary's master_repl_offset − the replica's own processed offset
    (slave_repl_offset), in bytes (pure). Not the offset the primary lists for it: a replica
    acknowledges that once a second, which would add up to a second of writes. The replica
    is read just after the primary, so it may be ahead: clamped at 0."""
    return max(0, int(primary.get("master_repl_offset", "0"))
               - int(replica.get("slave_repl_offset", "0")))


class ReplicationLag(TypedDict):
    """The row's ``server.replication_lag``: a primary's master_repl_offset − each of its
    replicas' slave_repl_offset (INFO replication), sampled every ``interval_ms`` through
    the measure stage, over every primary's replicas."""

    max_bytes: int
    mean_bytes: float
    samples: int
    interval_ms: int


@dataclass
class LagSamples:
    """Replication lag samples of a measure stage, over every primary's replicas."""

    values: list[int] = field(default_factory=list)

    def record(self) -> ReplicationLag | None:
        """The row's ``replication_lag``: max and mean bytes and the samples taken."""
        if not self.values:
            return None
        return {"max_bytes": max(self.values),
                "mean_bytes": round(sum(self.values) / len(self.values), 1),
                "samples": len(self.values), "interval_ms": int(LAG_INTERVAL * 1000)}


@contextlib.contextmanager
def lag_sampling(groups: list[tuple[Endpoint, list[Endpoint]]], interval: float = LAG_INTERVAL
                 ) -> Iterator[LagSamples]:
    """While the block runs, every ``interval`` seconds each primary's INFO replication and
    then its replicas' (``groups``: a primary and its replicas; a thread of its own, one
    connection per node); the lags collected when it ends."""
    samples = LagSamples()
    stop = threading.Event()

    def info(client: RespClient) -> dict[str, str]:
        reply = client.call("INFO", "replication")
        return parse_info(reply if isinstance(reply, bytes) else b"")

    def sample() -> None:
        clients: list[RespClient] = []
        try:
            pairs = [(RespClient(p), [RespClient(r) for r in rs]) for p, rs in groups]
            clients.extend(c for p, rs in pairs for c in (p, *rs))
            while not stop.wait(interval):
                for primary, replicas in pairs:
                    offset = info(primary)
                    samples.values.extend(replica_lag(offset, info(r)) for r in replicas)
        except (ConnectionLost, RespError, OSError):
            pass  # a node gone mid-stage: the trial's own checks say so
        finally:
            for client in clients:
                client.close()

    thread = threading.Thread(target=sample, name="replication-lag", daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join(timeout=5)


SYNC_DELAY = "repl-diskless-sync-delay"


@contextlib.contextmanager
def sync_at_once(primary: Endpoint) -> Iterator[None]:
    """``primary``'s repl-diskless-sync-delay at 0 while its replicas first sync, restored
    after: Valkey otherwise waits that long (5 s by default) for more replicas before a
    diskless full sync. A server that refuses either CONFIG call keeps its own delay."""
    with RespClient(primary) as client:
        try:
            reply = client.call("CONFIG", "GET", SYNC_DELAY)
            old = reply[1] if isinstance(reply, list) and len(reply) > 1 else None
            client.call("CONFIG", "SET", SYNC_DELAY, "0")
        except RespError:
            old = None
    try:
        yield
    finally:
        if isinstance(old, bytes):
            with RespClient(primary) as client, contextlib.suppress(RespError):
                client.call("CONFIG", "SET", SYNC_DELAY, old)


def carries_replication_id(rdb: Path) -> bool:
    """Whether the RDB's auxiliary fields (at its start, before any key) hold a replication
    id: saved by a primary that had a replication backlog. A primary and replicas started
    from such a file continue that history, so the replicas resync partially (0 bytes)."""
    with rdb.open("rb") as found:
        return b"\x07repl-id" in found.read(4096)


def sync_kind(primary: Endpoint, replicas: int) -> str:
    """``partial`` when every replica of ``primary`` resynced partially and none fully
    (INFO stats sync_partial_ok, sync_full), else ``full``."""
    with RespClient(primary) as client:
        reply = client.call("INFO", "stats")
    stats = parse_info(reply if isinstance(reply, bytes) else b"")
    partial = int(stats.get("sync_partial_ok", "0") or 0)
    full = int(stats.get("sync_full", "0") or 0)
    return "partial" if partial >= replicas and full == 0 else "full"
