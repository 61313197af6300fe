"""What `kvperf run --commits A B … [--baseline C]` shows: each commit's results, every
commit against the baseline, the profile artifacts, where the results are; exit 1 when a
trial failed."""

from __future__ import annotations

from kvperf.cli._common import Cli
from kvperf.cli._disturbed import print_disturbed
from kvperf.cli._profile import print_profile
from kvperf.pipeline.commands.commits import CommitsRan
from kvperf.report.comparison import terminal_table
from kvperf.report.table import results_table


def print_commits(cli: Cli, found: CommitsRan) -> int:
    if found.built_only:
        cli.err.print("builds done; --dry-run: nothing run")
        return 0
    out = cli.out
    for title, rows in found.sides:
        out.print(results_table(rows, title))
    for base, name, verdicts in found.baseline:
        out.print(terminal_table(verdicts, base, name))
    print_profile(out, found.profile)
    out.print(f"results: {found.directories} (order seed {found.seed})")
    print_disturbed(out, cli.err, found.rows)
    if found.failed:
        cli.err.print(f"[red]{found.failed} trial(s) failed[/red]")
    return found.exit_code
