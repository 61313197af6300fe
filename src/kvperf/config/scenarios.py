"""The seed's module-test format (``test_groups`` → ``scenarios``) as typed, validated models.

``parse_module_config`` is pure: a decoded JSON object → ``ModuleConfig``, or ValueError naming
the key path (``test_groups[0].scenarios[1].maxdocs``). ``load_module_config`` adds the file
read and turns every problem into one ConfigError naming the file. ``profiling_sets`` are
kept as the seed writes them and checked against every scenario here (a scenario's
``profiling`` overrides its set's values, config/profiling.scenario_profile); the module
runner repeats the selected scenarios once per set.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from kvperf.config.commands import DATA, KEY, RAND
from kvperf.config.datasets import GenerationSpec, parse_generation
from kvperf.config.model import ProfileSettings
from kvperf.config.profiling import scenario_profile
from kvperf.core.cpus import parse_cpu_list
from kvperf.core.errors import ConfigError
from kvperf.core.jsontypes import JsonObject

FIELD = re.compile(r"__field:([^_\s][^\s]*?)__")
_PLACEHOLDER = re.compile(r"__[A-Za-z0-9_]+?__")
KEY_WORD = "key:__rand_int__"  # what kvperf's ``__key__`` becomes (a -r keyspace key)


class ScenarioType(StrEnum):
    WRITE = "write"
    READ = "read"
    INGESTION = "ingestion"
    SEARCH = "search"


class ClusterExecution(StrEnum):
    SINGLE = "single"
    PARALLEL = "parallel"


@dataclass(frozen=True)
class Scenario:
    """One scenario of a group: what to send, from which rows, for how long."""

    id: str
    type: ScenarioType
    command: str  # as written (``__field:NAME__``, ``__rand_int__``, ``__key__``, ``__data__``)
    setup_commands: tuple[str, ...] = ()
    flush_before: bool = False
    dataset: str | None = None  # a CSV path (relative to the config file) or a generated name
    maxdocs: int | None = None
    sequential: bool = False
    clients: int = 50
    duration: int | None = None
    warmup: int = 0
    requests: int | None = None
    pipeline: int = 1
    keyspacelen: int | None = None
    cluster_execution: ClusterExecution = ClusterExecution.SINGLE
    description: str | None = None
    profiling: JsonObject | None = None  # overrides of its profiling set's values

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(FIELD.findall(self.command)))

    @property
    def first_word(self) -> str:
        return self.command.split()[0].upper()

    def kvload_command(self) -> str:
        """The command line as kvload reads it: ``__key__`` → ``key:__rand_int__``."""
        return self.command.replace(KEY, KEY_WORD)


@dataclass(frozen=True)
class TestGroup:
    group: str
    scenarios: tuple[Scenario, ...]
    description: str | None = None


@dataclass(frozen=True)
class ModuleConfig:
    """A whole module-test config file."""

    groups: tuple[TestGroup, ...]
    source: Path
    cluster_mode: bool = False
    tls_mode: bool = False
    server_cpus: tuple[int, ...] | None = None
    client_cpus: tuple[int, ...] | None = None
    config_sets: tuple[tuple[tuple[str, str], ...], ...] = ((),)
    profiling_sets: tuple[JsonObject, ...] = ()  # as written; () = one unprofiled pass
    generation: tuple[GenerationSpec, ...] = ()
    seed: int = 1
    test_name: str | None = None
    module_args: tuple[str, ...] = ()

    @property
    def base_dir(self) -> Path:
        return self.source.parent

    @property
    def passes(self) -> int:
        """How often the selected scenarios run: once per profiling set (at least once)."""
        return max(1, len(self.profiling_sets))

    def profile(self, index: int, scenario: Scenario) -> ProfileSettings | None:
        """Pass ``index``'s settings for ``scenario`` (None: not profiled)."""
        if not self.profiling_sets:
            return None
        return scenario_profile(f"profiling_sets[{index}]", self.profiling_sets[index],
                                scenario.profiling, str(scenario.type),
                                tuple(str(t) for t in ScenarioType))


