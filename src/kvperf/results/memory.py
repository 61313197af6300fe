"""The row's ``memory`` object from a trial's INFO memory readings and MEMORY USAGE sample
(pure): bytes per key = (used_memory with the keys − used_memory of the empty server) / items.

Items are the keys seeded, or for a hash, set or sorted set (one key holding the seeded
members) its members: bytes per key is then bytes per element.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from kvperf.results.row import MemoryReading, MemoryRecord
from kvperf.server.memory import MemoryInfo, per_key


def reading(info: MemoryInfo) -> MemoryReading:
    return MemoryReading(used_memory=info["used_memory"],
                         used_memory_dataset=info["used_memory_dataset"],
                         used_memory_rss=info["used_memory_rss"],
                         mem_fragmentation_ratio=info["mem_fragmentation_ratio"],
                         keys=info["keys"])


def sample_per_item(sizes: Sequence[int], keys: int, items: int) -> float | None:
    """MEMORY USAGE's mean per sampled key, spread over the items those keys hold
    (``keys`` added / ``items`` seeded: 1 for strings); None without a sample."""
    if not sizes or items <= 0 or keys <= 0:
        return None
    return round(statistics.fmean(sizes) * keys / items, 2)


def memory_record(empty: MemoryInfo, seeded: MemoryInfo | None, after: MemoryInfo,
                  items: int, sample: Sequence[int] = ()) -> MemoryRecord:
    """The row's memory object: ``after`` at top level, bytes per key against ``empty``."""
    record = MemoryRecord(used_memory=after["used_memory"],
                          used_memory_dataset=after["used_memory_dataset"],
                          used_memory_rss=after["used_memory_rss"],
                          mem_fragmentation_ratio=after["mem_fragmentation_ratio"],
                          keys=after["keys"])
    record["used_memory_empty"] = empty["used_memory"]
    record["used_memory_rss_empty"] = empty["used_memory_rss"]
    if seeded is not None:
        record["seeded"] = reading(seeded)
    record["items"] = items
    record["bytes_per_key"] = per_key(after["used_memory"], empty["used_memory"], items)
    record["rss_bytes_per_key"] = per_key(after["used_memory_rss"], empty["used_memory_rss"],
                                          items)
    if sample:
        added = after["keys"] - empty["keys"]
        record["sample_bytes_per_key"] = sample_per_item(sample, added, items)
        record["sample_keys"] = len(sample)
    return record
