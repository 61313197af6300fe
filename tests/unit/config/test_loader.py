"""Config validation: the seed's format is accepted as is; every mistake is one clear error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvperf.config.commands import Seed
from kvperf.config.loader import default_config_path, load_config, parse_config
from kvperf.core.errors import ConfigError

CPUS = {0, 1}
BASE: dict[str, Any] = {"requests": 1000, "commands": ["SET"]}


def parse(obj: Any) -> Any:
    return parse_config(obj, CPUS, source="t.json")


def test_seed_config_is_accepted_unchanged() -> None:
    seed = [{"requests": [10000000], "keyspacelen": [10000000], "data_sizes": [16],
             "pipelines": [10], "clients": [50],
             "commands": ["SET", "GET", "RPUSH", "LPUSH", "LPOP", "SADD", "SPOP", "HSET"],
             "cluster_mode": "yes", "tls_mode": "no", "warmup": [10]}]
    (spec,) = parse(seed)
    assert spec.requests == (10000000,)
    assert spec.cluster_mode == (True,) and spec.tls_mode == (False,)
    assert spec.warmup == (10,)
    assert [c.name for c in spec.commands][:3] == ["SET", "GET", "RPUSH"]


def test_scalars_where_lists_are_allowed_and_booleans_both_ways() -> None:
    (spec,) = parse({**BASE, "pipelines": 16, "cluster_mode": False, "tls_mode": "YES",
                     "io-threads": 4, "server_cpu_range": "0", "client_cpu_range": "1"})
    assert spec.pipelines == (16,) and spec.tls_mode == (True,) and spec.cluster_mode == (False,)
    assert spec.io_threads == (4,) and spec.server_cpus == (0,) and spec.client_cpus == (1,)


def test_all_documented_keys() -> None:
    (spec,) = parse({**BASE, "keyspacelen": 10, "data_sizes": [3, 64], "clients": [1, 50],
                     "warmup": 0, "benchmark-threads": 2, "config_sets": [{"hz": 10}, {}],
                     "custom-server-configs": {"maxmemory": "1gb", "timeout": 300},
                     "modules": [{"path": "/x.so", "startup_args": ["a"]}],
                     "cluster_nodes": 5, "cluster_mode": ["no", "yes"]})
    assert spec.config_sets == ((("hz", "10"),), ())
    assert spec.custom_server_configs == (("maxmemory", "1gb"), ("timeout", "300"))
    assert spec.modules[0].startup_args == ("a",) and spec.cluster_nodes == 5
    assert spec.cluster_mode == (False, True)


def test_commands_resolve_to_catalogue_and_custom_lines() -> None:
    (spec,) = parse({**BASE, "commands": ["get", "lrange", "HGET", "SET k:__rand_int__ v"]})
    names = [c.name for c in spec.commands]
    assert names == ["GET", "LRANGE_100", "HGET", "SET k:__rand_int__ v"]
    assert spec.commands[0].seed is Seed.STRINGS
    assert spec.commands[3].is_custom and spec.commands[3].argv == ("SET", "k:__rand_int__", "v")


BAD: list[tuple[str, Any, str]] = [
    ("unknown key with hint", {**BASE, "pipeline": [1]}, "did you mean 'pipelines'"),
    ("unknown key io threads", {**BASE, "io_threads": 2}, "did you mean 'io-threads'"),
    ("fts key", {**BASE, "test_groups": []}, "--module-config"),
    ("wrong type int", {**BASE, "clients": "fifty"}, "'clients' must be an integer"),
    ("wrong type bool in list", {**BASE, "pipelines": [True]}, "must be an integer"),
    ("float size", {**BASE, "data_sizes": [2.5]}, "must be an integer"),
    ("empty list", {**BASE, "pipelines": []}, "'pipelines' is an empty list"),
    ("both bounds", {**BASE, "duration": 5}, "exactly one of 'requests' or 'duration' (both"),
    ("neither bound", {"commands": ["SET"]}, "(neither given)"),
    ("cpu outside", {**BASE, "server_cpu_range": "0-7"}, "names CPU 2"),
    ("cpu syntax", {**BASE, "client_cpu_range": "a-b"}, "is not a CPU number"),
    ("cpu backwards", {**BASE, "client_cpu_range": "1-0"}, "runs backwards"),
    ("cpu overlap", {**BASE, "server_cpu_range": "0", "client_cpu_range": "0-1"}, "overlap"),
    ("unknown command", {**BASE, "commands": ["GETT"]}, "unknown command 'GETT' (did you mean"),
    ("command type", {**BASE, "commands": [5]}, "entries must be strings"),
    ("zero requests", {**BASE, "requests": 0}, "'requests' must be positive"),
    ("negative clients", {**BASE, "clients": -1}, "'clients' must be positive"),
    ("negative warmup", {**BASE, "warmup": -1}, "'warmup' must be at least 0"),
    ("bad bool", {**BASE, "tls_mode": "maybe"}, "'tls_mode' must be true/false"),
    ("missing commands", {"requests": 1}, "missing key 'commands'"),
    ("not an object", [1], "must be an object"),
    ("reserved server config", {**BASE, "custom-server-configs": {"port": 1}}, "may not set"),
    ("config_sets type", {**BASE, "config_sets": ["hz 10"]}, "must be an object"),
    ("module without path", {**BASE, "modules": [{"startup_args": []}]}, "\"path\" string"),
    ("cluster nodes zero", {**BASE, "cluster_nodes": 0}, "'cluster_nodes' must be positive"),
    ("empty config list", [], "the config list is empty"),
]


@pytest.mark.parametrize(("case", "obj", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_configs_name_the_problem(case: str, obj: Any, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(obj)
    text = str(info.value)
    assert message in text
    assert text.startswith("t.json")
    if case != "empty config list":
        assert "object 0" in text


def test_error_names_the_object_index() -> None:
    with pytest.raises(ConfigError, match="object 1: unknown key 'pipeline'"):
        parse([BASE, {**BASE, "pipeline": 1}])


def test_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.json", CPUS)
    broken = tmp_path / "broken.json"
    broken.write_text('[{"requests": 1,}]')
    with pytest.raises(ConfigError, match=r"not valid JSON.*line 1"):
        load_config(broken, CPUS)
    good = tmp_path / "good.json"
    good.write_text(json.dumps([BASE]))
    assert len(load_config(good, CPUS)) == 1


def test_default_config_is_a_small_set_get_matrix() -> None:
    specs = load_config(default_config_path(), CPUS)
    assert {c.name for s in specs for c in s.commands} == {"SET", "GET"}
    assert specs[0].server_cpus != specs[0].client_cpus


def test_replicas_and_reads_from_them() -> None:
    spec = parse_config({"requests": 10, "commands": ["GET", "SET"], "replicas": 1,
                         "read_from_replicas": ["no", "yes", "all"]}, {0})[0]
    assert (spec.replicas, spec.read_from_replicas) == (1, ("no", "yes", "all"))
    plain = parse_config({"requests": 10, "commands": ["GET"]}, {0})[0]
    assert (plain.replicas, plain.read_from_replicas) == (0, ("no",))


def test_cluster_replicas_is_replicas_by_the_issue_name() -> None:
    spec = parse_config({"requests": 10, "commands": ["GET"], "cluster_mode": True,
                         "cluster_replicas": 1}, {0})[0]
    assert spec.replicas == 1
    with pytest.raises(ConfigError, match="give one of 'replicas' and 'cluster_replicas'"):
        parse_config({"requests": 10, "commands": ["GET"], "replicas": 1,
                      "cluster_replicas": 1}, {0})
