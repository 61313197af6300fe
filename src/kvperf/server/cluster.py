"""Forming a cluster of N primaries: slots split evenly, nodes met, wait for cluster_state:ok."""

from __future__ import annotations

import time

from kvperf.core.errors import ServerError
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError, parse_info

SLOTS = 16384


def slot_ranges(nodes: int) -> list[tuple[int, int]]:
    """Split 0..16383 into ``nodes`` contiguous inclusive ranges (pure)."""
    bounds = [SLOTS * i // nodes for i in range(nodes + 1)]
    return [(bounds[i], bounds[i + 1] - 1) for i in range(nodes)]


def form_cluster(endpoints: list[Endpoint], timeout: float = 30.0) -> None:
    """Assign slots, introduce every node to the first, and wait until all agree it is ok."""
    try:
        for endpoint, (first, last) in zip(endpoints, slot_ranges(len(endpoints)), strict=True):
            with RespClient(endpoint) as client:
                client.call("CLUSTER", "ADDSLOTSRANGE", first, last)
        with RespClient(endpoints[0]) as seed:
            for other in endpoints[1:]:
                seed.call("CLUSTER", "MEET", other.host, other.port)
    except (RespError, ConnectionLost) as exc:
        raise ServerError(f"cluster formation failed: {exc}") from None
    _wait_ok(endpoints, timeout)


def _cluster_ok(endpoint: Endpoint, nodes: int) -> bool:
    try:
        with RespClient(endpoint) as client:
            reply = client.call("CLUSTER", "INFO")
    except (RespError, ConnectionLost):
        return False
    info = parse_info(reply if isinstance(reply, bytes) else b"")
    return (info.get("cluster_state") == "ok"
            and info.get("cluster_slots_assigned") == str(SLOTS)
            and info.get("cluster_known_nodes") == str(nodes))


def _wait_ok(endpoints: list[Endpoint], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(_cluster_ok(e, len(endpoints)) for e in endpoints):
            return
        time.sleep(0.1)
    raise ServerError(f"cluster of {len(endpoints)} nodes did not reach cluster_state:ok "
                      f"with {SLOTS} slots within {timeout:.0f}s")
