"""Every reader of input kvperf did not write, under hostile input (issue 41, hypothesis):
configs, benchmark definitions, metrics.json files of any format version, a harness's result,
INFO and CLUSTER NODES replies, perf stat's output. Each either reads the input or refuses
it with kvperf's own error naming the source (exit 2 or the trial's failure) — never an
uncaught exception, never a traceback.

The budget is ``HYPOTHESIS_PROFILE``'s (tests/unit/fuzz/conftest.py): ``ci`` (the default,
200 examples a property, seconds in all) or ``long`` (10,000: ``scripts/fuzz``)."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from kvperf.clients.result import ResultError, parse
from kvperf.config.loader import load_config, parse_config
from kvperf.config.scenarios import load_module_config
from kvperf.core.errors import ConfigError, KvperfError, UsageError
from kvperf.definitions import memtier
from kvperf.definitions.loader import read_yaml
from kvperf.definitions.memtier import MemtierArgsError
from kvperf.definitions.parse import parse_definition
from kvperf.results.row import FORMAT_VERSION
from kvperf.server.cluster import replicas_seen
from kvperf.server.perf_stat import parse_count
from kvperf.server.resp import parse_info
from kvperf.store.files import read_rows
from tests.unit.fuzz.values import (
    CONFIG_KEYS,
    DEFINITION_KEYS,
    RESULT,
    ROW,
    SPEC,
    json_values,
    mutated,
)

CPUS = {0, 1}


@given(json_values)
@example({"commands": ["SET"], "pipelines": [10**30]})
@example([{"commands": []}])
def test_any_json_config_is_read_or_refused_naming_its_source(data: Any) -> None:
    try:
        parse_config(data, CPUS, source="fuzz.json")
    except ConfigError as exc:
        assert str(exc).startswith("fuzz.json"), exc


@given(st.lists(st.dictionaries(st.sampled_from(CONFIG_KEYS), json_values, max_size=6),
                min_size=1, max_size=3))
def test_configs_of_known_keys_with_any_values_are_read_or_refused(data: Any) -> None:
    try:
        parse_config(data, CPUS, source="fuzz.json")
    except ConfigError as exc:
        assert str(exc).startswith("fuzz.json"), exc


@given(st.binary(max_size=300))
@example(b"\xff\xfe[")
@example(b'[{"commands": ["SET"]}')
def test_any_bytes_as_a_config_file_are_refused_naming_the_file(tmp_path_factory: Any,
                                                              raw: bytes) -> None:
    path = tmp_path_factory.mktemp("cfg") / "config.json"
    path.write_bytes(raw)
    try:
        load_config(path, CPUS)
    except ConfigError as exc:
        assert str(path) in str(exc), exc


@given(st.one_of(json_values, st.dictionaries(st.sampled_from(DEFINITION_KEYS), json_values,
                                              max_size=6)))
@example({"clientconfigs": 1})
def test_any_definition_is_parsed_or_refused_naming_its_file(raw: Any) -> None:
    try:
        parse_definition(raw, Path("defs/fuzz.yml"))
    except ConfigError as exc:
        assert "fuzz.yml" in str(exc), exc


@given(st.lists(mutated(ROW), max_size=3))
@example([{**ROW, "kvperf_format": FORMAT_VERSION + 1}])
@example([{**ROW, "kvperf_format": 1, "server": "x"}])
@example([{**ROW, "kvperf_format": 1, "server": 1}])
def test_metrics_rows_of_any_format_are_read_or_refused_naming_the_file(
        tmp_path_factory: Any, rows: list[Any]) -> None:
    path = tmp_path_factory.mktemp("rows") / "metrics.json"
    path.write_text(json.dumps(rows))
    try:
        read_rows(path)
    except (UsageError, KvperfError) as exc:
        assert str(path) in str(exc), exc


@given(st.one_of(mutated(RESULT).map(json.dumps), st.text(max_size=200)))
@example(json.dumps({**RESULT, "commands": {"SET": {**RESULT["commands"]["SET"],
                                                     "histogram": "HISTFAAA"}}}))
def test_a_harness_result_is_read_or_fails_its_trial_with_the_reason(stdout: str) -> None:
    try:
        parse(stdout, SPEC)
    except ResultError as exc:
        assert str(exc), "a refusal says why"


@given(st.one_of(st.binary(max_size=400), st.text(alphabet=string.printable, max_size=400)))
@example(b"# Server\r\nredis_version:8.0.1\r\n:\r\nno-colon\r\n\xff:\xfe\r\n")
def test_info_replies_of_any_bytes_parse_to_fields(text: bytes | str) -> None:
    fields = parse_info(text)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in fields.items())


@given(st.text(max_size=400))
@example("07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave\n")
@example("a b c d e f g h\n\n x")
def test_cluster_nodes_replies_of_any_text_count_replicas(text: str) -> None:
    assert replicas_seen(text) >= 0


@given(st.text(max_size=300))
@example("  <not counted>      instructions\n")
@example("1,234,567,890,123,456,789,012      instructions:u\n")
def test_perf_stat_output_of_any_text_gives_a_count_or_none(text: str) -> None:
    found = parse_count(text)
    assert found is None or found >= 0


MEMTIER_WORDS = ["--ratio", "1:10", "--pipeline", "16", "-c", "50", "-t", "4", "--key-pattern",
                 "R:R", "--data-size", "100", "--command", "SET __key__ __data__", "-n",
                 "allkeys", "--test-time", "x", "--", "-", "'", '"', "--key-maximum=9e99"]


@given(st.one_of(st.text(max_size=120),
                 st.lists(st.sampled_from(MEMTIER_WORDS), max_size=12).map(" ".join),
                 st.lists(st.text(max_size=10), max_size=8)))
@example("--command 'unterminated")
@example("--rati ;")
@example("--command ' '")
@example("--command '\"'")
@example("-")
def test_memtier_arguments_of_any_text_are_options_or_a_refusal(arguments: Any) -> None:
    try:
        options = memtier.parse(arguments)
    except MemtierArgsError as exc:
        assert str(exc)
    else:  # what planning refuses never reaches the run's command mix
        if memtier.refusal(options, cluster=False) is None:
            memtier.command_mix(options)


@given(st.binary(max_size=300))
@example(b"name: x\n  bad: [")
@example(b"\xff")
def test_any_bytes_as_a_definition_file_are_refused_naming_it(tmp_path_factory: Any,
                                                             raw: bytes) -> None:
    path = tmp_path_factory.mktemp("yml") / "fuzz.yml"
    path.write_bytes(raw)
    try:
        parse_definition(read_yaml(path), path)
    except ConfigError as exc:
        assert "fuzz.yml" in str(exc), exc


@given(json_values)
@example({"test_groups": {"g": {"scenarios": [{"name": 1}]}}})
def test_any_module_config_is_read_or_refused_naming_its_file(tmp_path_factory: Any,
                                                              data: Any) -> None:
    path = tmp_path_factory.mktemp("mod") / "fuzz.json"
    path.write_text(json.dumps(data))
    try:
        load_module_config(path)
    except ConfigError as exc:
        assert "fuzz.json" in str(exc), exc
