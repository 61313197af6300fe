"""Progress over trials with an ETA (rich), as a pipeline Observer."""

from __future__ import annotations

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

from kvperf.plan.trial import Trial
from kvperf.results.row import Row, is_ok


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

    def trial_started(self, trial: Trial, position: int, total: int) -> None:
        self.progress.update(self.task, description=trial.describe())

    def stage(self, trial: Trial, name: str) -> None:
        self.progress.update(self.task, description=f"{trial.describe()} · {name}")

    def trial_finished(self, trial: Trial, row: Row) -> None:
        self.progress.advance(self.task)
        if not is_ok(row):
            error = escape(str(row["error"]))
            self.console.print(f"[red]trial {trial.index} failed[/red]: {error}", soft_wrap=True)
