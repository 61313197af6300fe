"""What ``kvperf run --definitions … --dry-run`` prints: each plan or refusal, then a summary
with the refusal reasons grouped and counted (pure; rich renderables).

A definition file counts as *planned* when it plans on every topology selected for it,
*partly* when on some, *refused* when on none.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from kvperf.definitions.client import ClientPlan
from kvperf.definitions.plan import Plan, Refusal

Result = Plan | Refusal
_URL = re.compile(r"\b[a-z0-9]+://\S+", re.IGNORECASE)
_QUOTED = re.compile(r"'[^']*'")
_RDB_NAME = re.compile(r"--dataset-rdb \S+=PATH")
_SHOWN_ARGS = 12  # server parameters shown per plan


@dataclass(frozen=True)
class Summary:
    files: int
    planned: int
    partly: int
    refused: int
    runs_planned: int
    runs_refused: int
    reasons: tuple[tuple[str, int], ...]  # grouped reason, count of definition × topology

    def headline(self) -> str:
        return (f"{self.files} definition file(s): {self.planned} planned, {self.partly} "
                f"partly, {self.refused} refused; {self.runs_planned} run(s) planned, "
                f"{self.runs_refused} refused (definition × topology)")


def reason_group(reason: str) -> str:
    """A refusal reason without its particulars (URLs, quoted values), for counting."""
    if reason.startswith(("client: stray argument", "preload: stray argument")):
        return reason.split(":", 1)[0] + ": stray argument (memtier takes options only)"
    return _QUOTED.sub(lambda m: m.group(0) if len(m.group(0)) < 30 else "'…'",
                       _URL.sub("<URL>", _RDB_NAME.sub("--dataset-rdb NAME=PATH", reason)))


def summarize(results: tuple[Result, ...]) -> Summary:
    per_file: dict[Path, list[bool]] = {}
    for result in results:
        per_file.setdefault(result.definition.source, []).append(isinstance(result, Plan))
    refusals = Counter(reason_group(r.reason) for r in results if isinstance(r, Refusal))
    outcomes = list(per_file.values())
    return Summary(len(outcomes), sum(all(o) for o in outcomes),
                   sum(any(o) and not all(o) for o in outcomes),
                   sum(not any(o) for o in outcomes),
                   sum(isinstance(r, Plan) for r in results),
                   sum(isinstance(r, Refusal) for r in results),
                   tuple(refusals.most_common()))


def _client_line(client: ClientPlan) -> str:
    words = " ".join(shlex.quote(word) for word in client.argv)
    bound = (f"test-time {client.test_time} s" + (" (overridden)" if client.test_time_overridden
                                                  else "")
             if client.test_time is not None else f"requests {client.requests or 'default'}")
    if client.time_limit is not None:
        bound += f", at most {client.time_limit} s (capped)"
    return f"{client.runner} {words}  [{bound}]"


def _config(plan: Plan) -> str:
    pairs = [f"{key} {shlex.quote(value) if value else chr(34) * 2}"
             for key, value in plan.server_config]
    more = f" … (+{len(pairs) - _SHOWN_ARGS})" if len(pairs) > _SHOWN_ARGS else ""
    return " · ".join(pairs[:_SHOWN_ARGS]) + more or "-"


def _plan_lines(plan: Plan) -> Iterator[tuple[str, str]]:
    yield "server", _config(plan)
    if plan.dataset is not None:
        yield "dataset", str(plan.dataset)
    if plan.preload is not None:
        yield "preload", _client_line(plan.preload)
    if plan.init_commands or plan.init_lua:
        yield "init", (f"{len(plan.init_commands)} command(s), {len(plan.init_lua)} Lua "
                       f"script(s); first: {' '.join(plan.init_commands[0])[:80]}"
                       if plan.init_commands else f"{len(plan.init_lua)} Lua script(s)")
    if plan.keyspacelen is not None:
        yield "check", f"keyspacelen {plan.keyspacelen}"
    for client in plan.clients:
        yield "client", _client_line(client)
    if plan.kpis:
        yield "kpis", "; ".join(kpi.describe() for kpi in plan.kpis)
    if plan.metrics:
        yield "metrics", f"{len(plan.metrics)} exporter path(s), e.g. {plan.metrics[0]}"
    for note in plan.notes:
        yield "note", note


def render_result(result: Result) -> RenderableType:
    if isinstance(result, Refusal):
        line = Text("refused ", style="bold red")
        line.append(f"{result.name} [{result.topology}]", style="bold")
        line.append(f": {result.reason}")
        return line
    lines = Text("plan    ", style="bold green")
    lines.append(f"{result.name} [{result.topology.name}: {result.topology.describe()}]",
                 style="bold")
    for label, value in _plan_lines(result):
        lines.append(f"\n  {label:<8} ", style="dim")
        lines.append(value)
    return lines


def render_summary(summary: Summary) -> RenderableType:
    table = Table(title=summary.headline(), title_justify="left")
    table.add_column("refusals", justify="right")
    table.add_column("reason")
    for reason, count in summary.reasons:
        table.add_row(str(count), Text(reason))
    return table if summary.reasons else Text(summary.headline())
