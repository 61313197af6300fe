"""A folder's ``defaults.yml``, merged into each definition of the folder (pure).

Semantics of redisbench-admin's ``get_defaults`` / ``merge_default_and_config_metrics``
(``utils/benchmark_config.py``, ``run/common.py``), which the corpus runner calls:

- ``exporter.redistimeseries.metrics``: the defaults' paths first, then the definition's
  own (the runner extends the default list; kvperf drops repeats); ``timemetric``: the
  definition's, else the defaults'.
- ``kpis``: a definition without any takes the defaults'; otherwise a default KPI is added
  unless the definition bounds the same path with the same mode (redisbench-admin compares
  the mode and the first bound's *value*; kvperf compares mode and path, so a definition's own
  bound replaces the default one).
- ``spec.setups``: topologies, added to (or replacing entries of) kvperf's table.
- ``remote`` and ``clusterconfig`` (remote-deployment settings) are accepted and not used.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kvperf.core.errors import ConfigError
from kvperf.definitions.kpis import Kpi
from kvperf.definitions.model import Definition, Exporter
from kvperf.definitions.parse import Reader, parse_kpis
from kvperf.definitions.topology import Topology, parse_setups

DEFAULTS_NAME = "defaults.yml"
DEFAULTS_KEYS = frozenset({"exporter", "kpis", "spec", "remote", "clusterconfig", "version"})


@dataclass(frozen=True)
class Defaults:
    metrics: tuple[str, ...] = ()
    timemetric: str | None = None
    break_by: tuple[str, ...] = ()
    kpis: tuple[Kpi, ...] = ()
    setups: tuple[Topology, ...] = ()


def parse_defaults(raw: Any, source: str) -> Defaults:
    """A defaults file's mapping (ConfigError naming ``source`` and the key when malformed)."""
    if raw is None:
        return Defaults()
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: a defaults file is a YAML map")
    unknown = sorted(set(raw) - DEFAULTS_KEYS)
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r} (known: "
                          f"{', '.join(sorted(DEFAULTS_KEYS))})")
    reader = Reader()
    rts = (raw.get("exporter") or {}).get("redistimeseries") or {}
    kpis = parse_kpis(reader, raw.get("kpis"))
    metrics = reader.texts("exporter.redistimeseries.metrics", rts.get("metrics"))
    timemetric = reader.text("exporter.redistimeseries.timemetric", rts.get("timemetric"))
    break_by = reader.texts("exporter.redistimeseries.break_by", rts.get("break_by"))
    if reader.issues:
        raise ConfigError(f"{source}: {reader.issues[0]}")
    setups = tuple(parse_setups(raw, source).values()) if "spec" in raw else ()
    return Defaults(metrics, timemetric, break_by, kpis, setups)


def _merged_kpis(own: tuple[Kpi, ...], defaults: tuple[Kpi, ...]) -> tuple[Kpi, ...]:
    if not own:
        return defaults
    bound = {(kpi.mode, kpi.path) for kpi in own}
    return own + tuple(kpi for kpi in defaults if (kpi.mode, kpi.path) not in bound)


def merge(definition: Definition, defaults: Defaults) -> Definition:
    """``definition`` with ``defaults`` applied as the corpus runner applies them."""
    own = definition.exporter or Exporter()
    metrics = tuple(dict.fromkeys(defaults.metrics + own.metrics))
    exporter = None if not metrics and own.timemetric is None and defaults.timemetric is None \
        else Exporter(metrics, own.timemetric or defaults.timemetric,
                      own.break_by or defaults.break_by)
    return replace(definition, exporter=exporter,
                   kpis=_merged_kpis(definition.kpis, defaults.kpis))
