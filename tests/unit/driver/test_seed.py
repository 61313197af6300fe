"""Seeding commands are exactly the keys the tools read."""

from __future__ import annotations

from kvperf.config.commands import CATALOGUE, Seed
from kvperf.driver.seed import seed_commands


def test_strings_use_the_tools_key_names() -> None:
    cmds = list(seed_commands(Seed.STRINGS, 3, b"vv"))
    assert cmds == [("MSET", b"key:000000000000", b"vv", b"key:000000000001", b"vv",
                     b"key:000000000002", b"vv")]
    routed = list(seed_commands(Seed.STRINGS, 2, b"v", single_node=False))
    assert routed == [("SET", b"key:000000000000", b"v"), ("SET", b"key:000000000001", b"v")]


def test_pop_supply_counts_and_unique_members() -> None:
    cmds = list(seed_commands(Seed.SET_POP, 0, b"x", start=10, count=1200))
    members = [m for c in cmds for m in c[2:]]
    assert len(members) == 1200 == len(set(members))
    lists = list(seed_commands(Seed.LIST_POP, 0, b"x", count=501))
    assert sum(len(c) - 2 for c in lists) == 501 and lists[0][:2] == ("RPUSH", "mylist")


def test_every_read_command_has_a_seed_that_writes_its_key() -> None:
    for name in ("GET", "MGET", "HGET", "SISMEMBER", "ZSCORE", "ZRANGE", "XRANGE", "LRANGE_600"):
        spec = CATALOGUE[name]
        assert spec.seed is not Seed.NONE
        key = spec.argv[1].replace("__rand_int__", "000000000000")
        written = {c[1] if isinstance(c[1], str) else c[1].decode()
                   for c in seed_commands(spec.seed, 1, b"x")}
        assert key in written, (name, key, written)
