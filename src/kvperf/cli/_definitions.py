"""``--definitions PATH… [selection]`` as flags (run, compare, bisect), and what a
definitions run shows: each plan or refusal with --dry-run, else the results and KPI tables
(pipeline/definitions/definition_runs.py runs them). Exit codes: 0 when every test ran and every KPI
passed, 1 when a test failed or a KPI did not hold, 2 when nothing could run."""

from __future__ import annotations

import argparse
from dataclasses import replace

from kvperf.cli._common import Cli, print_interrupted
from kvperf.cli._disturbed import print_disturbed
from kvperf.cli._paths import local_path
from kvperf.cli._profile import print_profile
from kvperf.pipeline.commands.definitions import DefinitionsOutcome
from kvperf.pipeline.request.common import DefinitionFlags
from kvperf.report.definitions import kpi_table, results_table


def add_definition_args(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group(
        "benchmark definitions", "YAML definitions (redis-benchmarks-specification 0.4, "
        "redisbench-admin 0.2) instead of --config; docs/DEFINITIONS.md")
    group.add_argument("--definitions", nargs="+", type=local_path, metavar="PATH",
                       help="definition files or folders (a folder's defaults.yml is merged)")
    group.add_argument("--tests-regexp", default=".*", metavar="RE",
                       help="only definitions whose name or file name matches RE")
    group.add_argument("--tests-priority-lower-limit", type=int, metavar="N",
                       help="only definitions with priority ≥ N")
    group.add_argument("--tests-priority-upper-limit", type=int, metavar="N",
                       help="only definitions with priority ≤ N")
    group.add_argument("--tested-groups", nargs="+", metavar="GROUP",
                       help="only definitions testing one of these groups (e.g. string hash)")
    group.add_argument("--tested-commands", nargs="+", metavar="COMMAND",
                       help="only definitions testing one of these commands (e.g. get hset)")
    group.add_argument("--topologies", nargs="+", metavar="NAME",
                       help="only these topologies of each definition (e.g. oss-standalone)")
    group.add_argument("--override-test-time", type=int, metavar="S",
                       help="replace each memtier client's --test-time by S seconds")
    group.add_argument("--cap-request-bound", action="store_true",
                       help="with --override-test-time S: request-bound memtier clients (-n) "
                            "stop at their requests or S seconds, whichever comes first "
                            "(default: they run whole)")
    group.add_argument("--ignore-resources", action="store_true",
                       help="plan and run definitions whose resources.requests memory does "
                            "not fit this machine (refused by default)")


def add_snapshot_args(p: argparse.ArgumentParser, reuse: bool = True) -> None:
    """The dataset snapshot cache of ``--definitions`` (docs/DEFINITIONS.md); with
    ``reuse``, ``--no-server-reuse`` too (compare's interleaved sides never reuse)."""
    group = p.add_argument_group(
        "dataset snapshots", "--definitions: a preload's RDB cached and loaded by later "
        "tests with the same preload (docs/DEFINITIONS.md, Snapshots)")
    group.add_argument("--no-snapshots", action="store_true",
                       help="preload every test for real; save no snapshot")
    if reuse:
        group.add_argument("--no-server-reuse", action="store_true",
                           help="a fresh server for every test (default: a test whose "
                                "dataset and server match the one before runs on the server "
                                "it left, when that one wrote nothing)")
    else:
        p.set_defaults(no_server_reuse=True)
    group.add_argument("--snapshot-cache", type=local_path, metavar="DIR",
                       help="the snapshot cache (default: $KVPERF_SNAPSHOT_CACHE, else "
                            "~/.cache/kvperf/snapshots); its cap: $KVPERF_SNAPSHOT_CACHE_SIZE "
                            "(default 20g)")
    group.add_argument("--dataset-rdb", action="append", default=[], metavar="NAME=PATH",
                       help="a local RDB for the definitions whose dataset is the URL or "
                            "file named NAME (its file name, e.g. dump.rdb); repeatable")


def _words(values: list[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def definition_flags(args: argparse.Namespace) -> DefinitionFlags:
    return DefinitionFlags(
        None if args.definitions is None else tuple(args.definitions), args.tests_regexp,
        args.tests_priority_lower_limit, args.tests_priority_upper_limit,
        _words(args.tested_groups), _words(args.tested_commands), _words(args.topologies),
        args.override_test_time, args.cap_request_bound, args.ignore_resources)


def with_snapshot_flags(args: argparse.Namespace, flags: DefinitionFlags) -> DefinitionFlags:
    """``flags`` with the snapshot flags (add_snapshot_args)."""
    return replace(flags, no_snapshots=args.no_snapshots, snapshot_cache=args.snapshot_cache,
                   dataset_rdbs=tuple(args.dataset_rdb), no_server_reuse=args.no_server_reuse)


def print_definitions(cli: Cli, found: DefinitionsOutcome) -> int:
    """The dry run's plans, or the results and KPI tables of a definitions run."""
    for planned in found.planned:
        cli.out.print(planned, highlight=False)
    ran = found.ran
    if ran is None:
        if not found.runnable:
            cli.err.print("[red]none of the selected test(s) can run here (reasons above)"
                          "[/red]")
        return found.exit_code
    if ran.summary is None:
        return print_interrupted(cli, ran, "test(s)")
    out, rows = cli.out, ran.summary.rows
    out.print(results_table(rows, ran.title), highlight=False)
    kpis = kpi_table(rows)
    if kpis is not None:
        out.print(kpis, highlight=False)
    if found.gates_path is not None:
        out.print(f"gates: {found.gates_path}", highlight=False)
    print_profile(out, ran.profile)
    out.print(f"results: {ran.summary.metrics_path}", highlight=False)
    print_disturbed(cli.out, cli.err, rows)
    if ran.summary.failed:
        cli.err.print(f"[red]{ran.summary.failed} of {len(rows)} test(s) failed[/red]")
    if ran.summary.kpis_failed:
        cli.err.print(f"[red]{ran.summary.kpis_failed} KPI(s) failed[/red]")
    return ran.exit_code
