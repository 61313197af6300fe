"""Server-side counters around the measure stage: CONFIG RESETSTAT, INFO stats/commandstats."""

from __future__ import annotations

import re
from typing import TypedDict

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


def _clock(endpoint: Endpoint) -> str | None:
    """``INFO server`` ``monotonic_clock``: which clock times commands for commandstats.

    Valkey's ``call()`` times a command with the hardware clock when it has one (a tight
    window around the command) and else with ``ustime()`` from before the execution unit
    (wider: ~0.06–0.17 µs more per call on these VMs). Debian's 8.0.1 reports "POSIX
    clock_gettime", 9.1 "X86 TSC @ …" (valkey PR #3103, "Enable HW clock by default"), so
    usec_per_call is only comparable between servers on the same clock."""
    clock = _info(endpoint, "server").get("monotonic_clock")
    return clock.split(" @ ")[0] if clock else None


class CommandStat(TypedDict, total=False):
    """One command's INFO commandstats counters (summed over nodes)."""

    calls: int
    usec: int
    usec_per_call: float | None


class Collected(TypedDict, total=False):
    """The server-side counters of a measure stage (empty when a node could not be read)."""

    keyspace_hits: int
    keyspace_misses: int
    node_calls: list[dict[str, int]]
    monotonic_clock: str | None
    commandstats: dict[str, CommandStat]


def collect(endpoints: list[Endpoint] | tuple[Endpoint, ...]) -> Collected:
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
            "monotonic_clock": _clock(endpoints[0]),
            "commandstats": {name: {"calls": c, "usec": u,
                                    "usec_per_call": round(u / c, 4) if c else None}
                             for name, (c, u) in sorted(commands.items())}}


def bgsave_in_progress(endpoints: list[Endpoint] | tuple[Endpoint, ...]) -> bool:
    """Whether a node is writing an RDB in the background (INFO persistence)."""
    return any(_info(e, "persistence").get("rdb_bgsave_in_progress", "0") != "0"
               for e in endpoints)
