"""The server's memory as INFO memory reports it, its key count (DBSIZE), and a MEMORY USAGE
sample of random keys; bytes per key from them (pure arithmetic apart).

``used_memory`` is what the allocator holds for the server (data + overhead), ``…_dataset``
the part INFO attributes to the data, ``used_memory_rss`` what the OS sees the process hold,
``mem_fragmentation_ratio`` RSS / used_memory. Summed over a cluster's nodes (the ratio:
summed RSS / summed used_memory).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypedDict

from kvperf.core.errors import ServerError
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError, parse_info

MEMORY_FIELDS = ("used_memory", "used_memory_dataset", "used_memory_rss")
SAMPLE_KEYS = 200  # keys MEMORY USAGE samples, cross-checking INFO's bytes per key


class MemoryInfo(TypedDict):
    """One reading of a server's memory (summed over nodes) and its key count."""

    used_memory: int
    used_memory_dataset: int
    used_memory_rss: int
    mem_fragmentation_ratio: float | None
    keys: int


def parse_memory(info: dict[str, str], keys: int) -> MemoryInfo:
    """INFO memory's mapping → MemoryInfo (pure); absent fields count as 0."""
    values = {name: int(info.get(name, "0") or 0) for name in MEMORY_FIELDS}
    return MemoryInfo(used_memory=values["used_memory"],
                      used_memory_dataset=values["used_memory_dataset"],
                      used_memory_rss=values["used_memory_rss"],
                      mem_fragmentation_ratio=_ratio(values["used_memory_rss"],
                                                     values["used_memory"]),
                      keys=keys)


def _ratio(rss: int, used: int) -> float | None:
    return round(rss / used, 3) if used > 0 else None


def merge(readings: Sequence[MemoryInfo]) -> MemoryInfo:
    """Several nodes' readings as one server's (sums; the ratio recomputed)."""
    used = sum(r["used_memory"] for r in readings)
    rss = sum(r["used_memory_rss"] for r in readings)
    return MemoryInfo(used_memory=used,
                      used_memory_dataset=sum(r["used_memory_dataset"] for r in readings),
                      used_memory_rss=rss, mem_fragmentation_ratio=_ratio(rss, used),
                      keys=sum(r["keys"] for r in readings))


def per_key(after: int, empty: int, items: int) -> float | None:
    """Bytes per key: (used memory with the keys − used memory of the empty server) / keys
    (pure); None without keys or when the server shrank (nothing to attribute)."""
    if items <= 0 or after <= empty:
        return None
    return round((after - empty) / items, 2)


def read_memory(endpoints: Sequence[Endpoint]) -> MemoryInfo | None:
    """INFO memory and DBSIZE of every node, merged; None when a node cannot be read."""
    try:
        readings = []
        for endpoint in endpoints:
            with RespClient(endpoint) as client:
                info = client.call("INFO", "memory")
                keys = client.call("DBSIZE")
            text = info if isinstance(info, bytes) else b""
            readings.append(parse_memory(parse_info(text), int(keys) if isinstance(keys, int)
                                         else 0))
    except (ConnectionLost, RespError, ValueError):
        return None
    return merge(readings) if readings else None


def key_count(endpoints: Sequence[Endpoint]) -> int:
    """DBSIZE summed over the nodes (ServerError naming a node whose reply is no count)."""
    total = 0
    for endpoint in endpoints:
        with RespClient(endpoint) as client:
            reply = client.call("DBSIZE")
        if not isinstance(reply, int):
            raise ServerError(f"DBSIZE answered {reply!r} at {endpoint}")
        total += reply
    return total


def sample_usage(endpoints: Sequence[Endpoint], keys: int = SAMPLE_KEYS,
                 seed: int = 0) -> list[int]:
    """MEMORY USAGE (SAMPLES 0: every element counted) of about ``keys`` random keys spread
    over the nodes (RANDOMKEY); an empty list when nothing could be sampled."""
    rng = random.Random(seed)
    sizes: list[int] = []
    per_node = max(1, keys // max(len(endpoints), 1))
    try:
        for endpoint in endpoints:
            with RespClient(endpoint) as client:
                names = client.pipeline([("RANDOMKEY",)] * per_node)
                found = sorted({n for n in names if isinstance(n, bytes)})
                rng.shuffle(found)
                usage = client.pipeline([("MEMORY", "USAGE", n, "SAMPLES", 0)
                                         for n in found])
            sizes += [u for u in usage if isinstance(u, int)]
    except (ConnectionLost, RespError, ValueError):
        return []
    return sizes
