"""Replicas of a primary kvperf started: REPLICAOF, waiting until they are in sync, and
the replication lag sampled while a measure stage runs."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
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


def replica_lags(info: dict[str, str]) -> list[int]:
    """master_repl_offset − each replica's acknowledged offset, in bytes (pure). A replica
    can report an offset past the one read a moment earlier: clamped at 0."""
    offset = int(info.get("master_repl_offset", "0"))
    found = [_SLAVE.search(v) for k, v in info.items() if re.fullmatch(r"slave\d+", k)]
    return [max(0, offset - int(m.group(2))) for m in found if m]


class ReplicationLag(TypedDict):
    """The row's ``server.replication_lag``: master_repl_offset − each replica's offset
    (INFO replication), sampled every ``interval_ms`` through the measure stage, over
    every primary's replicas."""

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
def lag_sampling(primaries: tuple[Endpoint, ...], interval: float = LAG_INTERVAL
                 ) -> Iterator[LagSamples]:
    """While the block runs, INFO replication of each primary every ``interval`` seconds
    (a thread of its own, one connection per primary); the lags collected when it ends."""
    samples = LagSamples()
    stop = threading.Event()

    def sample() -> None:
        clients: list[RespClient] = []
        try:
            clients.extend(RespClient(p) for p in primaries)
            while not stop.wait(interval):
                for client in clients:
                    reply = client.call("INFO", "replication")
                    samples.values.extend(
                        replica_lags(parse_info(reply if isinstance(reply, bytes) else b"")))
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