_REFUSED = {
    "cpu_allocation": "use server_cpu_range / client_cpu_range",
    "cluster_ports": "kvperf picks free ports itself",
    "bind_ip": "kvperf's servers listen on loopback",
    "port": "kvperf picks a free port itself",
    "monitoring": "kvperf records server CPU and INFO counters in every row",
    "custom-server-config-file": "put the settings in config_sets",
}
_TOP = ("test_groups", "cluster_mode", "tls_mode", "server_cpu_range", "client_cpu_range",
        "config_sets", "profiling_sets", "dataset_generation", "query_generation", "seed",
        "test_name", "module_startup_args", "description")
_SCENARIO = ("id", "type", "command", "setup_commands", "flush_before", "dataset", "maxdocs",
             "sequential", "clients", "duration", "warmup", "requests", "pipeline",
             "keyspacelen", "cluster_execution", "description", "profiling")


def is_module_config(data: Any) -> bool:
    """Whether a decoded config is in the module-test format (an object with test_groups)."""
    return isinstance(data, dict) and "test_groups" in data


def _check_keys(path: str, obj: JsonObject, known: tuple[str, ...]) -> None:
    for key in obj:
        if key in _REFUSED and path == "":
            raise ValueError(f"key {key!r} is not used by kvperf's module runner: "
                             f"{_REFUSED[key]}")
        if key not in known:
            where = f"{path}: " if path else ""
            raise ValueError(f"{where}unknown key {key!r}; known keys: {', '.join(known)}")


