"""Bytes per key from INFO memory readings, hand-computed."""

from __future__ import annotations

import pytest

from kvperf.config.commands import Seed, resolve_command, stored_as
from kvperf.results.memory import memory_record, sample_per_item
from kvperf.results.row import FORMAT_VERSION, upgrade
from kvperf.server.memory import MemoryInfo, merge, parse_memory, per_key


def info(used: int, rss: int, keys: int, dataset: int = 0) -> MemoryInfo:
    return MemoryInfo(used_memory=used, used_memory_dataset=dataset, used_memory_rss=rss,
                      mem_fragmentation_ratio=round(rss / used, 3), keys=keys)


def test_bytes_per_key_is_the_growth_over_the_empty_server_per_key() -> None:
    assert per_key(19_720_880, 989_864, 100_000) == pytest.approx(187.31)
    assert per_key(1_000, 1_000, 10) is None  # nothing grew
    assert per_key(2_000, 1_000, 0) is None  # no keys


def test_the_record_keeps_every_reading_and_both_per_key_figures() -> None:
    empty, seeded = info(1_000_000, 10_000_000, 0), info(20_000_000, 30_000_000, 100_000)
    after = info(21_000_000, 32_000_000, 100_000, dataset=15_000_000)
    record = memory_record(empty, seeded, after, 100_000, [180, 190, 200])
    assert record["bytes_per_key"] == 200.0  # (21 M − 1 M) / 100 k
    assert record["rss_bytes_per_key"] == 220.0  # (32 M − 10 M) / 100 k
    assert record["sample_bytes_per_key"] == 190.0 and record["sample_keys"] == 3
    assert record["used_memory_empty"] == 1_000_000 and record["seeded"]["keys"] == 100_000
    assert record["used_memory_dataset"] == 15_000_000
    assert record["mem_fragmentation_ratio"] == pytest.approx(32 / 21, abs=1e-3)


def test_a_collections_sample_is_spread_over_its_members() -> None:
    # one hash holding 1000 fields, MEMORY USAGE 80,000 B: 80 B per field
    assert sample_per_item([80_000], keys=1, items=1000) == 80.0
    assert sample_per_item([], keys=1, items=1000) is None


def test_info_memory_parsed_and_nodes_merged() -> None:
    one = parse_memory({"used_memory": "1000", "used_memory_rss": "3000",
                        "used_memory_dataset": "400"}, keys=5)
    assert one == {"used_memory": 1000, "used_memory_dataset": 400, "used_memory_rss": 3000,
                   "mem_fragmentation_ratio": 3.0, "keys": 5}
    both = merge([one, parse_memory({"used_memory": "3000", "used_memory_rss": "3000"}, 7)])
    assert both["used_memory"] == 4000 and both["keys"] == 12
    assert both["mem_fragmentation_ratio"] == 1.5  # summed RSS / summed used


def test_format_5_rows_upgrade_with_no_memory() -> None:
    row = upgrade({"kvperf_format": 5, "command": "SET"}, "old.json")
    assert row["kvperf_format"] == FORMAT_VERSION == 10 and row["memory"] is None


def test_memory_mode_fills_the_kind_of_data_each_command_works_on() -> None:
    kinds = {name: stored_as(name, resolve_command(name).seed)
             for name in ("SET", "GET", "INCR", "HSET", "HGET", "LPUSH", "LPOP", "LRANGE_100",
                          "SADD", "SPOP", "ZADD", "ZSCORE", "XADD")}
    assert kinds == {"SET": Seed.STRINGS, "GET": Seed.STRINGS, "INCR": Seed.STRINGS,
                     "HSET": Seed.HASH_FIELDS, "HGET": Seed.HASH_FIELDS,
                     "LPUSH": Seed.LIST_POP, "LPOP": Seed.LIST_POP,
                     "LRANGE_100": Seed.LIST_POP, "SADD": Seed.SET_MEMBERS,
                     "SPOP": Seed.SET_MEMBERS, "ZADD": Seed.ZSET_MEMBERS,
                     "ZSCORE": Seed.ZSET_MEMBERS, "XADD": Seed.STRINGS}
