"""``--definitions PATH… [selection]`` as flags (run, compare, bisect), and what a
definitions run shows: each plan or refusal with --dry-run, else the results and KPI tables
(pipeline/definitions/definition_runs.py runs them). Exit codes: 0 when every test ran and every KPI
passed, 1 when a test failed or a KPI did not hold, 2 when nothing could run."""

from __future__ import annotations

import argparse

from kvperf.cli._common import Cli
from kvperf.cli._disturbed import print_disturbed
from kvperf.cli._paths import local_path
from kvperf.cli._profile import print_profile
from kvperf.core.errors import Interrupted
from kvperf.definitions.dryrun import render_result, render_summary, summarize
from kvperf.pipeline.definitions.definition_runs import DefinitionsRan
from kvperf.pipeline.definitions.definitions import DefinitionRun
from kvperf.pipeline.request.common import DefinitionFlags
from kvperf.pipeline.request.run import DefinitionsRequest
from kvperf.pipeline.run.gates import GATES_FILE, write_kpi_gates
from kvperf.report.definitions import kpi_table, results_table
from kvperf.results.row import Row


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
    group.add_argument("--ignore-resources", action="store_true",
                       help="plan and run definitions whose resources.requests memory does "
                            "not fit this machine (refused by default)")


def _words(values: list[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def definition_flags(args: argparse.Namespace) -> DefinitionFlags:
    return DefinitionFlags(
        None if args.definitions is None else tuple(args.definitions), args.tests_regexp,
        args.tests_priority_lower_limit, args.tests_priority_upper_limit,
        _words(args.tested_groups), _words(args.tested_commands), _words(args.topologies),
        args.override_test_time, args.ignore_resources)


def print_plans(cli: Cli, request: DefinitionsRequest) -> int:
    """--dry-run: each plan or refusal, and the summary; exit 0."""
    for result in request.planned:
        cli.out.print(render_result(result), highlight=False)
    cli.out.print(render_summary(summarize(request.planned)), highlight=False)
    return 0


def _tools(rows: list[Row], run: DefinitionRun) -> str:
    """The load tools the tests ran (a redis-benchmark definition's is not memtier's front
    end), else the memtier front end the run found."""
    used = dict.fromkeys(tool for row in rows
                         for tool in (row.get("definition") or {}).get("tools", []))
    return ", ".join(used) or f"{run.driver.name} {run.driver.version}"


def print_definitions(cli: Cli, ran: DefinitionsRan) -> int:
    """The results and KPI tables of a definitions run (gates.json beside them)."""
    persisted, run, out = ran.persisted, ran.run, cli.out
    summary = persisted.summary
    if summary is None:
        cli.err.print(f"[yellow]interrupted[/yellow]: {persisted.kept} finished test(s) kept "
                      f"in {persisted.path}")
        return Interrupted.exit_code
    out.print(results_table(summary.rows, f"{run.context.label} · {_tools(summary.rows, run)}"),
              highlight=False)
    kpis = kpi_table(summary.rows)
    if kpis is not None:
        out.print(kpis, highlight=False)
    if write_kpi_gates(summary.rows, run.out_dir):
        out.print(f"gates: {run.out_dir / GATES_FILE}", highlight=False)
    print_profile(out, summary.rows, run.out_dir)
    out.print(f"results: {summary.metrics_path}", highlight=False)
    print_disturbed(cli.out, cli.err, summary.rows)
    if summary.failed:
        cli.err.print(f"[red]{summary.failed} of {len(summary.rows)} test(s) failed[/red]")
    if summary.kpis_failed:
        cli.err.print(f"[red]{summary.kpis_failed} KPI(s) failed[/red]")
    return summary.exit_code