def _int(path: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{path} must be an integer ≥ {minimum}, got {value!r}")
    return value


def _bool(path: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{path} must be true or false, got {value!r}")
    return value


def _str(path: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{path} must be a non-empty string, got {value!r}")
    return value


def _strs(path: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{path} must be a list of strings")
    return tuple(_str(f"{path}[{i}]", v) for i, v in enumerate(value))


def _check_command(path: str, command: str) -> None:
    words = command.split()
    if not words:
        raise ValueError(f"{path} is empty")
    known = {RAND, DATA, KEY}
    for placeholder in _PLACEHOLDER.findall(FIELD.sub("", command)):
        if placeholder not in known:
            raise ValueError(f"{path}: unknown placeholder {placeholder!r} (known: "
                             f"__field:NAME__, {', '.join(sorted(known))})")


_SCENARIO_INTS = {"maxdocs": 1, "clients": 1, "duration": 1, "warmup": 0, "requests": 1,
                  "pipeline": 1, "keyspacelen": 1}


def _scenario_values(path: str, raw: JsonObject) -> JsonObject:
    values: JsonObject = {}
    for key, value in raw.items():
        where = f"{path}.{key}"
        if key in _SCENARIO_INTS:
            values[key] = _int(where, value, _SCENARIO_INTS[key])
        elif key in ("flush_before", "sequential"):
            values[key] = _bool(where, value)
        elif key == "setup_commands":
            values[key] = _strs(where, value)
        elif key == "type":
            values[key] = _choice(where, value, ScenarioType)
        elif key == "cluster_execution":
            values[key] = _choice(where, value, ClusterExecution)
        elif key == "profiling":
            values[key] = _object(where, value)
        else:
            values[key] = _str(where, value)
    return values


def _choice(path: str, value: Any, kind: type[StrEnum]) -> Any:
    options = [m.value for m in kind]
    if value not in options:
        raise ValueError(f"{path} must be one of {', '.join(options)}, got {value!r}")
    return kind(value)


def _object(path: str, value: Any) -> JsonObject:
    if not isinstance(value, dict):
        raise ValueError(f"{path} must be an object")
    return value


def parse_scenario(path: str, raw: Any, position: int) -> Scenario:
    """One scenario object; ``id`` defaults to its type (then its position)."""
    obj = _object(path, raw)
    _check_keys(path, obj, _SCENARIO)
    for required in ("type", "command"):
        if required not in obj:
            raise ValueError(f"{path}: missing key {required!r}")
    values = _scenario_values(path, obj)
    _check_command(f"{path}.command", values["command"])
    values.setdefault("id", str(values["type"]))
    values.setdefault("sequential", values["type"] in (ScenarioType.INGESTION,
                                                       ScenarioType.WRITE))
    scenario = Scenario(**values)
    if scenario.fields and scenario.dataset is None:
        raise ValueError(f"{path}: the command uses __field:{scenario.fields[0]}__ but the "
                         "scenario names no 'dataset'")
    if scenario.duration is None and scenario.requests is None and scenario.dataset is None:
        raise ValueError(f"{path}: give 'duration' (seconds), 'requests', or a 'dataset' "
                         "(each row once, up to 'maxdocs')")
    if scenario.duration is not None and scenario.requests is not None:
        raise ValueError(f"{path}: give 'duration' or 'requests', not both")
    return scenario


def _group(path: str, raw: Any) -> TestGroup:
    obj = _object(path, raw)
    _check_keys(path, obj, ("group", "scenarios", "description"))
    if "group" not in obj or "scenarios" not in obj:
        raise ValueError(f"{path}: needs 'group' (its number or name) and 'scenarios'")
    name = obj["group"]
    if isinstance(name, bool) or not isinstance(name, int | str) or str(name).strip() == "":
        raise ValueError(f"{path}.group must be a number or a name, got {name!r}")
    items = obj["scenarios"]
    if not isinstance(items, list) or not items:
        raise ValueError(f"{path}.scenarios must be a non-empty list")
    scenarios = tuple(parse_scenario(f"{path}.scenarios[{i}]", s, i)
                      for i, s in enumerate(items))
    ids = [s.id for s in scenarios]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise ValueError(f"{path}: scenario id {duplicate!r} appears twice (give each an 'id')")
    return TestGroup(str(name), scenarios, obj.get("description"))


def _settings(path: str, value: Any) -> tuple[tuple[str, str], ...]:
    obj = _object(path, value)
    out = []
    for name, v in obj.items():
        if isinstance(v, bool):
            v = "yes" if v else "no"
        if not isinstance(v, str | int | float):
            raise ValueError(f"{path}.{name} must be a string or number")
        out.append((str(name), str(v)))
    return tuple(out)


def _cpus(path: str, value: Any) -> tuple[int, ...]:
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise ValueError(f"{path} must be a CPU list like \"0-3\"")
    return parse_cpu_list(str(value))


def _profiling_sets(path: str, value: Any) -> tuple[JsonObject, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{path} must be a non-empty list of objects")
    return tuple(_object(f"{path}[{i}]", item) for i, item in enumerate(value))


def _check_profiles(config: ModuleConfig) -> None:
    """Every set with every scenario's override makes valid settings (ValueError naming
    the set, and the scenario when its ``profiling`` is part of the mistake)."""
    for index in range(len(config.profiling_sets)):
        for group in config.groups:
            for s in group.scenarios:
                try:
                    config.profile(index, s)
                except ValueError as exc:
                    if s.profiling is None:
                        raise
                    raise ValueError(f"group {group.group} scenario {s.id} (its profiling "
                                     f"over that set): {exc}") from None


def _top_values(data: JsonObject) -> JsonObject:
    values: JsonObject = {}
    for key, value in data.items():
        if key in ("cluster_mode", "tls_mode"):
            values[key] = _bool(key, value)
        elif key in ("server_cpu_range", "client_cpu_range"):
            values[key.split("_")[0] + "_cpus"] = _cpus(key, value)
        elif key == "config_sets":
            if not isinstance(value, list) or not value:
                raise ValueError("config_sets must be a non-empty list of objects")
            values[key] = tuple(_settings(f"config_sets[{i}]", v) for i, v in enumerate(value))
        elif key == "profiling_sets":
            values[key] = _profiling_sets(key, value)
        elif key == "seed":
            values[key] = _int(key, value, 0)
        elif key == "test_name":
            values[key] = _str(key, value)
        elif key == "module_startup_args":
            values["module_args"] = _strs(key, value)
    return values


def parse_module_config(data: Any, source: Path) -> ModuleConfig:
    """Validate a decoded module-test config (ValueError naming the key path)."""
    if not is_module_config(data):
        raise ValueError("a module-test config is an object with 'test_groups'")
    _check_keys("", data, _TOP)
    groups_raw = data["test_groups"]
    if not isinstance(groups_raw, list) or not groups_raw:
        raise ValueError("test_groups must be a non-empty list")
    groups = tuple(_group(f"test_groups[{i}]", g) for i, g in enumerate(groups_raw))
    names = [g.group for g in groups]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise ValueError(f"test_groups: group {duplicate!r} appears twice")
    values = _top_values(data)
    generation = parse_generation(data.get("dataset_generation"), "dataset_generation")
    generation += parse_generation(data.get("query_generation"), "query_generation")
    config = ModuleConfig(groups, source, generation=generation, **values)
    _check_datasets(config)
    _check_profiles(config)
    return config


def _check_datasets(config: ModuleConfig) -> None:
    generated = {g.name for g in config.generation}
    for group in config.groups:
        for s in group.scenarios:
            if s.dataset is None or s.dataset in generated:
                continue
            if s.dataset.lower().endswith(".xml"):
                raise ValueError(
                    f"group {group.group} scenario {s.id}: dataset {s.dataset!r} is an XML "
                    "file, which kvperf does not read; give a CSV (header line: column names) "
                    "or generate it with dataset_generation (written as CSV)")
            if not (config.base_dir / s.dataset).is_file():
                raise ValueError(
                    f"group {group.group} scenario {s.id}: dataset {s.dataset!r} is neither "
                    f"a file (relative to {config.base_dir}) nor generated by "
                    f"dataset_generation / query_generation"
                    + (f" (those make: {', '.join(sorted(generated))})" if generated else ""))


def detect_module_config(path: Path) -> bool:
    """Whether the JSON file at ``path`` is a module-test config (unreadable → False: the
    ordinary loader reports it)."""
    try:
        return is_module_config(json.loads(path.read_text()))
    except (OSError, ValueError):
        return False


def load_module_config(path: Path) -> ModuleConfig:
    """Read and validate a module-test config file (ConfigError naming the file)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {str(path)!r} not found") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno}") from None
    try:
        return parse_module_config(data, path.resolve())
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def select(config: ModuleConfig, groups: tuple[str, ...], scenarios: tuple[str, ...]
           ) -> tuple[tuple[TestGroup, tuple[Scenario, ...]], ...]:
    """The groups and scenarios a run selects (``--groups 1,2 --scenarios a,b``); an unknown
    name → ConfigError listing what exists. A group keeps its scenarios' order."""
    have = [g.group for g in config.groups]
    unknown = [g for g in groups if g not in have]
    if unknown:
        raise ConfigError(f"--groups: no group {unknown[0]!r} in {config.source.name} "
                          f"(groups: {', '.join(have)})")
    chosen = [g for g in config.groups if not groups or g.group in groups]
    ids = {s.id for g in chosen for s in g.scenarios}
    missing = [s for s in scenarios if s not in ids]
    if missing:
        raise ConfigError(f"--scenarios: no scenario {missing[0]!r} in the selected group(s) "
                          f"(scenarios: {', '.join(sorted(ids))})")
    out = []
    for group in chosen:
        kept = tuple(s for s in group.scenarios if not scenarios or s.id in scenarios)
        if kept:
            out.append((group, kept))
    return tuple(out)


Selected = tuple[tuple[TestGroup, tuple[Scenario, ...]], ...]
