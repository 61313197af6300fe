"""Reading definition files and folders: the package's only file reader.

A path is a definition file or a folder of them (``*.yml`` / ``*.yaml``, not recursive, as
the corpus runner globs its test-suites folder). A folder's ``defaults.yml`` is not a
definition: it is merged into every definition of that folder (``defaults.py``), also when
one of its files is given alone. Bad input — a missing path, an empty folder, YAML that does
not parse, a file that is not a map, a malformed defaults file — raises ConfigError (exit 2)
naming the file. A definition that parses but cannot run is loaded with its issues; the
planner refuses it with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from kvperf.core.errors import ConfigError
from kvperf.definitions.defaults import DEFAULTS_NAME, Defaults, merge, parse_defaults
from kvperf.definitions.model import Definition, Issue
from kvperf.definitions.parse import parse_definition
from kvperf.definitions.topology import BUILTIN, Topology

SUFFIXES = (".yml", ".yaml")
# libyaml's loader when PyYAML has it: ~20× faster over a corpus of hundreds of files.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Loaded:
    definitions: tuple[Definition, ...]
    topologies: dict[str, Topology]
    defaults_files: tuple[Path, ...] = ()


def read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read ({exc})") from None
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(p for p in path.iterdir()
                       if p.suffix in SUFFIXES and p.name != DEFAULTS_NAME and p.is_file())
        if not found:
            raise ConfigError(f"{path}: no definition files (*.yml) in this folder")
        return found
    if path.is_file():
        if path.name == DEFAULTS_NAME:
            raise ConfigError(f"{path}: a defaults file, not a definition (give its folder)")
        return [path]
    raise ConfigError(f"{path}: no such file or directory")


def _defaults(folder: Path, cache: dict[Path, Defaults | None]) -> Defaults | None:
    if folder not in cache:
        path = folder / DEFAULTS_NAME
        cache[folder] = parse_defaults(read_yaml(path), str(path)) if path.is_file() else None
    return cache[folder]


def _definition(path: Path, defaults: Defaults | None) -> Definition:
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: not a benchmark definition (expected a YAML map, found "
                          f"{type(raw).__name__})")
    definition = parse_definition(raw, path)
    return definition if defaults is None else merge(definition, defaults)


def _mark_duplicates(definitions: list[Definition]) -> list[Definition]:
    first: dict[str, Path] = {}
    out = []
    for definition in definitions:
        if definition.name in first:
            issue = Issue("name", f"{definition.name!r} is also the name of "
                                  f"{first[definition.name]}")
            definition = replace(definition, issues=(*definition.issues, issue))
        first.setdefault(definition.name, definition.source)
        out.append(definition)
    return out


def load(paths: Iterable[Path]) -> Loaded:
    """Every definition under ``paths`` (in order, each file once) and the topology table."""
    cache: dict[Path, Defaults | None] = {}
    seen: set[Path] = set()
    definitions = []
    for given in paths:
        for path in _files(Path(given)):
            resolved = path.resolve()
            if resolved not in seen:
                seen.add(resolved)
                definitions.append(_definition(path, _defaults(path.parent, cache)))
    topologies = dict(BUILTIN)
    used = tuple(folder / DEFAULTS_NAME for folder, d in cache.items() if d is not None)
    for defaults in (d for d in cache.values() if d is not None):
        topologies.update((t.name, t) for t in defaults.setups)
    return Loaded(tuple(_mark_duplicates(definitions)), topologies, used)
