"""Progress over trials with an ETA (rich), as a pipeline Observer."""

from __future__ import annotations

from typing import Protocol

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from kvperf.results.row import Row, is_ok


class Described(Protocol):
    """What progress shows of a unit of work (pipeline/model.Work)."""

    @property
    def name(self) -> str: ...

    def describe(self) -> str: ...


class ProgressReporter:
    """Shows trial i/n, the current trial and stage, and the ETA; prints failures at once."""

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            console=console, transient=True,
        )
        self.task = self.progress.add_task("trials", total=total)

    def __enter__(self) -> ProgressReporter:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def started(self, work: Described, position: int, total: int) -> None:
        """``total`` may shrink as the work goes (`--runs auto`: stopped series)."""
        self.progress.update(self.task, description=work.describe(), total=total)

    def stage(self, work: Described, name: str) -> None:
        self.progress.update(self.task, description=f"{work.describe()} · {name}")

    def finished(self, work: Described, row: Row) -> None:
        self.progress.advance(self.task)
        if not is_ok(row):
            error = escape(str(row["error"]))
            self.console.print(f"[red]{work.name} failed[/red]: {error}", soft_wrap=True)
