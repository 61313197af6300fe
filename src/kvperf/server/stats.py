"""Server-side counters around the measure stage: CONFIG RESETSTAT, INFO stats/commandstats
(calls, usec, and the error replies: ``failed_calls``, ``rejected_calls``) and INFO errorstats
(error replies by their prefix: ``ERR``, ``WRONGTYPE`` …)."""

from __future__ import annotations

import re
from typing import TypedDict

from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError, parse_info

_CMDSTAT = re.compile(r"calls=(\d+),usec=(\d+)")
_FAILED = re.compile(r"\bfailed_calls=(\d+)")
_REJECTED = re.compile(r"\brejected_calls=(\d+)")
_COUNT = re.compile(r"\bcount=(\d+)")


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


def command_errors(info: dict[str, str]) -> dict[str, tuple[int, int]]:
    """cmdstat_<name> → (failed_calls, rejected_calls) from INFO commandstats (pure; a
    server older than Redis 6.2 has neither: zeros). Failed calls ran and answered an error
    (they count in ``calls``); rejected ones were refused before running (they do not)."""
    out = {}
    for field, value in info.items():
        if field.startswith("cmdstat_"):
            failed, rejected = _FAILED.search(value), _REJECTED.search(value)
            out[field[len("cmdstat_"):]] = (int(failed.group(1)) if failed else 0,
                                            int(rejected.group(1)) if rejected else 0)
    return out


def error_stats(info: dict[str, str]) -> dict[str, int]:
    """errorstat_<PREFIX> → count from INFO errorstats (pure)."""
    out = {}
    for field, value in info.items():
        match = _COUNT.search(value)
        if field.startswith("errorstat_") and match:
            out[field[len("errorstat_"):]] = int(match.group(1))
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
    failed_calls: int  # ran and answered an error (counted in calls)
    rejected_calls: int  # refused before running (not in calls)


class Collected(TypedDict, total=False):
    """The server-side counters of a measure stage (empty when a node could not be read)."""

    keyspace_hits: int
    keyspace_misses: int
    node_calls: list[dict[str, int]]
    monotonic_clock: str | None
    commandstats: dict[str, CommandStat]
    errorstats: dict[str, int]  # error replies by prefix (ERR, WRONGTYPE …), summed
    # INFO stats total_commands_processed and total_reads_processed, summed (every
    # command, a client's set-up included; reads: of client connections, a close among
    # them): calls per read tells a pipeline on the wire from N round trips
    # (docs/CLIENTS.md). Absent when a node did not report them.
    commands_processed: int
    reads_processed: int


def collect(endpoints: list[Endpoint] | tuple[Endpoint, ...]) -> Collected:
    """Hits, misses, per-command calls/usec/errors and error replies by prefix, summed over
    all nodes; ``node_calls``: each node's calls per command (a cluster's balance)."""
    hits = misses = 0
    processed: dict[str, int] = {}
    unreported: set[str] = set()
    commands: dict[str, list[int]] = {}  # calls, usec, failed, rejected
    errors: dict[str, int] = {}
    node_calls: list[dict[str, int]] = []
    try:
        for endpoint in endpoints:
            stats = _info(endpoint, "stats")
            hits += int(stats.get("keyspace_hits", 0))
            misses += int(stats.get("keyspace_misses", 0))
            for name in ("commands", "reads"):
                counter = stats.get(f"total_{name}_processed")
                if counter is None:
                    unreported.add(name)
                processed[name] = processed.get(name, 0) + int(counter or 0)
            info = _info(endpoint, "commandstats")
            node = command_stats(info)
            node_calls.append({name: calls for name, (calls, _) in node.items()})
            failures = command_errors(info)
            for name, (calls, usec) in node.items():
                total = commands.setdefault(name, [0, 0, 0, 0])
                for i, value in enumerate((calls, usec, *failures.get(name, (0, 0)))):
                    total[i] += value
            for prefix, count in error_stats(_info(endpoint, "errorstats")).items():
                errors[prefix] = errors.get(prefix, 0) + count
    except (ConnectionLost, RespError, ValueError):
        return {}
    found: Collected = {
        "keyspace_hits": hits, "keyspace_misses": misses, "node_calls": node_calls,
        "monotonic_clock": _clock(endpoints[0]), "errorstats": errors,
        "commandstats": {name: {"calls": c, "usec": u,
                                "usec_per_call": round(u / c, 4) if c else None,
                                "failed_calls": f, "rejected_calls": r}
                         for name, (c, u, f, r) in sorted(commands.items())}}
    if processed and not unreported:
        found["commands_processed"] = processed["commands"]
        found["reads_processed"] = processed["reads"]
    return found


def bgsave_in_progress(endpoints: list[Endpoint] | tuple[Endpoint, ...]) -> bool:
    """Whether a node is writing an RDB in the background (INFO persistence)."""
    return any(_info(e, "persistence").get("rdb_bgsave_in_progress", "0") != "0"
               for e in endpoints)


def with_replica_reads(primaries: Collected, replicas: Collected, reads: set[str]
                       ) -> Collected:
    """The primaries' counters plus what the replicas served of the commands in ``reads``
    (pure): their calls and errors, hits and misses (a replica's other calls are the
    writes it replayed from its primary, counted there already); each replica's calls a
    ``node_calls`` entry after the primaries'. Empty when either could not be read."""
    if not primaries or not replicas:
        return {}
    merged: Collected = {**primaries}
    merged["keyspace_hits"] = primaries.get("keyspace_hits", 0) + replicas.get("keyspace_hits", 0)
    merged["keyspace_misses"] = (primaries.get("keyspace_misses", 0)
                                 + replicas.get("keyspace_misses", 0))
    stats = {name: CommandStat(**stat) for name, stat in primaries.get("commandstats", {}).items()}
    for name, stat in replicas.get("commandstats", {}).items():
        if name.split("|")[0] not in reads:
            continue
        total = stats.get(name, CommandStat())
        calls = total.get("calls", 0) + stat.get("calls", 0)
        usec = total.get("usec", 0) + stat.get("usec", 0)
        stats[name] = CommandStat(
            calls=calls, usec=usec, usec_per_call=round(usec / calls, 4) if calls else None,
            failed_calls=total.get("failed_calls", 0) + stat.get("failed_calls", 0),
            rejected_calls=total.get("rejected_calls", 0) + stat.get("rejected_calls", 0))
    merged["commandstats"] = dict(sorted(stats.items()))
    merged["node_calls"] = [*primaries.get("node_calls", []),
                            *({n: c for n, c in node.items() if n.split("|")[0] in reads}
                              for node in replicas.get("node_calls", []))]
    return merged


def changes_since_save(endpoint: Endpoint) -> int:
    """The node's writes since it last saved or loaded its RDB (INFO persistence's
    ``rdb_changes_since_last_save``: 0 on a server just started from an RDB or just
    saved; any write makes it more). -1 when the server does not say."""
    return int(_info(endpoint, "persistence").get("rdb_changes_since_last_save", "-1"))
