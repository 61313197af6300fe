"""--retry-disturbed / --no-retry-disturbed and --exclude-disturbed, declared once for the
commands that run trials (run, compare), mapped to ``InterferenceFlags``; and the summary
line of disturbed trials."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from kvperf.pipeline.commands.outputs import Row
from kvperf.pipeline.commands.vocabulary import DISTURBED_SHARE
from kvperf.pipeline.request.common import InterferenceFlags
from kvperf.report.table import disturbed_notes, disturbed_summary


def add_disturbed_args(p: argparse.ArgumentParser, retry_default: bool) -> None:
    default = "on" if retry_default else "off"
    p.add_argument("--retry-disturbed", action=argparse.BooleanOptionalAction, default=None,
                   help=f"run a trial once more when other processes took more than "
                        f"{DISTURBED_SHARE * 100:.0f}%% of a watched CPU (or the hypervisor "
                        f"stole it) during its measure stage; a duet round reruns on every "
                        f"side (default {default}; KVPERF_RETRY_DISTURBED=1 or 0 sets it)")
    p.add_argument("--exclude-disturbed", action="store_true",
                   help="leave a disturbed trial that remains out of every timing statistic "
                        "and verdict (default: kept, and marked)")


def interference_flags(args: argparse.Namespace) -> InterferenceFlags:
    return InterferenceFlags(args.retry_disturbed, args.exclude_disturbed)


def print_disturbed(out: Console, err: Console, rows: list[Row]) -> None:
    """A footnote per disturbed trial under the results (one line each, never wrapped) and
    the summary line on stderr."""
    summary = disturbed_summary(rows)
    if summary is None:
        return
    for note in disturbed_notes(rows):
        out.print(f"[yellow]{escape(note)}[/yellow]", soft_wrap=True)
    err.print(f"[yellow]{escape(summary)}[/yellow]", soft_wrap=True)


def add_include_disturbed(p: argparse.ArgumentParser) -> None:
    p.add_argument("--include-disturbed", action="store_true",
                   help="count trials other processes disturbed too (default: left out; "
                        "the cells are then aggregated from every stored metric)")
