"""``run --module-config FILE [--module NAME] [--module-path SO …] [--groups 1,2]
[--scenarios a,b]`` as flags — the seed's module-test format (``test_groups`` →
``scenarios``; ``--config FILE`` runs such a file too) — and what such a run shows: the plan
with --dry-run, else the results table and the profile artifacts. Exit codes: 0 when every
scenario ran, 1 when one failed, 2 for bad input (config, selection, files)."""

from __future__ import annotations

import argparse

from kvperf.cli._common import Cli, print_interrupted
from kvperf.cli._disturbed import print_disturbed
from kvperf.cli._paths import local_path
from kvperf.cli._profile import print_profile
from kvperf.pipeline.commands.modules import ModulesOutcome
from kvperf.report.scenarios import plan_table, results_table


def add_module_args(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group(
        "module scenarios", "the seed's test_groups format "
                              "(docs/guide/modules.md \"Module scenarios\")")
    group.add_argument("--module-config", type=local_path, metavar="FILE",
                       help="a test_groups config (--config FILE with test_groups works too)")
    group.add_argument("--module", metavar="NAME", help="the module's name, recorded in rows")
    group.add_argument("--module-path", type=local_path, action="extend", nargs="+",
                       metavar="SO",
                       help="a built module (.so) loaded into every server node (repeatable)")
    group.add_argument("--groups", nargs="+", metavar="G",
                       help="only these groups (e.g. 1,2 or 1 2)")
    group.add_argument("--scenarios", nargs="+", metavar="ID",
                       help="only these scenario ids of the selected groups")


def print_modules(cli: Cli, found: ModulesOutcome) -> int:
    """The plan (--dry-run), or the results table and the profile artifacts."""
    ran = found.ran
    if ran is None:
        options = found.request.options
        cli.out.print(plan_table(options.config, options.selected), highlight=False)
        return 0
    if ran.summary is None:
        return print_interrupted(cli, ran, "scenario(s)")
    rows = ran.summary.rows
    cli.out.print(results_table(rows, ran.title), highlight=False)
    print_profile(cli.out, ran.profile)
    cli.out.print(f"results: {ran.summary.metrics_path}", highlight=False)
    print_disturbed(cli.out, cli.err, rows)
    if ran.summary.failed:
        cli.err.print(f"[red]{ran.summary.failed} of {len(rows)} scenario(s) failed[/red]")
    return ran.exit_code
