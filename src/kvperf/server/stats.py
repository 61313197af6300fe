"""Server-side counters around the measure stage: CONFIG RESETSTAT, INFO stats/commandstats."""

from __future__ import annotations

import re
from typing import Any

from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError, parse_info

_CMDSTAT = re.compile(r"calls=(\d+),usec=(\d+)")


def reset_stats(endpoints: list[Endpoint] | tuple[Endpoint, ...]) -> None:
    """Zero INFO counters on every node so the measure stage is counted alone."""
    for endpoint in endpoints:
        with RespClient(endpoint) as client:
            client.call("CONFIG", "RESETSTAT")


def _info(endpoint: Endpoint, section: str) -> dict[str, str]:
    with RespClient(endpoint) as client:
        reply = client.call("INFO", section)
    return parse_info(reply if isinstance(reply, bytes) else b"")


def command_stats(info: dict[str, str]) -> dict[str, tuple[int, int]]:
    """cmdstat_<name> → (calls, usec) from an INFO commandstats mapping (pure)."""
    out = {}
    for field, value in info.items():
        match = _CMDSTAT.search(value)
        if field.startswith("cmdstat_") and match:
            out[field[len("cmdstat_"):]] = (int(match.group(1)), int(match.group(2)))
    return out


def collect(endpoints: list[Endpoint] | tuple[Endpoint, ...]) -> dict[str, Any]:
    """Hits, misses and per-command calls/usec summed over all nodes; ``node_calls``: each
    node's calls per command (a cluster's balance)."""
    hits = misses = 0
    commands: dict[str, list[int]] = {}
    node_calls: list[dict[str, int]] = []
    try:
        for endpoint in endpoints:
            stats = _info(endpoint, "stats")
            hits += int(stats.get("keyspace_hits", 0))
            misses += int(stats.get("keyspace_misses", 0))
            node = command_stats(_info(endpoint, "commandstats"))
            node_calls.append({name: calls for name, (calls, _) in node.items()})
            for name, (calls, usec) in node.items():
                total = commands.setdefault(name, [0, 0])
                total[0] += calls
                total[1] += usec
    except (ConnectionLost, RespError, ValueError):
        return {}
    return {"keyspace_hits": hits, "keyspace_misses": misses, "node_calls": node_calls,
            "commandstats": {name: {"calls": c, "usec": u,
                                    "usec_per_call": round(u / c, 4) if c else None}
                             for name, (c, u) in sorted(commands.items())}}
