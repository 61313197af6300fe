"""A preload's snapshot identity: what changes it and what does not; which plans never use
a snapshot and why; a local RDB given for a URL dataset; which plans never share a server
with the test before or after them, and the run order that puts those that may side by
side (pure)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kvperf.definitions.model import DbConfig, ToolConfig
from kvperf.definitions.plan import Plan, plan_one
from kvperf.definitions.snapshot import (
    data_settings,
    reuse_refusal,
    run_order,
    snapshot_key,
    snapshot_refusal,
)
from kvperf.definitions.topology import BUILTIN
from tests.unit.definitions.test_plan_select import PRELOAD, definition


def plan(topology: str = "oss-standalone", **db: object) -> Plan:
    config = DbConfig(configuration_parameters=(("save", ""),), preload_tool=PRELOAD,
                      check_keyspacelen=1000)
    changed = replace(config, **db)  # type: ignore[arg-type]
    found = plan_one(definition(dbconfig=changed), topology, BUILTIN, None)
    assert isinstance(found, Plan), found
    return found


def test_identity_follows_the_data_and_nothing_else() -> None:
    base = snapshot_key(plan(), "valkey", "8.1.1")
    assert len(base.id) == 16 and base.server == "valkey 8.1"
    # the same preload under other settings that do not shape data, or another patch release
    assert snapshot_key(plan(configuration_parameters=(("save", ""), ("io-threads", "4"),
                                                       ("latency-tracking", "yes"))),
                        "valkey", "8.1.4").id == base.id
    assert snapshot_key(plan(init_commands=(("SET", "x", "1"),)), "valkey", "8.1.1").id \
        == base.id  # init runs after the load, every time
    changed = [
        snapshot_key(plan(configuration_parameters=(("hash-max-listpack-entries", "4"),)),
                     "valkey", "8.1.1"),
        snapshot_key(plan(configuration_parameters=(("maxmemory", "1mb"),)), "valkey",
                     "8.1.1"),
        snapshot_key(plan(preload_tool=ToolConfig("memtier_benchmark", "--ratio 1:0 "
                                                  "--key-pattern P:P -n allkeys "
                                                  "--key-maximum 2000")), "valkey", "8.1.1"),
        snapshot_key(plan(), "valkey", "8.0.1"),
        snapshot_key(plan(), "redis", "8.1.1"),
        snapshot_key(plan(), "valkey", "8.1.1", "memtier_benchmark"),
    ]
    assert len({base.id, *(k.id for k in changed)}) == 7


def test_data_settings_are_the_encoding_and_eviction_ones() -> None:
    config = (("save", ""), ("--zset-max-listpack-entries", "1"), ("list-compress-depth", "2"),
              ("set-max-intset-entries", "9"), ("stream-node-max-bytes", "1k"),
              ("maxmemory-policy", "allkeys-lru"), ("io-threads", "2"),
              ("zset-max-listpack-entries", "3"))
    assert data_settings(config) == (
        ("list-compress-depth", "2"), ("maxmemory-policy", "allkeys-lru"),
        ("set-max-intset-entries", "9"), ("stream-node-max-bytes", "1k"),
        ("zset-max-listpack-entries", "3"))


def test_plans_that_always_preload_say_why() -> None:
    assert snapshot_refusal(plan()) is None
    assert snapshot_refusal(plan(preload_tool=None)) == "no preload"
    assert "cluster" in (snapshot_refusal(plan("oss-cluster-3-primaries")) or "")
    assert "AOF" in (snapshot_refusal(plan(configuration_parameters=(
        ("appendonly", "yes"),))) or "")
    base = plan()  # kvload memtier refuses --expiry-range today; memtier_benchmark has it
    assert base.preload is not None
    expiring = replace(base, preload=replace(base.preload, argv=(
        *base.preload.argv, "--expiry-range=10-20")))
    assert "TTL" in (snapshot_refusal(expiring) or "")


def test_a_local_rdb_is_accepted_for_a_url_dataset(tmp_path: Path) -> None:
    url = definition(dbconfig=DbConfig(dataset="https://example.invalid/sets/dump-1.rdb"))
    refused = plan_one(url, "oss-standalone", BUILTIN, None)
    assert not isinstance(refused, Plan) and "--dataset-rdb dump-1.rdb=PATH" in refused.reason
    rdb = tmp_path / "mine.rdb"
    for name in ("dump-1.rdb", "https://example.invalid/sets/dump-1.rdb"):
        given = plan_one(url, "oss-standalone", BUILTIN, None, rdbs={name: rdb})
        assert isinstance(given, Plan) and given.dataset == rdb
        assert snapshot_refusal(given) is not None  # it loads its own RDB
    other = plan_one(url, "oss-standalone", BUILTIN, None, rdbs={"other.rdb": rdb})
    assert not isinstance(other, Plan)


def named(name: str, topology: str = "oss-standalone", maximum: int = 1000) -> Plan:
    preload = ToolConfig("memtier_benchmark", "--ratio 1:0 --key-pattern P:P -n allkeys "
                         f"--key-maximum {maximum}")
    found = plan_one(definition(name=name, dbconfig=DbConfig(
        configuration_parameters=(("save", ""),), preload_tool=preload)),
        topology, BUILTIN, None)
    assert isinstance(found, Plan), found
    return found


def test_the_run_order_puts_one_server_spec_and_one_preload_side_by_side() -> None:
    plans = (named("a"), named("b", "oss-standalone-02-io-threads"), named("c", maximum=9),
             named("d"), named("e", "oss-standalone-02-io-threads"), named("f", maximum=9),
             named("g"))
    order = [p.name for p in run_order(plans)]
    # by topology, then preload; among equals the given order stays (a stable sort)
    assert order == ["a", "d", "g", "c", "f", "b", "e"]
    assert run_order(tuple(reversed(plans))) != run_order(plans)  # stable, not by name
    assert {p.name for p in run_order(plans)} == {p.name for p in plans}


def test_plans_that_never_share_a_server_say_why() -> None:
    assert reuse_refusal(plan()) is None
    assert reuse_refusal(plan(init_commands=(("SET", "x", "1"),))) is None  # rdb_changes
    assert reuse_refusal(plan(preload_tool=None)) == "no dataset snapshot (no preload)"
    assert "replicas" in (reuse_refusal(plan("oss-standalone-01-replicas")) or "")
    assert "save schedule" in (reuse_refusal(plan(configuration_parameters=(
        ("save", "10 1000"),))) or "")
    assert reuse_refusal(plan(configuration_parameters=(("save", '""'),))) is None
    assert "saves or reloads" in (reuse_refusal(plan(wait_for_bgsave=True)) or "")
    base = plan()
    assert "saves or reloads" in (reuse_refusal(replace(base, save_first=True)) or "")
