"""`kvperf run --definitions PATH… [selection] --dry-run`: benchmark definitions as input.

The selection flags are the corpus runner's (redis-benchmarks-specification); they apply
only with --definitions. Execution of the plans is not wired yet: without --dry-run the
command stops with exit 2 before anything starts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from kvperf.cli._paths import local_path
from kvperf.core.errors import UsageError
from kvperf.definitions.dryrun import render_result, render_summary, summarize
from kvperf.definitions.loader import load
from kvperf.definitions.plan import plan_all
from kvperf.definitions.selection import Selection, check, select

NOT_YET = ("running definitions lands with issue 12's execution stage (servers, preload "
           "and kvload memtier per plan); for now use --dry-run to see each plan")
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


def handle_definitions(args: argparse.Namespace, console: Console) -> int:
    """Load, select and plan; print every plan or refusal (exit 0), or stop (exit 2)."""
    _check_clashes(args)
    selection = _selection(args)
    loaded = load(Path(p) for p in args.definitions)
    check(selection, loaded.definitions, set(loaded.topologies))
    chosen = select(loaded.definitions, selection)
    if not chosen:
        raise UsageError(f"the selection matches none of the {len(loaded.definitions)} "
                         "loaded definition(s)")
    results = plan_all(chosen, loaded.topologies, args.override_test_time,
                       selection.topologies, file_exists=Path.is_file)
    if not args.dry_run:
        raise UsageError(NOT_YET)
    out = Console(width=None if sys.stdout.isatty() else 200, highlight=False)
    for result in results:
        out.print(render_result(result))
    out.print(render_summary(summarize(results)))
    return 0
