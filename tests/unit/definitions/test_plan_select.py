"""Plans and refusals per definition × topology, topologies, selection, the dry-run summary."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from kvperf.core.errors import UsageError
from kvperf.definitions.dryrun import reason_group, render_result, summarize
from kvperf.definitions.model import DbConfig, Definition, Issue, RdbChecks, ToolConfig
from kvperf.definitions.plan import (
    UNCAPPED,
    Plan,
    Refusal,
    cap_request_bound,
    plan_all,
    plan_one,
    plans_of,
)
from kvperf.definitions.selection import Selection, check, select
from kvperf.definitions.topology import BUILTIN, parse_setups, server_args
from tests.fixtures.corpus import topologies_file

CLIENT = ToolConfig("memtier_benchmark", "--command 'GET __key__' --test-time 60 -c 2 -t 1")
PRELOAD = ToolConfig("memtier_benchmark", "--ratio 1:0 --key-pattern P:P -n allkeys "
                                          "--key-maximum 1000")


def definition(**changes: object) -> Definition:
    base = Definition(
        name="memtier_benchmark-get", source=Path("/defs/get.yml"), priority=10,
        tested_groups=("string",), tested_commands=("get",),
        topologies=("oss-standalone", "oss-standalone-01-replicas-rdb"),
        dbconfig=DbConfig(configuration_parameters=(("save", ""), ("appendonly", "no")),
                          preload_tool=PRELOAD, check_keyspacelen=1000,
                          init_commands=(("SET", "x", "1"),), preload_before_replica=True),
        clients=(CLIENT,))
    return replace(base, **changes)  # type: ignore[arg-type]


def test_plan_contents() -> None:
    standalone, rdb = plan_all((definition(),), BUILTIN, 2)
    assert isinstance(standalone, Plan) and isinstance(rdb, Plan)
    # the definition's parameters first, then the topology's (save accumulates after "")
    assert rdb.server_config == (("save", ""), ("appendonly", "no"), ("save", "10 1000"))
    assert (rdb.topology.replicas, rdb.topology.persistence) == (1, "rdb")
    assert rdb.replica_after_preload and not standalone.replica_after_preload
    assert standalone.preload is not None and standalone.preload.requests == "allkeys"
    (client,) = standalone.clients
    assert (client.test_time, client.test_time_overridden) == (2, True)
    assert standalone.keyspacelen == 1000 and standalone.init_commands == (("SET", "x", "1"),)
    assert any("preload before the replica" in note for note in rdb.notes)


def test_cap_request_bound_gives_request_bound_memtier_clients_the_time_limit() -> None:
    """--cap-request-bound: a -n memtier client gets kvload's --time-limit (its argv, so the
    series' identity, changes) and the plan says so; a timed client, the preload and
    redis-benchmark (no time limit) stay as they were, the last one still noted."""
    counted = ToolConfig("memtier_benchmark", "-n 1000000 -c 5")
    bench = ToolConfig("redis-benchmark", "", (("requests", 100000), ("command", "GET a")))
    planned = plan_all((definition(clients=(counted,)), definition(clients=(CLIENT,)),
                        definition(clients=(bench,))), BUILTIN, 2, ("oss-standalone",))
    before = plans_of(planned)
    capped, timed, benchmark = plans_of(cap_request_bound(planned, 2))
    (client,) = capped.clients
    assert client.argv[-1] == "--time-limit=2" and client.time_limit == 2
    assert (client.test_time, client.requests) == (None, "1000000")
    assert UNCAPPED in before[0].notes and UNCAPPED not in capped.notes
    assert any("capped at 2 s (--cap-request-bound)" in note for note in capped.notes)
    assert capped.preload == before[0].preload
    assert timed == before[1]
    assert benchmark.clients == before[2].clients and UNCAPPED in benchmark.notes


@pytest.mark.parametrize(("changes", "topology", "says"), [
    ({"issues": (Issue("dbconfig.foo", "unknown key"),)}, "oss-standalone",
     "dbconfig.foo: unknown key"),
    ({"clients": (ToolConfig("sidekiq-bench"),)}, "oss-standalone",
     "client tool 'sidekiq-bench' is not supported"),
    ({"clients": (ToolConfig("sidekiq-bench"),)}, "oss-standalone-with-redisearch",
     "client tool 'sidekiq-bench' is not supported"),  # the tool before the topology
    ({"clients": (ToolConfig("pubsub-sub-bench"),)}, "oss-standalone",
     "pubsub-sub-bench is mapped beside one memtier_benchmark publisher"),
    ({"clients": (ToolConfig("memtier_benchmark", '--command "PUBLISH __key__ __data__"'),
                  ToolConfig("pubsub-sub-bench"))}, "oss-cluster-3-primaries",
     "pub/sub on a cluster topology is not mapped"),
    ({"clients": (ToolConfig("bcast-listener"),)}, "oss-standalone",
     "'bcast-listener' (CLIENT TRACKING BCAST invalidation listeners) is not mapped"),
    ({"dbconfig": DbConfig(dataset="https://example.invalid/dump.rdb")}, "oss-standalone",
     "is a URL (nothing downloads at run time): download it and give it with --dataset-rdb"),
    ({"dbconfig": DbConfig(dataset="dump.rdb")}, "oss-standalone",
     "dataset /defs/dump.rdb not found"),
    ({"dbconfig": DbConfig(preload_tool=ToolConfig("redis-benchmark"))}, "oss-standalone",
     "preload tool 'redis-benchmark'"),
    ({"dbconfig": DbConfig(module_configuration_parameters=("search",))}, "oss-standalone",
     "needs module(s) search"),
    ({"required_capabilities": ("gpu",)}, "oss-standalone", "capability 'gpu'"),
    ({}, "oss-standalone-with-redisearch", "--loadmodule /mnt/redis/redisearch.so"),
    ({}, "dragonfly-04-proactor-threads", "a Dragonfly option"),
    ({}, "my-topology", "topology 'my-topology' is not in the topologies table"),
])
def test_refusals_name_the_thing(changes: dict[str, object], topology: str,
                                 says: str) -> None:
    result = plan_one(definition(**changes), topology, BUILTIN, None,
                      file_exists=lambda _: False)
    assert isinstance(result, Refusal) and says in result.reason, result


def test_cluster_plans_with_every_key_pattern() -> None:
    """memtier's cluster client routes each key to its slot's primary whatever the pattern:
    the standard P:P allkeys preload plans on a cluster (kvload memtier does the same)."""
    for pattern in ("R:R", "P:P", "S:S"):
        d = definition(dbconfig=DbConfig(preload_tool=ToolConfig(
            "memtier_benchmark", f"--ratio 1:0 --key-pattern {pattern} -n allkeys")))
        plan = plan_one(d, "oss-cluster-3-primaries", BUILTIN, None)
        assert isinstance(plan, Plan) and plan.topology.cluster, (pattern, plan)
        assert plan.topology.primaries == 3


def test_builtin_table_is_the_corpus_file(corpus: Path) -> None:
    from_file = parse_setups(yaml.safe_load(topologies_file(corpus).read_text()), "corpus")
    assert from_file == BUILTIN


def test_topology_facts() -> None:
    assert server_args("--save 10 1000 --appendonly yes") == (("save", "10 1000"),
                                                            ("appendonly", "yes"))
    assert BUILTIN["oss-standalone-08-io-threads"].io_threads == 8
    assert BUILTIN["oss-standalone-01-replicas-aof-everysec"].persistence == "aof-everysec"
    assert BUILTIN["oss-cluster-3-primaries"].describe() == "cluster of 3 primaries"
    with pytest.raises(ValueError, match="does not follow"):
        server_args("4 --io-threads")


DEFS = (
    definition(),
    definition(name="memtier_benchmark-hset", source=Path("/defs/hset.yml"), priority=50,
               tested_groups=("hash",), tested_commands=("hset",),
               topologies=("oss-cluster-3-primaries",)),
    definition(name="other", source=Path("/defs/memtier_benchmark-x.yml"), priority=None,
               tested_groups=("hash", "string"), tested_commands=("HGET",)),
)


@pytest.mark.parametrize(("selection", "names"), [
    (Selection(), ["memtier_benchmark-get", "memtier_benchmark-hset", "other"]),
    (Selection(tests_regexp="hset$"), ["memtier_benchmark-hset"]),
    (Selection(tests_regexp="^memtier"), ["memtier_benchmark-get", "memtier_benchmark-hset",
                                          "other"]),  # other's file name matches
    (Selection(priority_lower=20), ["memtier_benchmark-hset", "other"]),  # no priority: kept
    (Selection(priority_upper=10), ["memtier_benchmark-get", "other"]),
    (Selection(tested_groups=("HASH",)), ["memtier_benchmark-hset", "other"]),
    (Selection(tested_commands=("hget", "get")), ["memtier_benchmark-get", "other"]),
    (Selection(topologies=("oss-cluster-3-primaries",)), ["memtier_benchmark-hset"]),
])
def test_select(selection: Selection, names: list[str]) -> None:
    check(selection, DEFS, set(BUILTIN))
    assert [d.name for d in select(DEFS, selection)] == names


@pytest.mark.parametrize(("selection", "says"), [
    (Selection(tests_regexp="("), "--tests-regexp"),
    (Selection(priority_lower=5, priority_upper=1), "is above"),
    (Selection(tested_groups=("strings",)), "--tested-groups 'strings': no loaded"),
    (Selection(tested_commands=("gett",)), "known: HGET, get, hset"),
    (Selection(topologies=("oss-standalone-3-io-threads",)), "not a known topology"),
])
def test_selection_mistakes(selection: Selection, says: str) -> None:
    with pytest.raises(UsageError, match=says.replace("(", r"\(")):
        check(selection, DEFS, set(BUILTIN))


def test_only_selected_topologies_are_planned() -> None:
    results = plan_all(DEFS[:1], BUILTIN, None, ("oss-standalone",))
    assert [r.topology.name for r in results if isinstance(r, Plan)] == ["oss-standalone"]


def test_summary_groups_reasons() -> None:
    url = definition(dbconfig=DbConfig(dataset="https://a.invalid/x.rdb"))
    url2 = definition(source=Path("/defs/b.yml"),
                      dbconfig=DbConfig(dataset="https://b.invalid/y.rdb"))
    module = definition(source=Path("/defs/c.yml"),
                        topologies=("oss-standalone", "oss-standalone-with-redisearch"))
    results = plan_all((url, url2, module, DEFS[2]), BUILTIN, None)
    summary = summarize(results)
    assert (summary.files, summary.planned, summary.partly, summary.refused) == (4, 1, 1, 2)
    assert summary.reasons[0][1] == 4 and summary.reasons[0][0].startswith(
        "dataset <URL> is a URL (nothing downloads at run time): download it and give it "
        "with --dataset-rdb")
    assert reason_group("client: stray argument 'x y'") == (
        "client: stray argument (memtier takes options only)")
    assert "refused" in str(render_result(results[0]))
    assert "kvload memtier" in str(render_result(results[-1]))


def _reload_definition(command: str, operation: str | None = None,
                       init: tuple[tuple[str, ...], ...] = ()) -> Definition:
    checks = RdbChecks(operation, 2000) if operation else None
    return definition(topologies=("oss-standalone",), clients=(
        ToolConfig("memtier_benchmark", f'--command "{command}" -n 1 -c 1 -t 1'),),
        dbconfig=DbConfig(rdb_checks=checks, init_commands=init))


@pytest.mark.parametrize(("command", "operation", "init", "steps"), [
    ("DEBUG RELOAD NOSAVE NOFLUSH", "load", (), (True, True)),  # the corpus' rdb-load tests
    ("debug reload nosave", None, (), (True, False)),
    ("DEBUG RELOAD NOSAVE", None, (("SAVE",),), (False, False)),  # init saves already
    ("DEBUG RELOAD", None, (), (False, False)),  # it saves before reloading itself
    ("DEBUG RELOAD MERGE NOFLUSH NOSAVE", None, (), (True, False)),  # MERGE allows dup keys
    ("SAVE", "save", (), (False, False)),  # the rdb-save tests
    ("GET __key__", None, (), (False, False)),
])
def test_what_a_reload_needs_on_disk_first(command: str, operation: str | None,
                                           init: tuple[tuple[str, ...], ...],
                                           steps: tuple[bool, bool]) -> None:
    (plan,) = plan_all((_reload_definition(command, operation, init),), BUILTIN, None)
    assert isinstance(plan, Plan)
    assert (plan.save_first, plan.flush_first) == steps
    assert any(n.startswith("SAVE after preload and init") for n in plan.notes) == steps[0]
    assert any(n.startswith("FLUSHALL SYNC before measuring") for n in plan.notes) == steps[1]
    if operation == "load":
        assert "rdb_checks (load): keyspacelen 2000 checked after measuring (DBSIZE); sample " \
               "keys and value sizes not verified" in plan.notes
