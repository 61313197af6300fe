"""`kvperf run --module-config FILE --module-path SO` on real valkey-server with real modules
built from Valkey 8.1.1's tests/modules, as docs/guide/modules.md shows it (scratch dir,
relative paths): two groups of scenarios over a generated dataset; --groups / --scenarios
select; flush_before and setup_commands are seen in DBSIZE; __field:…__ values are the
dataset's (read back from the server before it stops); config_sets reach the module's own
config."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kvperf.config.scenarios import load_module_config, select
from kvperf.pipeline import Runner
from kvperf.pipeline.run.modules import ModuleOptions, prepare_modules
from kvperf.server.instance import ServerGroup
from kvperf.server.resp import RespClient
from tests.fixtures.valkey_modules import built_module
from tests.helpers import read_metrics, require_binary, run_kvperf

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600),
              pytest.mark.usefixtures("no_strays")]

CONFIG: dict[str, Any] = {
    "seed": 7,
    "config_sets": [{"moduleconfigs.numeric": 42}],
    "profiling_sets": [{"enabled": False}],
    "dataset_generation": {"docs.xml": {"doc_count": 300, "fields": [
        {"name": "title", "size": 40,
         "transforms": [{"type": "wikipedia"}, {"type": "inject", "term": "MARKER",
                                                 "percentage": 50}]},
        {"name": "price", "transforms": [{"type": "numeric_range", "min": 1, "max": 99}]}]}},
    "test_groups": [
        {"group": 1, "scenarios": [
            {"id": "ingest", "type": "ingestion", "flush_before": True,
             "setup_commands": ["SET setup:marker \"made by setup\""],
             "command": "HSET doc:__field:id__ title __field:title__ price __field:price__",
             "dataset": "docs.xml", "maxdocs": 200, "clients": 4, "pipeline": 4},
            {"id": "read", "type": "read", "command": "HGET doc:__field:id__ title",
             "dataset": "docs.xml", "duration": 1, "clients": 4},
            {"id": "reingest", "type": "ingestion", "flush_before": True,
             "command": "HSET doc:__field:id__ title __field:title__",
             "dataset": "docs.xml", "maxdocs": 20, "clients": 1}]},
        {"group": 2, "scenarios": [
            {"id": "dt-set", "type": "write",
             "command": "datatype.set dt:__field:id__ __field:price__ __field:title__",
             "dataset": "docs.xml", "maxdocs": 50, "clients": 2},
            {"id": "dt-get", "type": "read", "command": "datatype.get dt:__field:id__",
             "dataset": "docs.xml", "duration": 1, "warmup": 1, "clients": 2,
             "sequential": True}]},
    ],
}


def _write(tmp_path: Path) -> Path:
    modules = tmp_path / "modules"
    modules.mkdir()
    for name in ("datatype", "moduleconfigs"):
        shutil.copy(built_module(name), modules / f"{name}.so")
    path = tmp_path / "module-tests.json"
    path.write_text(json.dumps(CONFIG))
    return path


def _dataset(tmp_path: Path) -> list[dict[str, str]]:
    (path,) = (tmp_path / "results" / "datasets").glob("docs-*.csv")
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_two_groups_run_with_real_modules(tmp_path: Path) -> None:
    _write(tmp_path)
    server = require_binary("valkey-server")
    done = run_kvperf("run", "--module-config", "module-tests.json", "--module", "datatype",
                      "--module-path", "modules/datatype.so", "modules/moduleconfigs.so",
                      "--server-bin", server, "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "note" in done.stderr and "wikipedia" in done.stderr
    rows = {(r["config_set"]["group"], r["command"]): r for r in read_metrics(tmp_path /
                                                                            "results")}
    assert list(rows) == [("1", "ingest"), ("1", "read"), ("1", "reingest"),
                          ("2", "dt-set"), ("2", "dt-get")]
    assert all(r["status"] == "ok" and r["rps"] > 0 for r in rows.values())
    ingest = rows["1", "ingest"]
    # every row once: 200 HSETs counted by the server, plus setup's key (flush came first)
    assert ingest["requests"] == 200 and ingest["server"]["calls"] == 200
    assert ingest["checks"]["dbsize"] == 201
    assert rows["1", "read"]["checks"]["dbsize"] == 201  # no flush_before: data kept
    assert rows["1", "reingest"]["checks"]["dbsize"] == 20  # FLUSHALL, then 20 rows
    assert rows["1", "read"]["server"]["commands"]["hget"]["calls"] > 0
    assert rows["2", "dt-set"]["server"]["commands"]["datatype.set"]["calls"] == 50
    assert rows["2", "dt-get"]["server"]["commands"]["datatype.get"]["calls"] > 0
    assert rows["2", "dt-set"]["checks"]["dbsize"] == 50  # a fresh server per group
    assert ingest["config_set"] == {"group": "1", "scenario": "ingest",
                                    "moduleconfigs.numeric": "42"}
    assert ingest["checks"]["server_config"] == {"moduleconfigs.numeric": "42"}
    assert ingest["scenario"]["dataset_rows"] == 300 and ingest["scenario"]["module"] == \
        "datatype"
    # the generated dataset is cached: a second run reuses the same bytes
    first = _dataset(tmp_path)
    assert sum("MARKER" in r["title"] for r in first) in range(100, 201)


def test_groups_and_scenarios_select(tmp_path: Path) -> None:
    _write(tmp_path)
    server = require_binary("valkey-server")
    done = run_kvperf("run", "--config", "module-tests.json", "--groups", "2",
                      "--scenarios", "dt-set", "--module-path", "modules/datatype.so",
                      "modules/moduleconfigs.so", "--server-bin", server, "--no-db",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_metrics(tmp_path / "results")
    assert [(r["config_set"]["group"], r["command"]) for r in rows] == [("2", "dt-set")]
    bad = run_kvperf("run", "--config", "module-tests.json", "--groups", "3",
                     "--server-bin", server, cwd=tmp_path)
    assert bad.returncode == 2 and "no group '3'" in bad.stderr and "groups: 1, 2" in bad.stderr
    bad = run_kvperf("run", "--config", "module-tests.json", "--groups", "2", "--scenarios",
                     "ingest", "--server-bin", server, cwd=tmp_path)
    assert bad.returncode == 2 and "dt-get, dt-set" in bad.stderr
    missing = run_kvperf("run", "--config", "module-tests.json", "--module-path", "nope.so",
                         "--server-bin", server, cwd=tmp_path)
    assert missing.returncode == 2 and "nope.so" in missing.stderr


class _Inspected(ServerGroup):
    """A real ServerGroup that reads every doc hash back before it stops its nodes."""

    seen: ClassVar[dict[str, dict[str, str]]] = {}

    def stop(self) -> None:
        if self.nodes and self.nodes[0].process.alive():
            with RespClient(self.endpoints[0]) as client:
                keys = client.call("KEYS", "doc:*")
                assert isinstance(keys, list)
                for key in keys:
                    assert isinstance(key, bytes)
                    name = key.decode()
                    reply = client.call("HGETALL", name)
                    assert isinstance(reply, list)
                    values = [v.decode() for v in reply if isinstance(v, bytes)]
                    _Inspected.seen[name] = dict(zip(values[::2], values[1::2], strict=True))
        super().stop()


def test_field_values_come_from_the_dataset(tmp_path: Path) -> None:
    path = _write(tmp_path)
    config = load_module_config(path)
    options = ModuleOptions(config, select(config, ("1",), ("ingest",)), tmp_path / "results",
                            None, require_binary("valkey-server"), None,
                            (tmp_path / "modules" / "moduleconfigs.so",))
    summary = Runner(prepare_modules(options), launcher=_Inspected).execute()
    assert summary.failed == 0
    rows = {r["id"]: r for r in _dataset(tmp_path)}
    assert len(_Inspected.seen) == 200
    for key, stored in _Inspected.seen.items():
        row = rows[key.removeprefix("doc:")]
        assert stored == {"title": row["title"], "price": row["price"]}
    assert set(_Inspected.seen) == {f"doc:{i}" for i in range(200)}  # rows 0…199, in order


def test_module_path_loads_into_an_ordinary_configs_servers(tmp_path: Path) -> None:
    _write(tmp_path)
    (tmp_path / "plain.json").write_text(json.dumps([{
        "commands": ["DATATYPE.SET dt:__rand_int__ 7 v"], "duration": 1, "clients": 2,
        "keyspacelen": 100}]))
    server = require_binary("valkey-server")
    done = run_kvperf("run", "--config", "plain.json", "--module-path", "modules/datatype.so",
                      "--server-bin", server, "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok" and row["server"]["calls"] > 0
    (tmp_path / "modules" / "datatype.so").chmod(0o644)
    refused = run_kvperf("run", "--config", "plain.json", "--module-path",
                         "modules/datatype.so", "--server-bin", server, cwd=tmp_path)
    assert refused.returncode == 2 and "is not executable" in refused.stderr


def test_a_failing_scenario_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "rows.csv").write_text("k,v\na,1\nb,2\n")
    (tmp_path / "bad.json").write_text(json.dumps({"test_groups": [{"group": 1, "scenarios": [
        {"id": "broken", "type": "write", "setup_commands": ["NOSUCHCOMMAND x"],
         "command": "SET __field:k__ __field:v__", "dataset": "rows.csv"},
        {"id": "fine", "type": "write", "command": "SET __field:k__ __field:v__",
         "dataset": "rows.csv"}]}]}))
    done = run_kvperf("run", "--config", "bad.json", "--server-bin",
                      require_binary("valkey-server"), "--no-db", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    broken, fine = read_metrics(tmp_path / "results")
    assert broken["status"] == "failed" and "NOSUCHCOMMAND x" in broken["error"]
    assert fine["status"] == "ok" and fine["checks"]["dbsize"] == 2
