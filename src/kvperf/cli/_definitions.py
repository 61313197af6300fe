"""`kvperf run --definitions PATH… [selection] [--dry-run]`: benchmark definitions as input.

The selection flags are the corpus runner's (redis-benchmarks-specification); they apply
only with --definitions. --dry-run prints each plan or refusal; otherwise the plans run
(pipeline/definitions.py) and the exit code is 0 when every test ran and every KPI passed,
1 when a test failed or a KPI did not hold, 2 when nothing could run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from kvperf.cli._measure import default_runs
from kvperf.cli._paths import local_path
from kvperf.cli._profile import print_profile, profile_settings
from kvperf.cli._store import execute_persisting, live_store, log_to
from kvperf.core.errors import Interrupted, UsageError
from kvperf.definitions.dryrun import render_result, render_summary, summarize
from kvperf.definitions.loader import load
from kvperf.definitions.plan import Plan, Refusal, plan_all
from kvperf.definitions.selection import Selection, check, select
from kvperf.pipeline import quick
from kvperf.pipeline.definition_sides import (
    DefinitionSides,
    prepare_definition_sides,
    run_definition_sides,
)
from kvperf.pipeline.definitions import (
    DefinitionOptions,
    DefinitionRun,
    DefinitionRunner,
    DefinitionsSummary,
    prepare_definitions,
)
from kvperf.pipeline.gates import GATES_FILE, write_kpi_gates
from kvperf.pipeline.sides import Side, default_label
from kvperf.report.definitions import DefinitionProgress, kpi_table, results_table
from kvperf.results.row import Row

# run's own options that mean nothing with --definitions (flag, attribute, its default)
_CLASHES = (("--config", "config", None), ("--commits", "commits", None),
            ("--baseline", "baseline", None), ("--mode", "mode", "both"),
            ("--use-running-server", "use_running_server", False))


def _names(values: list[str] | None) -> tuple[str, ...]:
    """Names given as several words and/or comma-separated."""
    return tuple(n.strip() for v in values or [] for n in v.split(",") if n.strip())


def add_definition_args(p: Any) -> None:
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


def _selection(args: argparse.Namespace) -> Selection:
    if args.override_test_time is not None and args.override_test_time < 1:
        raise UsageError(f"--override-test-time must be at least 1, got "
                         f"{args.override_test_time}")
    return Selection(args.tests_regexp, args.tests_priority_lower_limit,
                     args.tests_priority_upper_limit, _names(args.tested_groups),
                     _names(args.tested_commands), _names(args.topologies))


def uses_definition_flags(args: argparse.Namespace) -> bool:
    return (args.tests_regexp != ".*" or any(
        getattr(args, name) is not None for name in (
            "tests_priority_lower_limit", "tests_priority_upper_limit", "tested_groups",
            "tested_commands", "topologies", "override_test_time")))


def _check_clashes(args: argparse.Namespace) -> None:
    for flag, attribute, default in _CLASHES:
        if getattr(args, attribute, default) != default:
            raise UsageError(f"{flag} does not apply with --definitions")


def _planned(args: argparse.Namespace) -> tuple[Plan | Refusal, ...]:
    """Load, select and plan the definitions the flags name (exit 2 on bad input)."""
    selection = _selection(args)
    loaded = load(Path(p) for p in args.definitions)
    check(selection, loaded.definitions, set(loaded.topologies))
    chosen = select(loaded.definitions, selection)
    if not chosen:
        raise UsageError(f"the selection matches none of the {len(loaded.definitions)} "
                         "loaded definition(s)")
    return plan_all(chosen, loaded.topologies, args.override_test_time,
                    selection.topologies, file_exists=Path.is_file)


def _print_refused(console: Console, refused: list[tuple[str, str, str]]) -> None:
    for name, topology, why in refused:
        console.print(f"[yellow]not run[/yellow] {escape(f'{name} [{topology}]: {why}')}",
                      soft_wrap=True)


def handle_definitions(args: argparse.Namespace, console: Console) -> int:
    """Load, select and plan; print every plan or refusal (exit 0), or stop (exit 2)."""
    _check_clashes(args)
    results = _planned(args)
    out = Console(width=None if sys.stdout.isatty() else 200, highlight=False)
    if not args.dry_run:
        return _execute(args, results, console, out)
    for result in results:
        out.print(render_result(result))
    out.print(render_summary(summarize(results)))
    return 0


def _execute(args: argparse.Namespace, results: tuple[Plan | Refusal, ...], console: Console,
             out: Console) -> int:
    plans = tuple(r for r in results if isinstance(r, Plan))
    refused = [(r.name, r.topology, r.reason) for r in results if isinstance(r, Refusal)]
    options = DefinitionOptions(args.results_dir, args.label, args.server_bin,
                                profile=profile_settings(args))
    run = prepare_definitions(plans, options)
    refused += [(p.name, p.topology.name, why) for p, why in run.refused]
    _print_refused(console, refused)
    if not run.plans:
        raise UsageError(f"none of the {len(results)} selected test(s) can run here "
                         "(reasons above)")
    log_to(run.out_dir)
    summary = execute_persisting(
        args, options.results_dir,
        lambda store: DefinitionRunner(run, DefinitionProgress(console), store), console,
        "test")
    return Interrupted.exit_code if summary is None else _report(summary, run, out, console)


def _report(summary: DefinitionsSummary, run: DefinitionRun, out: Console,
            console: Console) -> int:
    out.print(results_table(summary.rows, f"{run.context.label} · {run.driver.name} "
                                          f"{run.driver.version}"))
    kpis = kpi_table(summary.rows)
    if kpis is not None:
        out.print(kpis)
    if write_kpi_gates(summary.rows, run.out_dir):
        out.print(f"gates: {run.out_dir / GATES_FILE}")
    print_profile(out, summary.rows, run.out_dir)
    out.print(f"results: {summary.metrics_path}")
    if summary.failed:
        console.print(f"[red]{summary.failed} of {len(summary.rows)} test(s) failed[/red]")
    if summary.kpis_failed:
        console.print(f"[red]{summary.kpis_failed} KPI(s) failed[/red]")
    return 1 if summary.failed or summary.kpis_failed else 0


# compare's own options that mean nothing with --definitions (flag, attribute, its default)
_COMPARE_CLASHES = (("--config", "config", None), ("--schedule duet", "schedule", "alternate"),
                    ("--measure", "measure", "timing"), ("--tool", "tool", None))


def compare_definitions(args: argparse.Namespace, sides: list[Side],
                        console: Console) -> tuple[dict[str, list[Row]], DefinitionSides]:
    """`compare A B --definitions …`: plan, prepare every side, run them interleaved."""
    for flag, attribute, default in _COMPARE_CLASHES:
        if getattr(args, attribute, default) not in (default, None):
            raise UsageError(f"{flag} does not apply with --definitions")
    results = planned_definitions(args, console)
    plans = tuple(r for r in results if isinstance(r, Plan))
    runs = quick.runs(default_runs(args, getattr(args, "default_runs", 1)))
    out_dir = args.results_dir / (args.label or default_label("compare"))
    return run_on_sides(args, plans, sides, out_dir, runs, args.seed, console)


def planned_definitions(args: argparse.Namespace,
                        console: Console) -> tuple[Plan | Refusal, ...]:
    """The selected definitions planned (exit 2 on bad input); refusals are printed."""
    results = _planned(args)
    _print_refused(console, [(r.name, r.topology, r.reason) for r in results
                             if isinstance(r, Refusal)])
    return results


def run_on_sides(args: argparse.Namespace, plans: tuple[Plan, ...], sides: list[Side],
                 out_dir: Path, runs: int, seed: int | None,
                 console: Console) -> tuple[dict[str, list[Row]], DefinitionSides]:
    """Prepare every side (exit 2 when no test runs on all), run the rounds interleaved
    with the live store (compare --definitions, and each batch of bisect --definitions)."""
    prepared = prepare_definition_sides(plans, sides, out_dir, runs, seed,
                                        profile_settings(args))
    _print_refused(console, [(p.name, p.topology.name, why) for p, why in prepared.refused])
    if not prepared.plans:
        raise UsageError(f"none of the {len(plans)} selected test(s) can run on every "
                         "side (reasons above)")
    console.print(f"{len(prepared.plans)} test(s) × {len(sides)} sides × {runs} round(s), "
                  f"order seed {prepared.seed}")
    log_to(out_dir)
    with live_store(args, args.results_dir) as store:
        rows = run_definition_sides(prepared, DefinitionProgress(console), store)
    if store is not None:
        store.check()
    return rows, prepared
