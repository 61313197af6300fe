"""metrics.json row → database records (pure): run identity, trial columns, metric values.

Handles kvperf's rows and the seed system's (which have no run, trial_id, status, tool, env):
missing fields become NULL, a seed row counts as ``ok`` (it only exists when it measured
something), and its label is the name of the directory holding its metrics.json.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kvperf.core.identity import stable_id
from kvperf.results.histogram import HistogramFile
from kvperf.results.metrics import TOP_METRICS
from kvperf.results.records import Env
from kvperf.results.row import Row, field_of, is_disturbed, series_key

NESTED_METRICS = ("server", "client", "memory")  # numeric leaves: "server.x", ...
INT_COLUMNS = ("data_size", "pipeline", "clients", "requests", "keyspacelen", "io_threads",
               "benchmark_threads")
FLOAT_COLUMNS = ("duration", "warmup")
BOOL_COLUMNS = ("cluster_mode", "tls")


def row_hash(row: Row) -> str:
    """sha256 of the row's canonical JSON: the same row always hashes the same. ``auto``
    (``--runs auto``'s stop, added to metrics.json after the row was stored) is left out:
    a pushed file's row is the one the run stored."""
    kept = {k: v for k, v in row.items() if k != "auto"}
    canonical = json.dumps(kept, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _leaves(prefix: str, value: Any, out: dict[str, float]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _leaves(f"{prefix}.{key}", inner, out)
    elif (number := _number(value)) is not None:
        out[prefix] = number


def metric_values(row: Row) -> dict[str, float]:
    """Every finite numeric metric of a row: rps, latencies, server.*, client.* (dotted),
    and a definition's exporter metrics under their own names (their JSONPaths)."""
    out = {name: v for name in TOP_METRICS if (v := _number(field_of(row, name))) is not None}
    for section in NESTED_METRICS:
        if isinstance(row.get(section), dict):
            _leaves(section, field_of(row, section), out)
    out.update(_harness_metrics(field_of(row, "harness")))
    definition = field_of(row, "definition")
    exported = definition.get("metrics") if isinstance(definition, dict) else None
    if isinstance(exported, dict):
        out.update({name: v for name, value in exported.items()
                    if (v := _number(value)) is not None})
    return out


def _harness_metrics(harness: Any) -> dict[str, float]:
    """A client harness's own costs and wire (docs/CLIENTS.md): peak RSS, allocations per
    operation, its process total per operation and the server's calls per read, so
    history and change points follow them like rps (its CPU per operation in the measured
    window is the row's ``client.client_cpu_us_per_request``)."""
    if not isinstance(harness, dict):
        return {}
    out = {}
    if (rss := _number(harness.get("max_rss_kib"))) is not None:
        out["harness.max_rss_kib"] = rss
    if (total := _number(harness.get("process_cpu_us_per_op"))) is not None:
        out["harness.process_cpu_us_per_op"] = total
    wire = harness.get("wire")
    if isinstance(wire, dict) and (per_read := _number(wire.get("calls_per_read"))) is not None:
        out["harness.calls_per_read"] = per_read
    allocations = harness.get("allocations")
    if isinstance(allocations, dict) and (n := _number(allocations.get("per_op"))) is not None:
        out[f"harness.allocations_per_op.{allocations.get('unit', 'count')}"] = n
    return out


def parse_timestamp(value: Any) -> datetime | None:
    """An ISO 8601 timestamp as an aware UTC datetime (naive ones are taken as UTC)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)


def canonical_config_set(value: Any) -> str | None:
    """config_set as comparable text: canonical JSON with sorted keys; None when empty."""
    if not value:
        return None
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _typed(row: Row, name: str) -> Any:
    value = field_of(row, name)
    if value is None:
        return None
    if name in BOOL_COLUMNS:
        return value if isinstance(value, bool) else str(value).lower() in ("yes", "true", "1")
    caster = int if name in INT_COLUMNS else float
    try:
        return caster(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class RunInfo:
    """What the trials of one run share; ``key`` identifies the run in the database."""

    key: str
    label: str | None
    commit_sha: str | None
    source: str
    tool: str | None
    tool_version: str | None
    server_version: str | None
    host: str | None
    started_at: datetime | None
    env: Env | None


def run_info(row: Row, source: str, label: str | None,
             started_at: datetime | None, salt: str = "") -> RunInfo:
    """The run a row belongs to. Pushed files: one run per (file, label, commit, tool, server,
    host); live runs add their start time and pid as ``salt`` so every run is its own."""
    env = row.get("env") if isinstance(row.get("env"), dict) else None
    label = row.get("label") or label
    found = env.get("host") if env else None
    host = found if isinstance(found, str) else None
    identity = {"source": source, "label": label, "commit": row.get("commit"),
                "tool": row.get("tool"), "tool_version": row.get("tool_version"),
                "server_version": row.get("server_version"), "host": host, "salt": salt}
    run_env = {k: v for k, v in env.items() if k != "pinning"} if env else None
    return RunInfo(stable_id(identity, length=32), label, row.get("commit"), source,
                   row.get("tool"), row.get("tool_version"), row.get("server_version"), host,
                   started_at, run_env)


PROFILED = "profiled"


def _status(row: Row) -> str:
    """The trials-table status: the row's, except that an ok row measured under --profile is
    'profiled' — stored, but never in history or summaries (perf perturbs its timing)."""
    status = str(row.get("status") or "ok")
    return PROFILED if status == "ok" and row.get("profile") else status


def trial_values(row: Row, label: str | None) -> dict[str, object]:
    """The trials-table columns of a row (without id and run_id)."""
    commit = row.get("commit") or None
    columns = {name: _typed(row, name)
               for name in (*INT_COLUMNS, *FLOAT_COLUMNS, *BOOL_COLUMNS)}
    return {
        **columns,
        "row_hash": row_hash(row), "series_key": series_key(row),
        "revision": str(commit or row.get("revision") or row.get("label") or label
                        or "unknown"),
        "command": row.get("command"), "config_set": canonical_config_set(row.get("config_set")),
        "run_index": row["run"] if isinstance(row.get("run"), int) else None,
        "trial_id": row.get("trial_id"), "commit_sha": commit,
        "timestamp": parse_timestamp(row.get("timestamp")),
        "status": _status(row), "error": row.get("error"),
        "disturbed": is_disturbed(row), "row": row,
    }


def histogram_values(histograms: HistogramFile | None) -> list[dict[str, str]]:
    """A trial's histograms file → rows of (kind, unit, encoded)."""
    if not histograms:
        return []
    unit = str(histograms.get("unit", "us"))
    return [{"kind": kind, "unit": unit, "encoded": value} for kind, value in histograms.items()
            if isinstance(value, str) and value.startswith("HIST")]
