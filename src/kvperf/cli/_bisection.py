"""A bisection on the terminal (bisect, and regressions --bisect): its start and a line
per step as they happen, then the steps table, the answer, the moved functions and the
markdown report."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kvperf.pipeline.commands.progress import BisectLog, BisectResult, Step
from kvperf.report.bisect import answer, moved_table, step_line, steps_table


def print_started(out: Console, log: BisectLog, resumed: int) -> None:
    again = f", {resumed} step(s) done before (--resume)" if resumed else ""
    out.print(f"bisecting {len(log.commits) - 1} commits {log.good[:12]}.."
              f"{log.bad[:12]} on {log.series} {log.metric} ({log.measure}, "
              f"{log.runs} runs per side per step{again})", highlight=False)


def print_step(out: Console, log: BisectLog, step: Step) -> None:
    out.print(escape(step_line(log, step)), highlight=False, soft_wrap=True)


def print_result(out: Console, result: BisectResult, report: Path | None = None) -> None:
    """The steps, the answer, the moved functions; where the markdown report is."""
    log = result.log
    out.print(steps_table(log))
    for line in answer(log):
        out.print(escape(line), highlight=False, soft_wrap=True)
    if result.moved:
        out.print(moved_table(log, result.moved))
    if report is not None:
        out.print(f"markdown report: {report}")
    out.print(f"log: {result.directory / 'bisect.json'}", highlight=False)
