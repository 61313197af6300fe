"""The final terminal table of a run and the plan listing of --dry-run."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from kvperf.analysis.series import SeriesSummary
from kvperf.config.workload import WORKLOAD_KEYS
from kvperf.plan.trial import Trial
from kvperf.results.interference import footnote
from kvperf.results.row import Row, is_disturbed, is_excluded, is_ok

FOOTNOTES = 5  # disturbed trials named under the table; the rest are counted


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def disturbed_notes(rows: list[Row]) -> list[str]:
    """A line per disturbed trial (the first FOOTNOTES of them): the cause, the process and
    what to do; then how many more."""
    found = [r for r in rows if is_disturbed(r)]
    notes = [f"{r['command']} run {r.get('run', '?')}: "
             f"{footnote(r['interference'] or {})}" for r in found[:FOOTNOTES]]
    if len(found) > FOOTNOTES:
        notes.append(f"… and {len(found) - FOOTNOTES} more disturbed trial(s)")
    if any((r.get("interference") or {}).get("excluded") for r in found):
        notes.append("excluded trials are left out of every timing statistic "
                     "(--exclude-disturbed)")
    return notes


def _status(row: Row) -> str:
    error = escape(str(row.get("error") or ""))
    status = "ok" if is_ok(row) else f"[red]FAILED[/red] {error}"
    if row.get("client_saturated"):
        status += " [yellow]! client saturated[/yellow]"
    if profile := row.get("profile"):
        status += f" (profiled {profile.get('mode', 'cpu')}: not timed)"
    record = row.get("interference") or {}
    if record.get("disturbed"):
        status += " [yellow]! disturbed[/yellow]"
        status += " (excluded)" if record.get("excluded") else ""
    if record.get("attempt", 1) > 1:
        status += " (rerun: first attempt disturbed)"
    return status


def results_table(rows: list[Row], title: str) -> Table:
    """command, size, pipeline, clients, rps, p50, p99 (and status) per row.

    A trial whose load tool saturated its CPU is marked: it measured the client, not the
    server. A trial other processes disturbed is marked (``disturbed_notes``: the lines
    printed under the table, one per trial, naming the cause).
    """
    saturated = sum(1 for r in rows if r.get("client_saturated"))
    lines = ([f"[yellow]! client saturated in {saturated} trial(s): the load tool's CPU, "
              "not the server, may have limited rps (pin the client to its own core, add "
              "benchmark-threads, or pipeline)[/yellow]"] if saturated else [])
    table = Table(title=title, caption="\n".join(lines) or None, caption_justify="left")
    for name in ("command", "size", "P", "clients", "run", "rps", "p50 ms", "p99 ms", "status"):
        table.add_column(name, justify="left" if name in ("command", "status") else "right")
    for row in rows:
        table.add_row(_command(row), _fmt(row["data_size"]), _fmt(row["pipeline"]),
                      _fmt(row["clients"]), _fmt(row["run"]), _fmt(row["rps"], 0),
                      _fmt(row["p50_latency_ms"]), _fmt(row["p99_latency_ms"]), _status(row))
    return table


def _command(row: Row) -> str:
    """The command, and a rate sweep's point as ``SET @60%`` (its open-loop step); reads
    from replicas as ``GET rfr=yes``."""
    point = (row.get("sweep") or {}).get("point")
    command = f"{row['command']} @{point}" if point else row["command"]
    config_set = row.get("config_set") or {}
    rfr = config_set.get("read_from_replicas")
    shapes = " ".join(f"{k}={v}" for k, v in config_set.items() if k in WORKLOAD_KEYS)
    return " ".join(filter(None, [command, f"rfr={rfr}" if rfr else "", shapes]))


def plan_table(trials: list[Trial]) -> Table:
    """One line per planned trial, in execution order."""
    table = Table(title=f"Plan: {len(trials)} trials")
    shaped = any(t.load.workload() for t in trials)
    for name in ("#", "id", "run", "command", "size", "P", "clients", "keys", "n / s", "warmup",
                 "server", *(["keys and values"] if shaped else [])):
        table.add_column(name)
    for t in trials:
        ld, s = t.load, t.server
        bound = str(ld.requests) if ld.requests else f"{ld.duration}s"
        flags = " ".join(x for x, on in (("cluster", s.cluster_mode), ("tls", s.tls)) if on)
        server = " ".join(filter(None, [flags, f"io={s.io_threads}" if s.io_threads else "",
                                        f"replicas={s.replicas}" if s.replicas else "",
                                        f"rfr={ld.read_from_replicas}"
                                        if ld.read_from_replicas != "no" else ""]))
        workload = [" ".join(f"{k}={v}" for k, v in ld.workload().items())] if shaped else []
        table.add_row(str(t.index), t.id, str(t.run), ld.command.name, str(ld.data_size),
                      str(ld.pipeline), str(ld.clients), str(ld.keyspacelen), bound,
                      str(ld.warmup), server or "standalone", *workload)
    return table


def series_table(summaries: list[SeriesSummary]) -> Table:
    """One line per series over its runs: median rps, CV, and latency from merged histograms."""
    table = Table(title="Per series over runs")
    for name in ("command", "params", "runs", "median rps", "CV", "p50 ms", "p99 ms", "latency"):
        table.add_column(name, justify="left" if name in ("command", "params", "latency")
                         else "right")
    for s in summaries:
        cv_text = "-" if s.rps_cv != s.rps_cv else f"{s.rps_cv:.1%}"  # nan for one run
        table.add_row(s.command, s.params, str(s.runs), f"{s.rps_median:,.0f}", cv_text,
                      f"{s.p50_ms:.3f}", f"{s.p99_ms:.3f}", s.latency_source)
    return table


def disturbed_summary(rows: list[Row]) -> str | None:
    """'N of M trial(s) disturbed …' (None when none was)."""
    found = [r for r in rows if is_disturbed(r)]
    if not found:
        return None
    excluded = sum(1 for r in found if is_excluded(r))
    fate = (f"{excluded} excluded from the statistics" if excluded == len(found)
            else "kept and marked (--exclude-disturbed leaves them out)" if not excluded
            else f"{excluded} excluded")
    return (f"{len(found)} of {len(rows)} trial(s) disturbed by other processes: {fate}; "
            "--retry-disturbed reruns them")
