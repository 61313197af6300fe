"""`kvperf suites`' table: a line per built-in suite, with its config file when asked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from rich.table import Table


class SuiteLine(Protocol):
    """A built-in suite as listed (pipeline/commands/suites.py ``Suite``)."""

    @property
    def name(self) -> str: ...
    @property
    def line(self) -> str: ...
    @property
    def path(self) -> Path | None: ...


def suites_table(suites: Sequence[SuiteLine], paths: bool) -> Table:
    """A row per suite; ``paths`` adds the config column."""
    table = Table(title="Built-in suites (kvperf run --suite NAME[,NAME…] [--quick])")
    table.add_column("suite")
    table.add_column("what it runs")
    if paths:
        table.add_column("config")
    for suite in suites:
        table.add_row(suite.name, suite.line, *([str(suite.path)] if paths else []))
    return table
