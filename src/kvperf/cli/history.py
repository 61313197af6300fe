"""`kvperf history`: per-series values per revision, or the % change between two revisions."""

from __future__ import annotations

import argparse
from typing import Any

from kvperf.cli._common import Cli
from kvperf.cli._disturbed import add_include_disturbed
from kvperf.cli._environment import print_environment
from kvperf.cli._store import add_store_options, store_flags
from kvperf.pipeline.commands.history import history, history_request
from kvperf.pipeline.request.stored import HistoryRequest
from kvperf.report.history import ENV_MARK, cells_json, change_table, history_table, short


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "history", help="per-series results over commits from the database",
        description="Per series (command and parameters): the mean over trials, n and CV of "
                    "each revision (commit, or label when no commit was given); with --sha A "
                    "B the % change per metric between two revisions and its verdict (the "
                    "rule of compare-results, from the stored means and sds).")
    p.add_argument("--last", type=int, default=10, help="newest revisions to show (default 10)")
    p.add_argument("--sha", nargs=2, metavar=("A", "B"),
                   help="compare two revisions (sha prefixes or labels): %% change per metric")
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                   help="filter series, e.g. command=SET pipeline=16 tls=no (repeatable)")
    p.add_argument("--metric", action="append", metavar="NAME",
                   help="metric(s) to show (default: rps; with --sha: rps, latencies, CPU)")
    p.add_argument("--json", action="store_true", help="print the cells as JSON")
    add_store_options(p)
    add_include_disturbed(p)
    p.set_defaults(handler=handle)


def request(args: argparse.Namespace) -> HistoryRequest:
    """argv's flags → the checked request (UsageError, exit 2, before the store is read)."""
    return history_request(last=args.last, shas=None if args.sha is None else tuple(args.sha),
                           metrics=tuple(args.metric or ()), where=tuple(args.where),
                           json=args.json, store=store_flags(args),
                           include_disturbed=args.include_disturbed)


def handle(args: argparse.Namespace, cli: Cli) -> int:
    asked = request(args)
    found = history(asked, cli.world)
    if found.left_out:
        cli.err.print(f"{found.left_out} disturbed trial(s) left out (other processes took "
                      "their CPUs; --include-disturbed counts them)", highlight=False)
    if asked.json:
        cli.out.print_json(cells_json(found.found))
        return 0
    if not found.found:
        cli.err.print(f"no results in {found.database} match", highlight=False)
        return 0
    cells, names = found.cells, list(found.metrics)
    for key in found.series:
        if found.pair is not None:
            a, b = found.pair
            cli.out.print(change_table(key, found.fields[key], a, b, cells, names,
                                       found.verdicts.get(key)))
        else:
            cli.out.print(history_table(key, found.fields[key], found.revisions, cells, names,
                                        found.env_changes))
    if found.environment is not None:
        print_environment(cli, found.environment)
    for revision, what in found.env_changes.items():
        cli.out.print(f"{ENV_MARK} {short(revision)}: {what}", highlight=False, soft_wrap=True)
    return 0
