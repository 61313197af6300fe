"""Replicas on real valkey-server 8.0.1: a 3-primary cluster with a replica each (and a
standalone primary with one) formed by kvperf's ServerGroup and in sync; kvload's
``--read-from-replicas no|yes|all`` sending GETs where it says (per-node INFO
commandstats) and SETs to the primaries; ``kvperf run`` with ``replicas`` and
``read_from_replicas`` recording where reads went and the replication lag; bad values
refused with exit 2. One cluster and one standalone group serve the whole file."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kvperf.plan.trial import ServerSetup
from kvperf.server.binary import inspect
from kvperf.server.instance import ServerGroup
from kvperf.server.resp import Endpoint, RespClient, parse_info
from tests.helpers import ROOT, read_metrics, require_binary, run_kvperf, run_main, write_config

pytestmark = pytest.mark.integration

REQUESTS = 20_000
KEYS = 1_000


def _group(tmp: Path, cluster: bool) -> ServerGroup:
    setup = ServerSetup(cluster, False, None, 3, None, (), (), (), replicas=1)
    binary = inspect(Path(require_binary("valkey-server")), "--server-bin")
    return ServerGroup(binary, setup, tmp / ("cluster" if cluster else "standalone"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerGroup]:
    group = _group(tmp_path_factory.mktemp("replicas"), cluster=True)
    with group:
        yield group
    assert not any(n.process.alive() for n in (*group.nodes, *group.replicas))


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerGroup]:
    group = _group(tmp_path_factory.mktemp("replicas"), cluster=False)
    with group:
        yield group
    assert not any(n.process.alive() for n in (*group.nodes, *group.replicas))


def _info(endpoint: Endpoint, section: str) -> dict[str, str]:
    with RespClient(endpoint) as client:
        reply = client.call("INFO", section)
    assert isinstance(reply, bytes)
    return parse_info(reply)


def _calls(endpoint: Endpoint, command: str) -> int:
    stat = _info(endpoint, "commandstats").get(f"cmdstat_{command}", "calls=0")
    return int(stat.split(",")[0].split("=")[1])


def _kvload(group: ServerGroup, *args: str) -> subprocess.CompletedProcess[str]:
    """kvload at the group's first primary, after zeroing every node's counters."""
    for endpoint in (*group.endpoints, *group.replica_endpoints):
        with RespClient(endpoint) as client:
            client.call("CONFIG", "RESETSTAT")
    first = group.endpoints[0]
    return subprocess.run([require_binary("kvload"), "-h", first.host, "-p", str(first.port),
                           "-c", "6", "-r", str(KEYS), "-q", *args],
                          capture_output=True, text=True, timeout=120)


def _gets(group: ServerGroup, *args: str) -> tuple[list[int], list[int]]:
    """GETs served by each primary and each replica for one kvload run."""
    done = _kvload(group, "-t", "get", "-n", str(REQUESTS), *args)
    assert done.returncode == 0, done.stderr
    return ([_calls(e, "get") for e in group.endpoints],
            [_calls(e, "get") for e in group.replica_endpoints])


@pytest.mark.usefixtures("no_strays")
def test_cluster_with_replicas_forms_and_is_in_sync(cluster: ServerGroup) -> None:
    assert len(cluster.endpoints) == 3 and len(cluster.replica_endpoints) == 3
    for primary in cluster.endpoints:
        info = _info(primary, "replication")
        assert info["role"] == "master" and info["connected_slaves"] == "1", info
        assert "state=online" in info["slave0"], info
    for replica in cluster.replica_endpoints:
        info = _info(replica, "replication")
        assert info["role"] == "slave" and info["master_link_status"] == "up", info
    with RespClient(cluster.endpoints[0]) as client:
        nodes = client.call("CLUSTER", "NODES")
    assert isinstance(nodes, bytes)
    flags = [line.split()[2] for line in nodes.decode().splitlines()]
    assert sum("master" in f for f in flags) == 3 and sum("slave" in f for f in flags) == 3


@pytest.mark.usefixtures("no_strays")
def test_cluster_reads_go_where_read_from_replicas_says(cluster: ServerGroup) -> None:
    seeded = _kvload(cluster, "--cluster", "-t", "set", "-n", str(REQUESTS),
                     "--read-from-replicas", "yes")
    assert seeded.returncode == 0, seeded.stderr
    sets = [_calls(e, "set") for e in cluster.endpoints]
    assert sum(sets) == REQUESTS, sets  # writes go to the primaries whatever the mode
    primaries, replicas = _gets(cluster, "--cluster", "--read-from-replicas", "yes")
    assert sum(primaries) == 0 and sum(replicas) == REQUESTS, (primaries, replicas)
    assert min(replicas) > 0.15 * REQUESTS, replicas  # every shard's replica served some
    primaries, replicas = _gets(cluster, "--cluster", "--read-from-replicas", "no")
    assert sum(primaries) == REQUESTS and sum(replicas) == 0, (primaries, replicas)
    primaries, replicas = _gets(cluster, "--cluster", "--rfr", "all")
    assert sum(primaries) + sum(replicas) == REQUESTS, (primaries, replicas)
    assert min(sum(primaries), sum(replicas)) > 0.25 * REQUESTS, (primaries, replicas)


@pytest.mark.usefixtures("no_strays")
def test_standalone_reads_from_its_replica(standalone: ServerGroup) -> None:
    seeded = _kvload(standalone, "-t", "set", "-n", str(REQUESTS))
    assert seeded.returncode == 0, seeded.stderr
    primaries, replicas = _gets(standalone, "--read-from-replicas", "yes")
    assert primaries == [0] and replicas == [REQUESTS], (primaries, replicas)
    primaries, replicas = _gets(standalone, "--read-from-replicas", "all")
    assert sum(primaries) + sum(replicas) == REQUESTS and min(*primaries, *replicas) > 0


@pytest.mark.usefixtures("no_strays")
def test_kvload_refuses_a_bad_mode(standalone: ServerGroup) -> None:
    done = _kvload(standalone, "-t", "get", "--read-from-replicas", "maybe")
    assert done.returncode == 2 and "no, yes or all" in done.stderr, done.stderr


def _memtier(group: ServerGroup, *args: str) -> tuple[dict[str, list[int]], str]:
    """kvload's memtier front end (2 clients × 1,000 requests of --ratio 1:1, so 1,000
    SETs and 1,000 GETs): each command's calls per primary and per replica."""
    done = _kvload_argv(group, "memtier", "-s", group.endpoints[0].host, "-p",
                        str(group.endpoints[0].port), "-c", "2", "-t", "1", "-n", "1000",
                        "--ratio", "1:1", "--key-maximum", str(KEYS), "--hide-histogram",
                        *args)
    calls = {f"{cmd} {where}": [_calls(e, cmd) for e in endpoints]
             for cmd in ("get", "set")
             for where, endpoints in (("primaries", group.endpoints),
                                      ("replicas", group.replica_endpoints))}
    return calls, done.stderr if done.returncode == 0 else f"exit {done.returncode}: {done.stderr}"


