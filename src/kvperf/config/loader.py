"""Loading and validating the seed's JSON config format into BenchmarkSpec objects.

``parse_config`` is pure; ``load_config`` adds the file read. Every problem raises ConfigError
with one message naming the file, the object's index and the key.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kvperf.config.commands import ratio_command, resolve_command, weighted_command
from kvperf.config.faults import from_config as faults_from_config
from kvperf.config.faults import refusal as faults_refusal
from kvperf.config.model import BenchmarkSpec, ModuleSpec
from kvperf.config.profiling import profiling_sets
from kvperf.config.rate_sweep import from_config as rate_sweep_from_config
from kvperf.config.staircase import staircase_from_config, staircase_refusal
from kvperf.config.workload import (
    fixed_size,
    parse_key_distribution,
    parse_ttl,
    parse_value_content,
    parse_value_sizes,
    size_text,
)
from kvperf.core.cpus import parse_cpu_list
from kvperf.core.errors import ConfigError
from kvperf.core.jsontypes import JsonObject
from kvperf.core.kinds import Concurrency

# Keys of the seed format that belong to its search-module (FTS) runner, not yet run by kvperf.
SEED_FTS_KEYS = frozenset(
    {"test_groups", "test_name", "seed", "cpu_allocation", "cluster_ports", "bind_ip", "port",
     "monitoring", "dataset_generation", "query_generation",
     "module_startup_args", "custom-server-config-file"}
)
# Server flags kvperf sets itself; a custom config must not override them.
RESERVED_SERVER_CONFIGS = frozenset(
    {"port", "tls-port", "bind", "cluster-enabled", "cluster-config-file", "dir", "logfile",
     "daemonize", "tls-cert-file", "tls-key-file", "tls-ca-cert-file", "io-threads", "save",
     "appendonly", "loadmodule"}
)


class _Field:
    """How one config key is read: the parser and the BenchmarkSpec attribute it fills."""

    def __init__(self, attr: str, parse: Callable[[str, Any, set[int]], Any]) -> None:
        self.attr = attr
        self.parse = parse


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _as_list(key: str, value: Any) -> list[Any]:
    if isinstance(value, list):
        if not value:
            raise ValueError(f"{key!r} is an empty list; give at least one value")
        return value
    return [value]


def _int(key: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{key!r} must be an integer, got {_type_name(value)} {value!r}")
    assert isinstance(value, int)
    if value < minimum:
        rule = "positive" if minimum == 1 else f"at least {minimum}"
        raise ValueError(f"{key!r} must be {rule}, got {value}")
    return value


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "no", "true", "false"):
        return value.strip().lower() in ("yes", "true")
    raise ValueError(f"{key!r} must be true/false or \"yes\"/\"no\", got {value!r}")


def _ints(minimum: int) -> Callable[[str, Any, set[int]], tuple[int, ...]]:
    return lambda key, value, _cpus: tuple(_int(key, v, minimum) for v in _as_list(key, value))


def _bools(key: str, value: Any, _cpus: set[int]) -> tuple[bool, ...]:
    return tuple(dict.fromkeys(_bool(key, v) for v in _as_list(key, value)))


def _one_int(key: str, value: Any, _cpus: set[int]) -> int:
    return _int(key, value, 1)


def _cpu_range(key: str, value: Any, cpus: set[int]) -> tuple[int, ...]:
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise ValueError(f"{key!r} must be a CPU list string like \"0-3\" or \"0,2\"")
    parsed = parse_cpu_list(str(value))
    outside = sorted(set(parsed) - cpus)
    if outside:
        have = ",".join(map(str, sorted(cpus)))
        raise ValueError(f"{key!r} names CPU {outside[0]}, but this machine has CPUs {have}")
    return parsed


def _commands(key: str, value: Any, _cpus: set[int]) -> tuple[Any, ...]:
    out = []
    for item in _as_list(key, value):
        if not isinstance(item, str):
            raise ValueError(f"{key!r} entries must be strings, got {_type_name(item)} {item!r}")
        out.append(resolve_command(item))
    return tuple(dict.fromkeys(out))


def _ratios(key: str, value: Any, _cpus: set[int]) -> tuple[Any, ...]:
    out = []
    for item in _as_list(key, value):
        if not isinstance(item, str):
            raise ValueError(f"{key!r} entries must be strings like \"1:10\" (SET:GET), got "
                             f"{_type_name(item)} {item!r}")
        out.append(ratio_command(item))
    return tuple(out)


def _command_files(key: str, value: Any, _cpus: set[int]) -> tuple[Any, ...]:
    """Each path a command file (relative to the current directory): its weighted
    commands as one command of the object (config/commands.py ``weighted_command``)."""
    out = []
    for item in _as_list(key, value):
        if not isinstance(item, str):
            raise ValueError(f"{key!r} entries must be paths, got {_type_name(item)} {item!r}")
        try:
            text = Path(item).read_text()
        except OSError as exc:
            raise ValueError(f"{key!r}: cannot read {item!r}: {exc.strerror}") from None
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]  # another text, another series
        out.append(weighted_command(text, f"FILE {os.path.basename(item)} {digest}"))
    return tuple(out)


def _command_mixes(key: str, value: Any, _cpus: set[int]) -> tuple[Any, ...]:
    """A command file's lines given inline: a list of ``"WEIGHT COMMAND ARGS…"`` strings is
    one mix, a list of such lists several (a sweep); each one command of the object, named
    ``MIX <8 hex of its lines' sha256>``."""
    if not isinstance(value, list) or not value:
        raise ValueError(f"{key!r} must be a list of lines like \"3 GET __key__\" (one mix) "
                         f"or a list of such lists, got {_type_name(value)} {value!r}")
    mixes = value if all(isinstance(v, list) for v in value) else [value]
    out = []
    for lines in mixes:
        if not lines or not all(isinstance(line, str) for line in lines):
            raise ValueError(f"{key!r}: a mix must be a non-empty list of lines like "
                             f"\"3 GET __key__\", got {lines!r}")
        text = "\n".join(lines)
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]  # other lines, another series
        out.append(weighted_command(text, f"MIX {digest}"))
    return tuple(out)


