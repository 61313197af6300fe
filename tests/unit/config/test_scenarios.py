"""The module-test format: typed models, validation messages naming key paths, selection."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kvperf.config.model import ProfileSettings
from kvperf.config.scenarios import (
    ClusterExecution,
    ScenarioType,
    load_module_config,
    parse_module_config,
    select,
)
from kvperf.core.errors import ConfigError
from kvperf.core.kinds import ProfileMode

SOURCE = Path("/nonexistent/module-tests.json")


def _config(**top: Any) -> dict[str, Any]:
    return {"test_groups": [
        {"group": 1, "scenarios": [
            {"type": "ingestion", "command": "HSET doc:__field:id__ t __field:title__",
             "dataset": "docs.csv", "maxdocs": 10, "setup_commands": ["FT.CREATE idx"],
             "flush_before": True, "clients": 1000},
            {"id": "a", "type": "search", "command": "FT.SEARCH idx __field:term__",
             "dataset": "q.csv", "duration": 60, "warmup": 20, "clients": 1000,
             "cluster_execution": "parallel", "profiling": {"delays": {}}}]},
        {"group": "two", "scenarios": [
            {"id": "w", "type": "write", "command": "SET __key__ __data__", "requests": 100}]}],
        "dataset_generation": {"docs.csv": {"doc_count": 5, "fields": [{"name": "title"}]}},
        "query_generation": {"q.csv": {"type": "terms", "doc_count": 3}},
        **top}


def test_the_seeds_example_parses_into_typed_scenarios() -> None:
    config = parse_module_config(_config(cluster_mode=False, tls_mode=False,
                                         config_sets=[{"x.threads": 1}, {"x.threads": 8}],
                                         profiling_sets=[{"enabled": True, "mode": "cpu"}],
                                         server_cpu_range="0", client_cpu_range="1"), SOURCE)
    ingest, search = config.groups[0].scenarios
    assert ingest.id == "ingestion" and ingest.type is ScenarioType.INGESTION
    assert ingest.sequential and ingest.flush_before and ingest.setup_commands == ("FT.CREATE idx",)
    assert ingest.fields == ("id", "title") and ingest.maxdocs == 10
    assert search.cluster_execution is ClusterExecution.PARALLEL and not search.sequential
    assert search.duration == 60 and search.warmup == 20 and search.profiling == {"delays": {}}
    assert config.groups[1].group == "two"
    assert config.groups[1].scenarios[0].kvload_command() == "SET key:__rand_int__ __data__"
    assert config.config_sets == ((("x.threads", "1"),), (("x.threads", "8"),))
    assert config.profiling_sets == ({"enabled": True, "mode": "cpu"},)
    assert config.passes == 1 and config.profile(0, ingest) == ProfileSettings()
    assert config.server_cpus == (0,) and config.client_cpus == (1,)
    assert [g.name for g in config.generation] == ["docs.csv", "q.csv"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda c: c.update(tset_groups=1), "unknown key 'tset_groups'"),
    (lambda c: c.update(port=6379), "kvperf picks a free port"),
    (lambda c: c["test_groups"][0]["scenarios"][0].update(maxdocs=0),
     "test_groups[0].scenarios[0].maxdocs must be an integer ≥ 1"),
    (lambda c: c["test_groups"][0]["scenarios"][0].update(typo=1),
     "test_groups[0].scenarios[0]: unknown key 'typo'"),
    (lambda c: c["test_groups"][0]["scenarios"][0].update(type="load"),
     "type must be one of write, read, ingestion, search"),
    (lambda c: c["test_groups"][0]["scenarios"][0].pop("dataset"),
     "uses __field:id__ but the scenario names no 'dataset'"),
    (lambda c: c["test_groups"][0]["scenarios"][1].update(id="ingestion"),
     "scenario id 'ingestion' appears twice"),
    (lambda c: c["test_groups"][1]["scenarios"][0].update(command="GET __nope__"),
     "unknown placeholder '__nope__'"),
    (lambda c: c["test_groups"][1]["scenarios"][0].pop("requests"),
     "give 'duration' (seconds), 'requests', or a 'dataset'"),
    (lambda c: c["test_groups"][1].update(group=1), "group '1' appears twice"),
    (lambda c: c["test_groups"][0]["scenarios"][1].update(dataset="missing.csv"),
     "dataset 'missing.csv' is neither a file"),
    (lambda c: c["test_groups"][0]["scenarios"][1].update(dataset="wiki.xml"),
     "is an XML file, which kvperf does not read"),
    (lambda c: c["dataset_generation"]["docs.csv"]["fields"][0].update(
        transforms=[{"type": "shuffle"}]), "transforms[0] must be an object with 'type'"),
    (lambda c: c["dataset_generation"]["docs.csv"]["fields"][0].update(
        transforms=[{"type": "inject", "term": "x", "percentage": 150}]),
     "percentage must be a number in 0…100"),
])
def test_mistakes_name_the_key(change: Any, message: str) -> None:
    config = _config()
    change(config)
    with pytest.raises(ValueError, match=None) as caught:
        parse_module_config(config, SOURCE)
    assert message in str(caught.value)


def test_load_names_the_file_and_a_csv_path_is_relative_to_it(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"test_groups": [{"group": 1, "scenarios": [
        {"type": "read", "command": "GET __field:k__", "dataset": "rows.csv",
         "duration": 1}]}]}))
    with pytest.raises(ConfigError, match=r"m\.json: .*'rows\.csv' is neither a file"):
        load_module_config(path)
    (tmp_path / "rows.csv").write_text("k\na\n")
    assert load_module_config(path).groups[0].scenarios[0].dataset == "rows.csv"
    path.write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_module_config(path)


def test_selection_by_groups_and_scenarios_lists_what_exists() -> None:
    config = parse_module_config(_config(), SOURCE)
    assert [(g.group, [s.id for s in ss]) for g, ss in select(config, (), ())] == [
        ("1", ["ingestion", "a"]), ("two", ["w"])]
    assert [(g.group, [s.id for s in ss]) for g, ss in select(config, ("1",), ("a",))] == [
        ("1", ["a"])]
    assert [g.group for g, _ in select(config, (), ("w",))] == ["two"]
    with pytest.raises(ConfigError, match=r"no group '3' .*\(groups: 1, two\)"):
        select(config, ("3",), ())
    with pytest.raises(ConfigError, match=r"no scenario 'w' .*\(scenarios: a, ingestion\)"):
        select(config, ("1",), ("w",))


def test_a_scenarios_profiling_overrides_its_sets_values_and_window() -> None:
    """The seed's delay strategy: the set's delays per phase (scenario type), the scenario's
    own ``profiling`` over them; a disabled set profiles nothing."""
    raw = _config(profiling_sets=[
        {"enabled": False},
        {"enabled": True, "mode": "wall-time", "sampling_freq": 499,
         "delays": {"ingestion": {"delay": 0, "duration": 10},
                    "search": {"delay": 30, "duration": 10}}}])
    raw["test_groups"][0]["scenarios"][0]["profiling"] = {
        "delays": {"ingestion": {"delay": 10, "duration": 10}}}
    config = parse_module_config(raw, SOURCE)
    ingest, search = config.groups[0].scenarios
    (write,) = config.groups[1].scenarios
    assert config.passes == 2
    assert config.profile(0, ingest) is None and config.profile(0, search) is None
    wall = ProfileSettings(499, "fp", ProfileMode.WALL_TIME, 10.0, 10.0)
    assert config.profile(1, ingest) == wall
    assert config.profile(1, search) == replace(wall, delay=30.0)
    assert config.profile(1, write) == replace(wall, delay=0.0, duration=None)
    assert parse_module_config(_config(), SOURCE).passes == 1
    raw["test_groups"][0]["scenarios"][0]["profiling"] = {
        "delays": {"ingestion": {"delay": 4}}}  # only the delay: the set's duration stays
    ingest = parse_module_config(raw, SOURCE).groups[0].scenarios[0]
    assert parse_module_config(raw, SOURCE).profile(1, ingest) == replace(wall, delay=4.0)


@pytest.mark.parametrize(("sets", "override", "message"), [
    ([{"mode": "off-cpu"}], None, "profiling_sets[0].mode must be one of cpu, wall-time"),
    ([{"delays": {"reading": {}}}], None, "names phase 'reading'"),
    ([{"enabled": False}, {"enabled": True}], {"sampling_freq": 0},
     "group 1 scenario ingestion (its profiling over that set): "
     "profiling_sets[1].sampling_freq must be an integer"),
    ([], None, "profiling_sets must be a non-empty list"),
])
def test_profiling_mistakes_name_the_set_and_scenario(sets: list[Any], override: Any,
                                                      message: str) -> None:
    raw = _config(profiling_sets=sets)
    if override is not None:
        raw["test_groups"][0]["scenarios"][0]["profiling"] = override
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_module_config(raw, SOURCE)
