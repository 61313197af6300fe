"""Typed benchmark definitions: redis-benchmarks-specification 0.4 and redisbench-admin 0.2.

Both formats read into the same frozen types (``parse.py`` does the reading). Format 0.4
writes ``dbconfig`` and ``clientconfig`` as maps (and ``clientconfigs`` as a list of them);
redisbench-admin 0.2 writes them as lists of one-key maps, its client options as
``parameters``. What a definition says but kvperf does not act on (``resources``,
``run_image``, ``build-variants``, …) is kept, so a plan can show it.

Versions: ``FORMATS`` lists the format versions read. 0.1–0.3 are redisbench-admin's
(the same keys, 0.2 the one documented); 0.4 is redis-benchmarks-specification's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvperf.definitions.kpis import Kpi

FORMATS = ("0.1", "0.2", "0.3", "0.4")


@dataclass(frozen=True)
class Issue:
    """Something wrong with a definition, at a key path (``dbconfig.preload_tool.tol``).

    ``fatal`` issues keep it from running (structure kvperf cannot run as written); others
    are reported and ignored (an unknown top-level key, such as a typo of ``version``).
    """

    path: str
    message: str
    fatal: bool = True

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass(frozen=True)
class Resources:
    """``resources.requests``: recorded, not enforced."""

    cpus: str | None = None
    memory: str | None = None

    def __str__(self) -> str:
        parts = [f"cpus {self.cpus}" if self.cpus else "", f"memory {self.memory}"
                 if self.memory else ""]
        return ", ".join(p for p in parts if p) or "-"


@dataclass(frozen=True)
class ToolConfig:
    """A client or the preload tool: which tool and its options as the definition writes them.

    ``arguments`` is the raw argument string (format 0.4); ``parameters`` the ordered
    redisbench-admin option pairs (``clients: 16`` …). ``extra`` holds the options of tools
    kvperf does not run (``scalability``, ``datasets``, ``engine``), kept for the record.
    """

    tool: str
    arguments: str = ""
    parameters: tuple[tuple[str, Any], ...] = ()
    run_image: str | None = None
    min_tool_version: str | None = None
    tool_source: str | None = None
    resources: Resources | None = None
    timeout: int | None = None
    extra: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class RdbChecks:
    """``dbconfig.rdb_checks`` (an RDB save/load test's expectations): recorded."""

    operation: str | None = None
    keyspacelen: int | None = None
    value_size: int | None = None
    sample_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class DbConfig:
    """The server side: startup configuration, dataset, preload and checks."""

    configuration_parameters: tuple[tuple[str, str], ...] = ()
    module_configuration_parameters: tuple[str, ...] = ()  # module names (refused)
    dataset: str | None = None
    dataset_name: str | None = None
    dataset_description: str | None = None
    dataset_load_timeout_secs: int | None = None
    preload_tool: ToolConfig | None = None
    init_commands: tuple[tuple[str, ...], ...] = ()
    init_lua: tuple[str, ...] = ()
    check_keyspacelen: int | None = None
    resources: Resources | None = None
    preload_before_replica: bool = False
    wait_for_bgsave: bool = False
    low_throughput: bool = False  # low-throughput-benchmark / skip_throughput_floor
    rdb_checks: RdbChecks | None = None


@dataclass(frozen=True)
class Exporter:
    """``exporter.redistimeseries``: metric JSONPaths (and the time metric)."""

    metrics: tuple[str, ...] = ()
    timemetric: str | None = None
    break_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Definition:
    """One benchmark definition file, read and typed (defaults already merged)."""

    name: str
    source: Path
    version: str | None = None
    description: str = ""
    tested_commands: tuple[str, ...] = ()
    tested_groups: tuple[str, ...] = ()
    priority: int | None = None
    topologies: tuple[str, ...] = ("oss-standalone",)
    build_variants: tuple[str, ...] = ()
    required_capabilities: tuple[str, ...] = ()
    dbconfig: DbConfig = field(default_factory=DbConfig)
    clients: tuple[ToolConfig, ...] = ()
    exporter: Exporter | None = None
    kpis: tuple[Kpi, ...] = ()
    timeout_seconds: int | None = None
    metadata: tuple[tuple[str, str], ...] = ()
    issues: tuple[Issue, ...] = ()

    @property
    def fatal(self) -> tuple[Issue, ...]:
        return tuple(issue for issue in self.issues if issue.fatal)

    @property
    def warnings(self) -> tuple[Issue, ...]:
        return tuple(issue for issue in self.issues if not issue.fatal)

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(client.tool for client in self.clients)