def _scalar_str(key: str, name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str | int | float):
        return str(value)
    raise ValueError(f"{key!r}: value of {name!r} must be a string or number")


def _settings(key: str, value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise ValueError(f"{key!r} must be an object of config names to values")
    return tuple((str(k), _scalar_str(key, str(k), v)) for k, v in value.items())


def _config_sets(key: str, value: Any, _cpus: set[int]) -> tuple[Any, ...]:
    return tuple(_settings(key, v) for v in _as_list(key, value))


def _custom_configs(key: str, value: Any, _cpus: set[int]) -> tuple[tuple[str, str], ...]:
    settings = _settings(key, value)
    for name, _ in settings:
        if name.lower().lstrip("-") in RESERVED_SERVER_CONFIGS:
            raise ValueError(f"{key!r} may not set {name!r}: kvperf sets it itself")
    return settings


def _gates(key: str, value: Any, _cpus: set[int]) -> tuple[str, ...]:
    texts = _as_list(key, value)
    for text in texts:
        if not isinstance(text, str):
            raise ValueError(f"{key!r} entries must be strings like \"SET.rps>=100000\", got "
                             f"{_type_name(text)} {text!r}")
    return tuple(texts)


def _module(key: str, value: Any) -> ModuleSpec:
    if isinstance(value, str):
        return ModuleSpec(os.path.abspath(value))
    if not isinstance(value, dict) or not isinstance(value.get("path"), str):
        raise ValueError(f"{key!r} entries must be objects with a \"path\" string")
    unknown = set(value) - {"path", "startup_args"}
    if unknown:
        raise ValueError(f"{key!r} entry has unknown key {sorted(unknown)[0]!r}")
    args = value.get("startup_args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"{key!r}: \"startup_args\" must be a list of strings")
    # Relative to the current directory, resolved here: the server runs in its own directory.
    return ModuleSpec(os.path.abspath(value["path"]), tuple(args))


def _modules(key: str, value: Any, _cpus: set[int]) -> tuple[ModuleSpec, ...]:
    return tuple(_module(key, v) for v in _as_list(key, value))


READ_FROM_REPLICAS = ("no", "yes", "all")


def _read_from_replicas(key: str, value: Any, _cpus: set[int]) -> tuple[str, ...]:
    out = []
    for item in _as_list(key, value):
        if item not in READ_FROM_REPLICAS:
            raise ValueError(f"{key!r}: {item!r} is not one of {', '.join(READ_FROM_REPLICAS)} "
                             "(valkey-benchmark's --rfr: primaries, replicas, both)")
        out.append(item)
    return tuple(dict.fromkeys(out))


def _concurrency(key: str, value: Any, _cpus: set[int]) -> tuple[Concurrency, ...]:
    out = []
    for item in _as_list(key, value):
        try:
            out.append(Concurrency(item))
        except ValueError:
            known = ", ".join(c.value for c in Concurrency)
            raise ValueError(f"{key!r}: {item!r} is not a concurrency model ({known})") from None
    return tuple(dict.fromkeys(out))


def _each(parse: Callable[[str, Any], Any]) -> Callable[[str, Any, set[int]], tuple[Any, ...]]:
    """A sweepable list of values each checked by ``parse`` (duplicates dropped)."""
    return lambda key, value, _cpus: tuple(dict.fromkeys(parse(key, v)
                                                         for v in _as_list(key, value)))


FIELDS: dict[str, _Field] = {
    "requests": _Field("requests", _ints(1)),
    "duration": _Field("duration", _ints(1)),
    "keyspacelen": _Field("keyspacelen", _ints(1)),
    "data_sizes": _Field("data_sizes", _ints(1)),
    "pipelines": _Field("pipelines", _ints(1)),
    "clients": _Field("clients", _ints(1)),
    "commands": _Field("commands", _commands),
    "ratio": _Field("ratios", _ratios),
    "command_files": _Field("command_files", _command_files),
    "command_mix": _Field("command_mixes", _command_mixes),
    "cluster_mode": _Field("cluster_mode", _bools),
    "tls_mode": _Field("tls_mode", _bools),
    "warmup": _Field("warmup", _ints(0)),
    "io-threads": _Field("io_threads", _ints(1)),
    "benchmark-threads": _Field("benchmark_threads", _ints(1)),
    "server_cpu_range": _Field("server_cpus", _cpu_range),
    "client_cpu_range": _Field("client_cpus", _cpu_range),
    "config_sets": _Field("config_sets", _config_sets),
    "custom-server-configs": _Field("custom_server_configs", _custom_configs),
    "modules": _Field("modules", _modules),
    "cluster_nodes": _Field("cluster_nodes", _one_int),
    "replicas": _Field("replicas", lambda key, value, _cpus: _int(key, value, 0)),
    # issue 24's name for a cluster's: the same per-primary count (give one of the two)
    "cluster_replicas": _Field("replicas", lambda key, value, _cpus: _int(key, value, 0)),
    "read_from_replicas": _Field("read_from_replicas", _read_from_replicas),
    "profiling_sets": _Field("profiling", lambda key, value, _cpus: profiling_sets(key, value)),
    "gates": _Field("gates", _gates),
    "concurrency": _Field("concurrency", _concurrency),
    "rate_sweep": _Field("rate_sweep",
                         lambda key, value, _cpus: rate_sweep_from_config(key, value)),
    "faults": _Field("faults", lambda key, value, _cpus: faults_from_config(key, value)),
    "staircase": _Field("staircase",
                        lambda key, value, _cpus: staircase_from_config(key, value)),
    "key_distribution": _Field("key_distribution", _each(parse_key_distribution)),
    "value_sizes": _Field("value_sizes", _each(parse_value_sizes)),
    "value_content": _Field("value_content", _each(parse_value_content)),
    "ttl": _Field("ttl", _each(parse_ttl)),
}


def _unknown_key_message(key: str) -> str:
    if key in SEED_FTS_KEYS:
        return (f"key {key!r} belongs to the seed's module-test format: a config object "
                "with 'test_groups' at the top runs with `kvperf run --module-config FILE` "
                "(or --config FILE)")
    hint = difflib.get_close_matches(key, FIELDS, n=1, cutoff=0.6)
    suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
    return f"unknown key {key!r}{suggestion}; known keys: {', '.join(FIELDS)}"


def _check_faults(values: JsonObject) -> None:
    """A fault schedule the topology can serve, for every cluster_mode of the object."""
    faults = values.get("faults", ())
    if not faults:
        return
    duration = min(values["duration"]) if "duration" in values else None
    for cluster in values.get("cluster_mode", (False,)):
        problem = faults_refusal(faults, cluster=cluster, replicas=values.get("replicas", 0),
                                 duration=duration)
        if problem:
            raise ValueError(problem)


def parse_object(index: int, obj: Any, cpus: set[int]) -> BenchmarkSpec:
    """Validate one config object into a BenchmarkSpec; raise ValueError naming the key."""
    if not isinstance(obj, dict):
        raise ValueError(f"must be an object, got {_type_name(obj)}")
    values: JsonObject = {}
    if "replicas" in obj and "cluster_replicas" in obj:
        raise ValueError("give one of 'replicas' and 'cluster_replicas' (the same count)")
    for key, raw in obj.items():
        if key not in FIELDS:
            raise ValueError(_unknown_key_message(key))
        values[FIELDS[key].attr] = FIELDS[key].parse(key, raw, cpus)
    ratios = (*values.pop("ratios", ()), *values.pop("command_files", ()),
              *values.pop("command_mixes", ()))
    if "commands" not in values and not ratios:
        raise ValueError("missing key 'commands' (e.g. \"commands\": [\"SET\", \"GET\"]) "
                         "or 'ratio' (e.g. \"ratio\": \"1:10\") or 'command_files' or "
                         "'command_mix'")
    values["commands"] = tuple(dict.fromkeys((*values.get("commands", ()), *ratios)))
    if ("requests" in values) == ("duration" in values):
        raise ValueError("give exactly one of 'requests' or 'duration' "
                         f"({'both' if 'requests' in values else 'neither'} given)")
    _check_faults(values)
    _check_overlap(values)
    _check_replica_reads(values)
    _check_staircase(values)
    _check_values(values)
    return BenchmarkSpec(index=index, **values)


def _check_values(values: JsonObject) -> None:
    """Value sizes given once (``data_sizes`` or ``value_sizes``); TTLs only where a SET
    takes them."""
    if "value_sizes" in values and "data_sizes" in values:
        raise ValueError("give one of 'data_sizes' and 'value_sizes' (a fixed size in "
                         "'value_sizes' is the same as in 'data_sizes')")
    ttls = [t for t in values.get("ttl", ()) if t != "none"]
    sets = any("set" in c.calls_per_sequence for c in values["commands"])
    if ttls and not sets:
        raise ValueError(f"'ttl' {ttls[0]!r} is set with EX on SET commands, and no command "
                         "of this object is a SET")
    drawn = [size_text(b) for b in values.get("value_sizes", ()) if fixed_size(b) is None]
    drawn += [t for t in ttls if "-" in t]
    if drawn and (True in values.get("cluster_mode", ()) or values.get("faults")):
        raise ValueError(f"{drawn[0]!r}: sizes or TTLs drawn per request are for a "
                         "standalone load without faults (kvload finds each request of a "
                         "batch by its length there: drop cluster_mode or faults)")


def _check_staircase(values: JsonObject) -> None:
    """A ramp every clients value of the object can climb, over a duration, and not in a
    rate sweep (whose points are open loops at fixed connections)."""
    ramp = values.get("staircase")
    if ramp is None:
        return
    if "rate_sweep" in values:
        raise ValueError("'staircase' cannot be combined with 'rate_sweep' (a sweep's points "
                         "run at fixed connections)")
    if values.get("faults"):
        raise ValueError("'staircase' cannot be combined with 'faults' (kvload's reconnecting "
                         "load runs at fixed connections)")
    problem = staircase_refusal(ramp, values.get("clients", (50,)), "duration" in values)
    if problem:
        raise ValueError(problem)


def _check_replica_reads(values: JsonObject) -> None:
    """Reads from replicas need replicas, and commands that are reads or writes alone (a
    sequence goes to one node: a mix of both could not be split)."""
    modes = [m for m in values.get("read_from_replicas", ()) if m != "no"]
    if not modes:
        return
    if not values.get("replicas"):
        raise ValueError(f"'read_from_replicas' {modes[0]!r} needs 'replicas' of at least 1")
    for command in values["commands"]:
        if command.mixes_reads_and_writes:
            raise ValueError(f"'read_from_replicas' {modes[0]!r}: {command.name!r} mixes reads "
                             "and writes in one sequence, which goes to one node (run the "
                             "reads as a command of their own)")


def _check_overlap(values: JsonObject) -> None:
    server, client = values.get("server_cpus"), values.get("client_cpus")
    if server and client and set(server) & set(client):
        raise ValueError("'server_cpu_range' and 'client_cpu_range' overlap; pin them apart")


def parse_config(data: Any, cpus: set[int], source: str = "config") -> list[BenchmarkSpec]:
    """Validate a decoded config (a list of objects, or one object) into specs."""
    objects = data if isinstance(data, list) else [data]
    if not objects:
        raise ConfigError(f"{source}: the config list is empty; add at least one object")
    specs = []
    for index, obj in enumerate(objects):
        try:
            specs.append(parse_object(index, obj, cpus))
        except ValueError as exc:
            raise ConfigError(f"{source}: object {index}: {exc}") from None
    return specs


def load_config(path: Path, cpus: set[int]) -> list[BenchmarkSpec]:
    """Read and validate a JSON config file."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(f"config file {str(path)!r} not found") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:  # found by tests/unit/fuzz
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: "
                          f"{exc.object[exc.start:exc.start + 1]!r})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    return parse_config(data, cpus, source=str(path))


def default_config_path() -> Path:
    """The built-in default config (a small SET/GET matrix)."""
    return Path(__file__).parent / "defaults" / "default.json"
