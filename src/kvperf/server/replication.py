"""Replicas of a primary kvperf started: REPLICAOF, and waiting until they are in sync."""

from __future__ import annotations

import re

from kvperf.core.errors import ServerError
from kvperf.server.process import wait_until
from kvperf.server.resp import Endpoint, RespClient, RespError, parse_info

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
