"""kvload memtier's option table, read from ``kvload memtier --options-json``.

The one table of memtier_benchmark's options is kvload's
(crates/kvload/src/frontend/memtier/table.rs): each option's long name, short letter, whether
it takes a value, and kvload's reason when it refuses the option or one of its values. kvperf
reads it from the kvload it would run (on PATH, else beside kvperf: ``core.installed``), once
per process; ``from_json`` is pure.

Format ``kvload-memtier-options``:
  version 1: ``{"format", "version", "options": [{"name", "short", "takes_value",
  "value_name", "help", "section", "supported", "refused", "refused_values": [{"value",
  "reason"}]}]}`` (kvperf reads name, short, takes_value, refused and refused_values).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvperf.core import proc
from kvperf.core.errors import CommandError, DriverError
from kvperf.core.installed import find_program

FORMAT = "kvload-memtier-options"
VERSION = 1
_REBUILD = "rerun scripts/install.sh to rebuild kvload"


@dataclass(frozen=True)
class Spec:
    """One memtier option as kvload memtier treats it."""

    name: str  # the long name
    short: str | None
    takes_value: bool
    refused: str = ""  # why kvload refuses the option; "" when it supports it
    refused_values: tuple[tuple[str, str], ...] = ()  # (value, why) kvload refuses

    def refused_value(self, value: str) -> str:
        """Why kvload refuses this value of the option; "" when it takes it."""
        return next((why for refused, why in self.refused_values if refused == value), "")


@dataclass(frozen=True)
class Table:
    """Every option kvload memtier knows, in memtier's order."""

    options: tuple[Spec, ...]

    @functools.cached_property
    def by_long(self) -> dict[str, Spec]:
        return {spec.name: spec for spec in self.options}

    @functools.cached_property
    def by_short(self) -> dict[str, Spec]:
        return {spec.short: spec for spec in self.options if spec.short}


def _spec(entry: dict[str, Any]) -> Spec:
    return Spec(str(entry["name"]), entry["short"] or None, bool(entry["takes_value"]),
                entry["refused"] or "",
                tuple((str(v["value"]), str(v["reason"])) for v in entry["refused_values"]))


def from_json(text: str, source: str = "kvload memtier --options-json") -> Table:
    """The table from its JSON; DriverError naming ``source`` for anything else."""
    try:
        document = json.loads(text)
        if document.get("format") != FORMAT or document.get("version") != VERSION:
            raise DriverError(f"{source} printed format {document.get('format')!r} version "
                              f"{document.get('version')!r}, not {FORMAT!r} version "
                              f"{VERSION}: {_REBUILD}")
        return Table(tuple(_spec(entry) for entry in document["options"]))
    except (ValueError, AttributeError, KeyError, TypeError) as exc:
        raise DriverError(f"{source} printed no option table ({exc}): {_REBUILD}") from None


def read(kvload: Path) -> Table:
    """Run ``kvload memtier --options-json`` and read its table."""
    argv = (str(kvload), "memtier", "--options-json")
    try:
        done = proc.run(argv, timeout=30)
    except CommandError as exc:
        raise DriverError(f"{exc}: {_REBUILD}") from None
    if done.returncode != 0:
        raise DriverError(f"{' '.join(argv)} failed (exit {done.returncode}; a kvload older "
                          f"than this kvperf?): {_REBUILD}")
    return from_json(done.stdout, " ".join(argv))


@functools.cache
def table() -> Table:
    """kvload memtier's table, from the installed kvload (read once per process)."""
    kvload = find_program("kvload")
    if kvload is None:
        raise DriverError("kvload is not installed: kvperf reads memtier_benchmark's options "
                          "from `kvload memtier --options-json`; scripts/install.sh builds it "
                          "into the environment")
    return read(kvload)