def _kvload_argv(group: ServerGroup, *args: str) -> subprocess.CompletedProcess[str]:
    for endpoint in (*group.endpoints, *group.replica_endpoints):
        with RespClient(endpoint) as client:
            client.call("CONFIG", "RESETSTAT")
    return subprocess.run([require_binary("kvload"), *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.usefixtures("no_strays")
def test_memtier_read_preference_in_a_cluster(cluster: ServerGroup) -> None:
    calls, err = _memtier(cluster, "--cluster-mode", "--read-preference", "secondary")
    assert not err.startswith("exit"), err
    assert sum(calls["set primaries"]) == 1000 and sum(calls["get primaries"]) == 0, calls
    assert sum(calls["get replicas"]) == 1000 and min(calls["get replicas"]) > 0, calls
    calls, err = _memtier(cluster, "--cluster-mode")  # primary, the default
    assert sum(calls["get primaries"]) == 1000 and sum(calls["get replicas"]) == 0, calls


@pytest.mark.usefixtures("no_strays")
def test_memtier_read_server_standalone(standalone: ServerGroup) -> None:
    replica = standalone.replica_endpoints[0]
    calls, err = _memtier(standalone, "--read-preference", "secondaryPreferred",
                          "--read-server", f"{replica.host}:{replica.port}")
    assert not err.startswith("exit"), err
    assert calls["set primaries"] == [1000] and calls["get primaries"] == [0], calls
    assert calls["get replicas"] == [1000], calls
    refused = _kvload_argv(standalone, "memtier", "--read-preference", "nearest")
    assert refused.returncode == 2 and "latency-aware" in refused.stderr, refused.stderr


def _run(tmp_path: Path, obj: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
    write_config(tmp_path, [obj])
    return run_kvperf("run", "--config", "config.json", "--server-bin",
                      require_binary("valkey-server"), "--tool", "kvload", "--label", "t",
                      *extra, cwd=tmp_path)


@pytest.mark.usefixtures("no_strays")
def test_documented_replica_reads_config(tmp_path: Path) -> None:
    """docs/guide/replicas.md "Replicas": configs/replica-reads.json's GETs on a 3-primary
    cluster with a replica each, read from the primaries (no), the replicas (yes) and both
    (all)."""
    done = run_kvperf("run", "--config", ROOT / "configs" / "replica-reads.json", "--quick",
                      "--server-bin", require_binary("valkey-server"), "--label", "t",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["checks"]["read_from_replicas"]: r for r in read_metrics(tmp_path / "results")}
    assert sorted(rows) == ["all", "no", "yes"] and {r["status"] for r in rows.values()} == {"ok"}
    assert all(r["config_set"] == {"replicas": "1", "read_from_replicas": mode}
               for mode, r in rows.items())  # a series each, named in the table
    assert all(f"GET rfr={mode}" in done.stdout for mode in rows), done.stdout
    nodes = {mode: row["server"]["calls_per_node"] for mode, row in rows.items()}
    assert all(len(n) == 6 for n in nodes.values()), nodes  # 3 primaries, then 3 replicas
    assert min(nodes["no"][:3]) > 0 and sum(nodes["no"][3:]) == 0, nodes
    assert sum(nodes["yes"][:3]) == 0 and min(nodes["yes"][3:]) > 0, nodes
    assert sum(nodes["all"][:3]) > 0.25 * sum(nodes["all"]) < sum(nodes["all"][3:]), nodes
    for row in rows.values():
        assert row["checks"]["executed_ratio"] >= 0.98 and row["checks"]["hit_ratio"] == 1.0
        assert row["checks"]["replicas_in_sync"] == 3 and "replica_sync" in row["stage_seconds"]
        lag = row["server"]["replication_lag"]
        # reads replicate nothing (at most a replicated PING caught in flight)
        assert lag["samples"] >= 5 and lag["max_bytes"] < 1024, lag


@pytest.mark.usefixtures("no_strays")
def test_writes_show_replication_lag(tmp_path: Path) -> None:
    """Pipelined SETs outrun a replica on two cores: the lag sampled through the measure
    stage is above zero (where a GET-only trial's, above, is zero). One round of 1 s, no
    warmup (not --quick: its 0.5 s stage holds only 4 or 5 of the 100 ms samples)."""
    done = _run(tmp_path, {"duration": 1, "warmup": 0, "commands": ["SET"], "replicas": 1,
                           "data_sizes": 256, "pipelines": 16})
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = read_metrics(tmp_path / "results")
    lag = row["server"]["replication_lag"]
    assert row["status"] == "ok" and lag["samples"] >= 5, (row["error"], lag)
    assert 0 < lag["mean_bytes"] <= lag["max_bytes"], lag
    assert row["config_set"] == {"replicas": "1", "read_from_replicas": "no"}


@pytest.mark.parametrize(("obj", "flags", "message"), [
    ({"read_from_replicas": "maybe", "replicas": 1}, (), "is not one of no, yes, all"),
    ({"read_from_replicas": "yes"}, (), "needs 'replicas' of at least 1"),
    ({"read_from_replicas": "all", "replicas": 1, "ratio": "1:10"}, (),
     "mixes reads and writes"),
    ({"replicas": -1}, (), "'replicas' must be at least 0"),
    ({"replicas": 1}, ("--mode", "client", "--port", "1"), "need servers kvperf starts"),
    ({"replicas": 1, "read_from_replicas": "yes"}, ("--tool", "valkey-benchmark"),
     "'read_from_replicas' is not supported by valkey-benchmark"),
])
def test_run_refuses_bad_replica_settings(tmp_path: Path, obj: dict[str, Any],
                                          flags: tuple[str, ...], message: str) -> None:
    config = write_config(tmp_path, [{"requests": 1000, "commands": ["GET"], **obj}])
    done = run_main("run", "--config", config, "--results-dir", tmp_path / "results",
                    "--server-bin", require_binary("valkey-server"),
                    *(flags if "--tool" in flags else ("--tool", "kvload", *flags)))
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert not (tmp_path / "results").exists()


SETUPS = """\
version: 0.4
spec:
  setups:
  - name: oss-cluster-3-primaries-with-replicas
    type: oss-cluster
    redis_topology:
      primaries: 3
      replicas: 1
    resources:
      requests:
        cpus: "2"
        memory: 1g
"""
DEFINITION = """\
version: 0.4
name: memtier_benchmark-10Kkeys-string-get-cluster-with-replicas
dbconfig:
  configuration-parameters:
    save: '""'
  check:
    keyspacelen: 10000
  preload_tool:
    tool: memtier_benchmark
    arguments: '--data-size 10 --ratio 1:0 --key-pattern P:P -c 5 -t 2 --hide-histogram
      --key-minimum 1 --key-maximum 10000 -n allkeys'
tested-commands:
- get
redis-topologies:
- oss-cluster-3-primaries-with-replicas
clientconfig:
  tool: memtier_benchmark
  arguments: '--data-size 10 --ratio 0:1 --key-pattern R:R --key-minimum 1
    --key-maximum 10000 -c 2 -t 2 --hide-histogram --test-time 1'
tested-groups:
- string
priority: 50
"""


@pytest.mark.usefixtures("no_strays")
def test_a_definition_runs_on_a_cluster_with_replicas(tmp_path: Path) -> None:
    """A cluster topology with replicas (a defaults.yml's spec.setups: the corpus has none)
    runs: the replicas join the cluster and are in sync before the preload and measuring."""
    defs = tmp_path / "defs"
    defs.mkdir()
    (defs / "defaults.yml").write_text(SETUPS)
    (defs / "get.yml").write_text(DEFINITION)
    done = run_kvperf("run", "--definitions", "defs", "--no-db", "--server-bin",
                      require_binary("valkey-server"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok" and row["cluster_mode"] is True, row["error"]
    assert row["checks"]["replicas_in_sync"] == 3 and row["checks"]["keyspacelen"] == 10_000
    assert row["server"]["replication_lag"]["samples"] >= 5, row["server"]
    logs = sorted((tmp_path / "results" / row["label"] / "tests").glob("*/server-node*.log"))
    assert len(logs) == 6, logs  # 3 primaries and their 3 replicas
    assert sum("PRIMARY <-> REPLICA sync: Finished with success" in p.read_text()
               for p in logs) == 3
