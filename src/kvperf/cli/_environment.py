"""The environment diff of two or more sides on the terminal (compare, compare-results,
report): the differing facts on stdout, the ones known to move results as warnings."""

from __future__ import annotations

from rich.markup import escape

from kvperf.cli._common import Cli
from kvperf.report.envdiff import SAME, EnvDiff, terminal_table, warning_lines


def print_environment(cli: Cli, diff: EnvDiff) -> None:
    if not diff.sides:
        return
    if not diff:
        cli.out.print(SAME, highlight=False)
        return
    cli.out.print(terminal_table(diff))
    for line in warning_lines(diff):
        cli.err.print(f"[yellow]{escape(line)}[/yellow]", soft_wrap=True)
