"""A module-scenario run in the terminal: a line per scenario, then the results table."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kvperf.config.model import ProfileSettings
from kvperf.config.scenarios import ModuleConfig, Scenario, TestGroup
from kvperf.report.progress import Described
from kvperf.results.row import Row, is_ok


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _memory(row: Row) -> str:
    """``1,234.5 B/document (5,000; MEMORY USAGE 1,100.0)``: --measure memory's growth of
    INFO used_memory per the scenario's unit, and the keys' MEMORY USAGE per unit."""
    memory = row.get("memory") or {}
    per = memory.get("bytes_per_key")
    if per is None:
        return "-"
    sample = memory.get("sample_bytes_per_key")
    usage = f"; MEMORY USAGE {sample:,.1f}" if sample is not None else ""
    return f"{per:,.1f} B/{memory.get('unit', 'key')} ({memory.get('items', 0):,}{usage})"


def _instructions(row: Row) -> str:
    """--measure instructions: the server's instructions per request (callgrind)."""
    per = (row.get("instructions") or {}).get("total_per_request")
    return "-" if per is None else f"{per:,.0f}"


def results_table(rows: list[Row], title: str) -> Table:
    """Group, scenario, config set, status, ops/s, latency, rows sent, keys afterwards, and
    with --measure memory the bytes per unit, with --measure instructions per request."""
    table = Table(title=title)
    memory = any(row.get("memory") for row in rows)
    counted = any(row.get("instructions") for row in rows)
    columns = ["group", "scenario", "type", "config set", "status", "ops/s", "p50 ms",
               "p99 ms", "dataset rows", "keys"] + (["memory"] if memory else []) + (
               ["instructions/request"] if counted else [])
    for name in columns:
        table.add_column(name, justify="left" if name in (
            "group", "scenario", "type", "config set", "status") else "right")
    for row in rows:
        details = row.get("scenario") or {}
        settings = {k: v for k, v in (row.get("config_set") or {}).items()
                    if k not in ("group", "scenario")}
        cells = [escape(str(details.get("group", "-"))), escape(row["command"]),
                 str(details.get("type", "-")),
                 escape(" ".join(f"{k}={v}" for k, v in settings.items()) or "-"),
                 ("ok" + (" (profiled)" if row.get("profile") else "") if is_ok(row)
                  else f"[red]failed[/red] {escape(row['error'] or '')}"),
                 f"{row['rps']:,.0f}" if row["rps"] is not None else "-",
                 _ms(row["p50_latency_ms"]), _ms(row["p99_latency_ms"]),
                 str(details.get("dataset_rows") or "-"),
                 str(row["checks"].get("dbsize", "-"))]
        table.add_row(*cells, *([_memory(row)] if memory else []),
                      *([_instructions(row)] if counted else []))
    return table


class ScenarioProgress:
    """One line per scenario as it starts and ends."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def started(self, work: Described, position: int, total: int) -> None:
        self.console.print(f"[{position}/{total}] {escape(work.describe())}", highlight=False)

    def stage(self, work: Described, name: str) -> None:
        pass

    def finished(self, work: Described, row: Row) -> None:
        if not is_ok(row):
            self.console.print(f"  [red]failed[/red]: {escape(row['error'] or '')}",
                               soft_wrap=True)


def _bound(s: Scenario) -> str:
    if s.duration is not None:
        return f"{s.duration} s" + (f" after {s.warmup} s warmup" if s.warmup else "")
    if s.requests is not None:
        return f"{s.requests} requests"
    return f"each row once (≤ {s.maxdocs})" if s.maxdocs else "each row once"


def plan_table(config: ModuleConfig,
               selected: tuple[tuple[TestGroup, tuple[Scenario, ...]], ...]) -> Table:
    """``--dry-run``: what would run, per profiling set × config set × group × scenario,
    in order."""
    table = Table(title=f"{config.source.name}: module scenarios")
    for name in ("config set", "group", "scenario", "type", "command", "dataset", "clients",
                 "bound", "flush", "setup", "profile"):
        table.add_column(name)
    for index in range(config.passes):
        for settings in config.config_sets:
            label = " ".join(f"{k}={v}" for k, v in settings) or "-"
            for group, scenarios in selected:
                for s in scenarios:
                    table.add_row(escape(label), escape(group.group), escape(s.id), str(s.type),
                                  escape(s.command), escape(s.dataset or "-"), str(s.clients),
                                  _bound(s), "yes" if s.flush_before else "-",
                                  str(len(s.setup_commands)) if s.setup_commands else "-",
                                  _profile(config.profile(index, s)))
    return table


def _profile(settings: ProfileSettings | None) -> str:
    """``cpu 999 Hz from 0 s for 10 s`` (the window of the scenario's phase), or -."""
    if settings is None:
        return "-"
    window = f"from {settings.delay:g} s" + (
        f" for {settings.duration:g} s" if settings.duration is not None else "")
    return f"{settings.mode} {settings.frequency} Hz {window}"
