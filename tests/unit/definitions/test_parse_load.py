"""Definitions read into typed models: both formats, unknown keys, defaults.yml, bad input."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from kvperf.core.errors import ConfigError
from kvperf.definitions.kpis import Kpi
from kvperf.definitions.loader import load
from kvperf.definitions.parse import parse_definition

SPEC_04 = """
version: 0.4
name: memtier_benchmark-1Mkeys-string-get-10B
description: GET of 10-byte values
dbconfig:
  configuration-parameters:
    save: '""'
    maxmemory: 1073741824
    lazyfree-lazy-user-del: yes
  check:
    keyspacelen: 1000000
  preload_tool:
    run_image: redislabs/memtier_benchmark:edge
    tool: memtier_benchmark
    arguments: '"--data-size" "10" "--ratio" "1:0" "--key-pattern" "P:P" -n allkeys'
  init_commands:
    - '"CONFIG" "SET" "maxmemory-policy" "noeviction"'
    - DEBUG SLEEP 0
    - [SET, "a b", c]
  init_lua: return 1
  resources:
    requests:
      memory: 1g
tested-groups: [string]
tested-commands: [get]
priority: 12
redis-topologies: [oss-standalone, oss-standalone-02-io-threads]
build-variants: [dockerhub]
clientconfig:
  run_image: redislabs/memtier_benchmark:edge
  tool: memtier_benchmark
  arguments: --command "GET __key__" --test-time 180 -c 50 -t 4
  resources:
    requests:
      cpus: '4'
      memory: 2g
exporter:
  redistimeseries:
    metrics:
      - $."ALL STATS".Totals."Ops/sec"
"""

# The seed document's redisbench-admin 0.2 example, plus kpis.
ADMIN_02 = """
version: 0.2
name: "json_get_sub_doc_pass_100_json"
remote:
 - type: oss-standalone
 - setup: redisearch-m5d
dbconfig:
  - dataset: "datasets/performance.docs.rdb"
  - configuration-parameters:
    - save: '""'
    - appendonly: "no"
clientconfig:
  - tool: redis-benchmark
  - min-tool-version: "6.2.0"
  - parameters:
    - clients: 16
    - requests: 2000000
    - threads: 2
    - pipeline: 1
    - command: 'JSON.GET pass-100 sub_doc.sclr'
kpis:
  - le: { $.Tests.Overall.p50_latency_ms: 0.5 }
  - ge: { $.Tests.Overall.rps: 100000 }
exporter:
  redistimeseries:
    break_by: [version, commit]
    timemetric: "$.StartTime"
    metrics:
      - "$.Tests.Overall.rps"
"""


def parsed(text: str, name: str = "def.yml") -> object:
    return parse_definition(yaml.safe_load(textwrap.dedent(text)), Path("/defs") / name)


def test_format_04() -> None:
    d = parse_definition(yaml.safe_load(SPEC_04), Path("/defs/a.yml"))
    assert d.issues == () and d.version == "0.4" and d.priority == 12
    assert d.dbconfig.configuration_parameters == (
        ("save", ""), ("maxmemory", "1073741824"), ("lazyfree-lazy-user-del", "yes"))
    assert d.dbconfig.check_keyspacelen == 1000000
    assert d.dbconfig.init_commands == (("CONFIG", "SET", "maxmemory-policy", "noeviction"),
                                        ("DEBUG", "SLEEP", "0"), ("SET", "a b", "c"))
    assert d.dbconfig.init_lua == ("return 1",)
    assert d.dbconfig.preload_tool is not None and "P:P" in d.dbconfig.preload_tool.arguments
    assert d.topologies == ("oss-standalone", "oss-standalone-02-io-threads")
    (client,) = d.clients
    assert (client.tool, client.resources and client.resources.cpus) == (
        "memtier_benchmark", "4")
    assert d.exporter is not None and d.exporter.metrics == ('$."ALL STATS".Totals."Ops/sec"',)


def test_format_02_lists_of_maps() -> None:
    d = parse_definition(yaml.safe_load(ADMIN_02), Path("/defs/b.yml"))
    assert d.issues == () and d.version == "0.2"
    assert d.dbconfig.dataset == "datasets/performance.docs.rdb"
    assert d.dbconfig.configuration_parameters == (("save", ""), ("appendonly", "no"))
    (client,) = d.clients
    assert (client.tool, client.min_tool_version) == ("redis-benchmark", "6.2.0")
    assert client.parameters[0] == ("clients", 16) and client.parameters[-1][0] == "command"
    assert d.kpis == (Kpi("le", "$.Tests.Overall.p50_latency_ms", 0.5),
                      Kpi("ge", "$.Tests.Overall.rps", 100000.0))
    assert d.topologies == ("oss-standalone",)  # none named: redisbench-admin's default


@pytest.mark.parametrize(("text", "path", "fatal"), [
    ("name: x\nersion: 0.4\nclientconfig: {tool: memtier_benchmark}", "ersion", False),
    ("name: x\nclientconfig: {tool: memtier_benchmark, argumnts: -n 1}",
     "clientconfig.argumnts", True),
    ("name: x\ndbconfig: {preload_tool: {tool: memtier_benchmark, foo: 1}}\n"
     "clientconfig: {tool: memtier_benchmark}", "dbconfig.preload_tool.foo", True),
    ("name: x\ndbconfig: {check: {keyspace: 3}}\nclientconfig: {tool: memtier_benchmark}",
     "dbconfig.check.keyspace", True),
    ("name: x\nexporter: {redistimeseries: {metricz: []}}\n"
     "clientconfig: {tool: memtier_benchmark}", "exporter.redistimeseries.metricz", False),
    ("name: x\nclientconfig: [{tool: redis-benchmark}, {tool: memtier_benchmark}]",
     "clientconfig.tool", True),
    ("name: x\nkpis: [{near: {$.a: 1}}]\nclientconfig: {tool: memtier_benchmark}",
     "kpis[0].near", True),
    ("name: x\nkpis: [{le: {$.a: fast}}]\nclientconfig: {tool: memtier_benchmark}",
     "kpis[0].le.$.a", True),
    ("name: x\npriority: high\nclientconfig: {tool: memtier_benchmark}", "priority", True),
    ("name: x\nversion: 0.9\nclientconfig: {tool: memtier_benchmark}", "version", True),
    ("name: x", "clientconfig", True),
    ("description: no name\nclientconfig: {tool: memtier_benchmark}", "name", True),
])
def test_issues_name_the_key(text: str, path: str, fatal: bool) -> None:
    d = parse_definition(yaml.safe_load(text), Path("/defs/c.yml"))
    assert [(i.path, i.fatal) for i in d.issues if i.path == path] == [(path, fatal)], d.issues


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


DEFAULTS = """
exporter:
  redistimeseries:
    timemetric: $."ALL STATS".Runtime."Start time"
    metrics:
      - $."ALL STATS".Totals."Ops/sec"
      - $."ALL STATS".Totals."Latency"
