"""Forming a cluster of N primaries: slots split evenly, nodes met, wait for cluster_state:ok.

A MEET can be lost: on a loaded machine one side's handshake may time out while the other
side already trusts the peer, and Valkey 8.0 stays split (valkey-io/valkey#1251, fixed in 8.1).
So while waiting, every node that does not yet know all the others is met again (a MEET of a
known node is harmless), and a failure names each node's view of the cluster.
"""

from __future__ import annotations

import time

from kvperf.core.errors import ServerError
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError, parse_info

SLOTS = 16384
REMEET_EVERY = 3.0  # seconds between re-introductions of nodes that still miss a peer


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
        _meet(endpoints[0], endpoints[1:])
    except (RespError, ConnectionLost) as exc:
        raise ServerError(f"cluster formation failed: {exc}") from None
    wait_cluster_ok(endpoints, timeout)


def attach_replicas(primaries: list[Endpoint], replicas: list[list[Endpoint]],
                    timeout: float = 30.0) -> None:
    """Make ``replicas[i]`` replicas of ``primaries[i]`` in a formed cluster: each met with
    the first primary, then CLUSTER REPLICATE of its primary's id once it knows that node
    (gossip brings it), then every node sees all the others."""
    try:
        ids = [_call(p, "CLUSTER", "MYID") for p in primaries]
        for primary_id, group in zip(ids, replicas, strict=True):
            for replica in group:
                _meet(replica, [primaries[0]])
                _replicate(replica, primary_id, timeout)
    except (RespError, ConnectionLost) as exc:
        raise ServerError(f"attaching cluster replicas failed: {exc}") from None
    everyone = [*primaries, *(r for group in replicas for r in group)]
    wait_cluster_ok(everyone, timeout)
    _wait_replicas_known(everyone, sum(len(g) for g in replicas), timeout)


def replicas_seen(nodes_text: str) -> int:
    """Replicas a CLUSTER NODES reply lists with their primary and not failing (pure)."""
    count = 0
    for line in nodes_text.splitlines():
        fields = line.split()
        flags = fields[2].split(",") if len(fields) > 3 else []
        if "slave" in flags and fields[3] != "-" and not {"fail", "fail?"} & set(flags):
            count += 1
    return count


def _wait_replicas_known(endpoints: list[Endpoint], replicas: int, timeout: float) -> None:
    """Until every node lists every replica under its primary (gossip spreads a
    CLUSTER REPLICATE): clients read the topology from any node."""
    deadline = time.monotonic() + timeout
    seen: list[int] = []
    while time.monotonic() < deadline:
        seen = [replicas_seen(_call(e, "CLUSTER", "NODES")) for e in endpoints]
        if all(n == replicas for n in seen):
            return
        time.sleep(0.1)
    raise ServerError(f"cluster nodes list {seen} of {replicas} replicas after {timeout:.0f}s")


def _call(endpoint: Endpoint, *args: str) -> str:
    with RespClient(endpoint) as client:
        reply = client.call(*args)
    return reply.decode() if isinstance(reply, bytes) else str(reply)


def _replicate(replica: Endpoint, primary_id: str, timeout: float) -> None:
    """CLUSTER REPLICATE until the replica knows the primary (ERR Unknown node before)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            _call(replica, "CLUSTER", "REPLICATE", primary_id)
            return
        except RespError as exc:
            if time.monotonic() > deadline:
                raise ServerError(f"CLUSTER REPLICATE {primary_id} at {replica}: {exc}"
                                  ) from None
            time.sleep(0.1)


def _meet(seed: Endpoint, others: list[Endpoint]) -> None:
    with RespClient(seed) as client:
        for other in others:
            client.call("CLUSTER", "MEET", other.host, other.port)


def cluster_view(endpoint: Endpoint) -> dict[str, str]:
    """CLUSTER INFO of one node as a dict; empty when the node does not answer."""
    try:
        with RespClient(endpoint) as client:
            reply = client.call("CLUSTER", "INFO")
    except (RespError, ConnectionLost):
        return {}
    return parse_info(reply if isinstance(reply, bytes) else b"")


def view_ok(view: dict[str, str], nodes: int) -> bool:
    """True when a node sees the whole cluster: state ok, all slots, every node known (pure)."""
    return (view.get("cluster_state") == "ok"
            and view.get("cluster_slots_assigned") == str(SLOTS)
            and view.get("cluster_known_nodes") == str(nodes))


def describe_views(endpoints: list[Endpoint], views: list[dict[str, str]]) -> str:
    """One clause per node: its state, slots and known nodes, or that it did not answer (pure)."""
    parts = []
    for endpoint, view in zip(endpoints, views, strict=True):
        if not view:
            parts.append(f"{endpoint} did not answer CLUSTER INFO")
            continue
        parts.append(f"{endpoint} state {view.get('cluster_state', '?')}, "
                     f"{view.get('cluster_slots_assigned', '?')} slots, "
                     f"{view.get('cluster_known_nodes', '?')} nodes known")
    return "; ".join(parts)


def wait_cluster_ok(endpoints: list[Endpoint], timeout: float = 30.0) -> None:
    """Wait until every node sees the whole cluster, meeting lagging nodes again."""
    start = time.monotonic()
    last_meet = start
    views: list[dict[str, str]] = [{} for _ in endpoints]
    while time.monotonic() - start < timeout:
        views = [cluster_view(e) for e in endpoints]
        if all(view_ok(v, len(endpoints)) for v in views):
            return
        if time.monotonic() - last_meet >= REMEET_EVERY:
            _remeet(endpoints, views)
            last_meet = time.monotonic()
        time.sleep(0.1)
    raise ServerError(f"cluster of {len(endpoints)} nodes did not reach cluster_state:ok "
                      f"with {SLOTS} slots within {timeout:.0f}s: "
                      f"{describe_views(endpoints, views)}")


def _remeet(endpoints: list[Endpoint], views: list[dict[str, str]]) -> None:
    """Meet every node that misses a peer with all the others again (both directions)."""
    for endpoint, view in zip(endpoints, views, strict=True):
        if view and int(view.get("cluster_known_nodes", "0")) < len(endpoints):
            others = [e for e in endpoints if e is not endpoint]
            try:
                _meet(endpoint, others)
                for other in others:
                    _meet(other, [endpoint])
            except (RespError, ConnectionLost):
                pass  # the next round of views says what is wrong
