"""A definition's YAML mapping → ``Definition`` (pure).

Nothing raises on a bad definition: each problem becomes an ``Issue`` with its key path, so
a folder of hundreds of files reports every bad one and plans the rest. An unknown key
inside a section that decides how the benchmark runs (``dbconfig``, ``clientconfig``,
``preload_tool``, ``check``, ``kpis``) is fatal; an unknown top-level key or exporter key
is reported and ignored. Lists of one-key maps (redisbench-admin 0.2's ``clientconfig``,
``dbconfig`` and ``configuration-parameters``) are flattened first; a key given twice there
is fatal.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

from kvperf.core.jsontypes import JsonObject
from kvperf.definitions.kpis import COMPARISONS, Kpi
from kvperf.definitions.model import (
    FORMATS,
    DbConfig,
    Definition,
    Exporter,
    Issue,
    RdbChecks,
    Resources,
    ToolConfig,
)

TOP_KEYS = frozenset({
    "name", "description", "version", "tested-commands", "tested-groups", "priority",
    "redis-topologies", "setups", "build-variants", "dbconfig", "clientconfig",
    "clientconfigs", "exporter", "kpis", "required-runner-capabilities", "remote",
    "metadata", "timeout_seconds"})
DB_KEYS = frozenset({
    "configuration-parameters", "module-configuration-parameters", "dataset", "dataset_name",
    "dataset_description", "dataset_load_timeout_secs", "preload_tool", "init_commands",
    "init_lua", "check", "resources", "preload_before_replica", "wait_for_bgsave",
    "low-throughput-benchmark", "skip_throughput_floor", "rdb_checks"})
TOOL_KEYS = frozenset({
    "tool", "arguments", "parameters", "run_image", "min-tool-version", "tool_source",
    "resources", "timeout"})
OTHER_TOOL_KEYS = frozenset({"scalability", "datasets", "engine"})  # non-memtier tools' own
RESOURCE_KEYS = frozenset({"requests", "limits"})
RDB_CHECK_KEYS = frozenset({"operation", "keyspacelen", "value_size", "sample_keys"})
EXPORTER_KEYS = frozenset({"metrics", "timemetric", "break_by", "comparison"})
_ALL_QUOTED = re.compile(r'\s*(?:"[^"\\]*"\s*)+')
_QUOTED_WORD = re.compile(r'"([^"\\]*)"')
TRUE_WORDS = frozenset({"yes", "true", "1", "on"})
FALSE_WORDS = frozenset({"no", "false", "0", "off"})


class Reader:
    """Typed reads that record an Issue (and return a neutral value) instead of raising."""

    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def fail(self, path: str, message: str, fatal: bool = True) -> None:
        self.issues.append(Issue(path, message, fatal))

    def mapping(self, path: str, value: Any, known: frozenset[str],
                fatal_unknown: bool = True) -> JsonObject:
        value = self.flatten(path, value)
        if not isinstance(value, dict):
            self.fail(path, f"must be a map, not {type(value).__name__}")
            return {}
        for key in value:
            if key not in known:
                where = f"{path}.{key}" if path else str(key)
                self.fail(where, "unknown key" + ("" if fatal_unknown else " (ignored)"),
                          fatal_unknown)
        return {key: item for key, item in value.items() if key in known}

    def flatten(self, path: str, value: Any) -> Any:
        """A list of maps (redisbench-admin's style) as one map; other values unchanged."""
        if not isinstance(value, list) or not all(isinstance(i, dict) for i in value):
            return value
        merged: JsonObject = {}
        for item in value:
            for key, inner in item.items():
                if key in merged:
                    self.fail(f"{path}.{key}", "given twice")
                merged[key] = inner
        return merged

    def text(self, path: str, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            return str(value)
        self.fail(path, f"must be a string, not {type(value).__name__}")
        return None

    def integer(self, path: str, value: Any) -> int | None:
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        self.fail(path, f"must be an integer, not {value!r}")
        return None

    def texts(self, path: str, value: Any) -> tuple[str, ...]:
        if value is None:
            return ()
        items = value if isinstance(value, list) else [value]
        out = tuple(self.text(f"{path}[{i}]", item) for i, item in enumerate(items))
        return tuple(item for item in out if item is not None)

    def flag(self, path: str, value: Any) -> bool:
        if value is None or isinstance(value, bool):
            return bool(value)
        word = str(value).strip().lower()
        if word in TRUE_WORDS | FALSE_WORDS:
            return word in TRUE_WORDS
        self.fail(path, f"must be yes/no or true/false, not {value!r}")
        return False


def _config_value(value: Any) -> str:
    """A configuration parameter's value as the server's command line takes it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]  # save: '""' is the empty value
    return text


def _resources(r: Reader, path: str, value: Any) -> Resources | None:
    if value is None:
        return None
    section = r.mapping(path, value, RESOURCE_KEYS)
    requests = r.mapping(f"{path}.requests", section.get("requests") or {},
                         frozenset({"cpus", "cpu", "memory"}))
    cpus = requests.get("cpus", requests.get("cpu"))
    return Resources(r.text(f"{path}.requests.cpus", cpus),
                     r.text(f"{path}.requests.memory", requests.get("memory")))


def _parameters(r: Reader, path: str, value: Any) -> tuple[tuple[str, Any], ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    pairs: list[tuple[str, Any]] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            r.fail(f"{path}[{index}]", f"must be a map, not {type(item).__name__}")
            continue
        pairs.extend((str(key), inner) for key, inner in item.items())
    return tuple(pairs)


def _tool(r: Reader, path: str, value: Any) -> ToolConfig | None:
    section = r.mapping(path, value, TOOL_KEYS | OTHER_TOOL_KEYS)
    tool = r.text(f"{path}.tool", section.get("tool"))
    if not tool:
        r.fail(f"{path}.tool", "missing: which benchmark tool runs this")
        return None
    source = section.get("tool_source")
    return ToolConfig(
        tool=tool, arguments=r.text(f"{path}.arguments", section.get("arguments")) or "",
        parameters=_parameters(r, f"{path}.parameters", section.get("parameters")),
        run_image=r.text(f"{path}.run_image", section.get("run_image")),
        min_tool_version=r.text(f"{path}.min-tool-version", section.get("min-tool-version")),
        tool_source=None if source is None else str(source),
        resources=_resources(r, f"{path}.resources", section.get("resources")),
        timeout=r.integer(f"{path}.timeout", section.get("timeout")),
        extra=tuple((k, v) for k, v in section.items() if k in OTHER_TOOL_KEYS))


def _clients(r: Reader, raw: JsonObject) -> tuple[ToolConfig, ...]:
    found: list[ToolConfig | None] = []
    if "clientconfig" in raw:
        found.append(_tool(r, "clientconfig", raw["clientconfig"]))
    many = raw.get("clientconfigs")
    if many is not None and not isinstance(many, list):
        r.fail("clientconfigs", "must be a list of client configurations")
    for index, item in enumerate(many if isinstance(many, list) else []):
        found.append(_tool(r, f"clientconfigs[{index}]", item))
    clients = tuple(client for client in found if client is not None)
    if not found:
        r.fail("clientconfig", "missing: a definition needs a client (clientconfig)")
    return clients


def _command_words(command: Any) -> tuple[str, ...]:
    """An init command as the corpus runner sends it: a list as is, a string with quotes
    through shlex, another string split on blanks (as redis-py splits a command name)."""
    if isinstance(command, list):
        return tuple(str(word) for word in command)
    text = str(command)
    if '"' not in text:
        return tuple(text.split())
    if _ALL_QUOTED.fullmatch(text):  # '"XGROUP" "CREATE" …': 100,000 of them in one file
        return tuple(_QUOTED_WORD.findall(text))
    return tuple(shlex.split(text))


def _init_commands(r: Reader, value: Any) -> tuple[tuple[str, ...], ...]:
    if value is None:
        return ()
    out = []
    for index, command in enumerate(value if isinstance(value, list) else [value]):
        try:
            words = _command_words(command)
        except ValueError as exc:
            r.fail(f"dbconfig.init_commands[{index}]", f"cannot be split into words: {exc}")
            continue
        if words:
            out.append(words)
    return tuple(out)


def _config_parameters(r: Reader, value: Any) -> tuple[tuple[str, str], ...]:
    section = r.flatten("dbconfig.configuration-parameters", value)
    if section is None:
        return ()
    if not isinstance(section, dict):
        r.fail("dbconfig.configuration-parameters", "must be a map of name: value")
        return ()
    return tuple((str(key), _config_value(item)) for key, item in section.items())


def _rdb_checks(r: Reader, value: Any) -> RdbChecks | None:
    if value is None:
        return None
    section = r.mapping("dbconfig.rdb_checks", value, RDB_CHECK_KEYS)
    return RdbChecks(r.text("dbconfig.rdb_checks.operation", section.get("operation")),
                     r.integer("dbconfig.rdb_checks.keyspacelen", section.get("keyspacelen")),
                     r.integer("dbconfig.rdb_checks.value_size", section.get("value_size")),
                     r.texts("dbconfig.rdb_checks.sample_keys", section.get("sample_keys")))


def _dbconfig(r: Reader, value: Any) -> DbConfig:
    if value is None:
        return DbConfig()
    db = r.mapping("dbconfig", value, DB_KEYS)
    check = r.mapping("dbconfig.check", db.get("check") or {}, frozenset({"keyspacelen"}))
    preload = db.get("preload_tool")
    modules = r.flatten("dbconfig.module-configuration-parameters",
                        db.get("module-configuration-parameters"))
    low = ("low-throughput-benchmark", "skip_throughput_floor")
    return DbConfig(
        configuration_parameters=_config_parameters(r, db.get("configuration-parameters")),
        module_configuration_parameters=tuple(modules) if isinstance(modules, dict) else (),
        dataset=r.text("dbconfig.dataset", db.get("dataset")),
        dataset_name=r.text("dbconfig.dataset_name", db.get("dataset_name")),
        dataset_description=r.text("dbconfig.dataset_description",
                                   db.get("dataset_description")),
        dataset_load_timeout_secs=r.integer("dbconfig.dataset_load_timeout_secs",
                                            db.get("dataset_load_timeout_secs")),
        preload_tool=None if preload is None else _tool(r, "dbconfig.preload_tool", preload),
        init_commands=_init_commands(r, db.get("init_commands")),
        init_lua=r.texts("dbconfig.init_lua", db.get("init_lua")),
        check_keyspacelen=r.integer("dbconfig.check.keyspacelen", check.get("keyspacelen")),
        resources=_resources(r, "dbconfig.resources", db.get("resources")),
        preload_before_replica=r.flag("dbconfig.preload_before_replica",
                                      db.get("preload_before_replica")),
        wait_for_bgsave=r.flag("dbconfig.wait_for_bgsave", db.get("wait_for_bgsave")),
        low_throughput=any(r.flag(f"dbconfig.{key}", db.get(key)) for key in low),
        rdb_checks=_rdb_checks(r, db.get("rdb_checks")))


def _exporter(r: Reader, value: Any) -> Exporter | None:
    if value is None:
        return None
    section = r.mapping("exporter", value, frozenset({"redistimeseries"}), fatal_unknown=False)
    rts = r.mapping("exporter.redistimeseries", section.get("redistimeseries") or {},
                    EXPORTER_KEYS, fatal_unknown=False)
    return Exporter(r.texts("exporter.redistimeseries.metrics", rts.get("metrics")),
                    r.text("exporter.redistimeseries.timemetric", rts.get("timemetric")),
                    r.texts("exporter.redistimeseries.break_by", rts.get("break_by")))


def parse_kpis(r: Reader, value: Any) -> tuple[Kpi, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        r.fail("kpis", "must be a list of {mode: {path: bound}} maps")
        return ()
    kpis = []
    for index, item in enumerate(value):
        for mode, rules in (item.items() if isinstance(item, dict) else [("?", item)]):
            path = f"kpis[{index}].{mode}"
            if mode not in COMPARISONS:
                r.fail(path, f"unknown KPI mode (known: {', '.join(COMPARISONS)})")
            elif not isinstance(rules, dict):
                r.fail(path, "must map JSONPaths to bounds")
            else:
                kpis.extend(_kpi(r, path, mode, rules))
    return tuple(kpis)


def _kpi(r: Reader, path: str, mode: str, rules: JsonObject) -> list[Kpi]:
    out = []
    for metric, bound in rules.items():
        try:
            out.append(Kpi(mode, str(metric), float(bound)))
        except (TypeError, ValueError):
            r.fail(f"{path}.{metric}", f"bound must be a number, not {bound!r}")
    return out


def _version(r: Reader, raw: JsonObject) -> str | None:
    version = r.text("version", raw.get("version"))
    if version is None:
        r.fail("version", "missing; read by its shape", fatal=False)
    elif version not in FORMATS:
        r.fail("version", f"format {version} is not one kvperf reads "
                          f"({', '.join(FORMATS)})")
    return version


def _topologies(r: Reader, raw: JsonObject) -> tuple[str, ...]:
    names = r.texts("redis-topologies", raw.get("redis-topologies"))
    names = names or r.texts("setups", raw.get("setups"))
    return names or ("oss-standalone",)


def parse_definition(raw: Any, source: Path) -> Definition:
    """``raw`` (one YAML document) as a Definition; problems are in its ``issues``."""
    r = Reader()
    top = r.mapping("", raw, TOP_KEYS, fatal_unknown=False)
    name = r.text("name", top.get("name"))
    if not name:
        r.fail("name", "missing")
    metadata = top.get("metadata")
    definition = Definition(
        name=name or source.stem, source=source, version=_version(r, top),
        description=r.text("description", top.get("description")) or "",
        tested_commands=r.texts("tested-commands", top.get("tested-commands")),
        tested_groups=r.texts("tested-groups", top.get("tested-groups")),
        priority=r.integer("priority", top.get("priority")),
        topologies=_topologies(r, top),
        build_variants=r.texts("build-variants", top.get("build-variants")),
        required_capabilities=r.texts("required-runner-capabilities",
                                      top.get("required-runner-capabilities")),
        dbconfig=_dbconfig(r, top.get("dbconfig")), clients=_clients(r, top),
        exporter=_exporter(r, top.get("exporter")), kpis=parse_kpis(r, top.get("kpis")),
        timeout_seconds=r.integer("timeout_seconds", top.get("timeout_seconds")),
        metadata=tuple((str(k), str(v)) for k, v in metadata.items())
        if isinstance(metadata, dict) else ())
    return replace(definition, issues=tuple(r.issues))