kpis:
  - le: { $.a: 1 }
  - ge: { $.b: 2 }
spec:
  setups:
    - name: my-standalone-4-threads
      type: oss-standalone
      redis_topology: {primaries: 1, replicas: 0}
      redis_arguments: --io-threads 4
"""


def test_folder_defaults_merged(tmp_path: Path) -> None:
    write(tmp_path, "defaults.yml", DEFAULTS)
    write(tmp_path, "a.yml", SPEC_04)
    write(tmp_path, "b.yaml", ADMIN_02)
    write(tmp_path, "notes.txt", "not a definition")
    loaded = load([tmp_path])
    a, b = loaded.definitions
    assert [d.source.name for d in loaded.definitions] == ["a.yml", "b.yaml"]
    assert a.exporter is not None and a.exporter.metrics == (
        '$."ALL STATS".Totals."Ops/sec"', '$."ALL STATS".Totals."Latency"')  # no repeat
    assert a.exporter.timemetric == '$."ALL STATS".Runtime."Start time"'
    assert a.kpis == (Kpi("le", "$.a", 1), Kpi("ge", "$.b", 2))  # none of its own
    assert b.exporter is not None and b.exporter.timemetric == "$.StartTime"  # its own wins
    assert b.exporter.metrics[-1] == "$.Tests.Overall.rps"
    assert len(b.kpis) == 4  # its two, then the defaults' two (other paths)
    assert loaded.topologies["my-standalone-4-threads"].io_threads == 4
    assert "oss-standalone" in loaded.topologies
    assert load([tmp_path / "a.yml"]).definitions[0].kpis == a.kpis  # sibling defaults too


def test_own_kpi_replaces_the_default_on_the_same_path(tmp_path: Path) -> None:
    write(tmp_path, "defaults.yml", "kpis:\n  - le: { $.a: 1 }\n  - ge: { $.b: 2 }\n")
    write(tmp_path, "x.yml", "name: x\nclientconfig: {tool: memtier_benchmark}\n"
                             "kpis:\n  - le: { $.a: 5 }\n")
    (x,) = load([tmp_path]).definitions
    assert x.kpis == (Kpi("le", "$.a", 5), Kpi("ge", "$.b", 2))


def test_duplicate_names_are_refused(tmp_path: Path) -> None:
    write(tmp_path, "a.yml", "name: same\nclientconfig: {tool: memtier_benchmark}\n")
    write(tmp_path, "b.yml", "name: same\nclientconfig: {tool: memtier_benchmark}\n")
    a, b = load([tmp_path, tmp_path / "a.yml"]).definitions  # a given twice: read once
    assert a.fatal == () and "also the name of" in str(b.fatal[0])


@pytest.mark.parametrize(("files", "given", "says"), [
    ({}, "missing", "no such file or directory"),
    ({"a.txt": "x"}, ".", "no definition files"),
    ({"a.yml": "name: [unclosed\n"}, "a.yml", "not valid YAML at line"),
    ({"a.yml": "- just\n- a list\n"}, "a.yml", "expected a YAML map, found list"),
    ({"a.yml": "name: x\n", "defaults.yml": "kpiz: []\n"}, ".", "unknown key 'kpiz'"),
    ({"defaults.yml": "kpis: []\n"}, "defaults.yml", "a defaults file, not a definition"),
    ({"a.yml": "name: x\n", "defaults.yml": "spec: {setups: [{name: t, type: moon}]}\n"},
     ".", "type must be one of"),
])
def test_bad_input_names_the_file(tmp_path: Path, files: dict[str, str], given: str,
                                  says: str) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    with pytest.raises(ConfigError, match=says):
        load([tmp_path / given])


def test_shipped_examples_load_clean() -> None:
    loaded = load([Path(__file__).resolve().parents[3] / "configs" / "definitions"])
    assert [d.name for d in loaded.definitions] == ["kvperf-example-string-get-10B",
                                                    "kvperf-example-set-kpis"]
    assert all(d.issues == () for d in loaded.definitions)
    assert loaded.definitions[1].kpis[0] == Kpi("ge", "$.Tests.Overall.rps", 1000)
