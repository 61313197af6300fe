"""`kvperf run --module-config FILE [--module NAME] [--module-path SO …] [--groups 1,2]
[--scenarios a,b]`: the seed's module-test format (``test_groups`` → ``scenarios``).

``--config FILE`` runs such a file too (detected by its ``test_groups``). Exit codes: 0 when
every scenario ran, 1 when one failed, 2 for bad input (config, selection, files).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from kvperf.cli._paths import local_path
from kvperf.cli._profile import print_profile
from kvperf.cli._store import execute_persisting, log_to
from kvperf.config.scenarios import detect_module_config, load_module_config, select
from kvperf.core.errors import Interrupted, UsageError
from kvperf.pipeline.modules import ModuleOptions, ModuleRunner, prepare_modules
from kvperf.report.scenarios import ScenarioProgress, plan_table, results_table

# run's own options that mean nothing with module scenarios (flag, attribute, its default)
_CLASHES: tuple[tuple[str, str, object], ...] = (
    ("--commits", "commits", None), ("--baseline", "baseline", None), ("--mode", "mode", "both"),
    ("--use-running-server", "use_running_server", False),
    ("--profile (give the config profiling_sets)", "profile", False),
    ("--gate", "gate", []), ("--suite", "suite", None))


def _names(values: list[str] | None) -> tuple[str, ...]:
    return tuple(n.strip() for v in values or [] for n in v.split(",") if n.strip())


def add_module_args(p: Any) -> None:
    group = p.add_argument_group(
        "module scenarios", "the seed's test_groups format (README \"Module scenarios\")")
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


def module_config_path(args: argparse.Namespace) -> Path | None:
    """The module-test config this run uses, if any (``--config`` detected by content)."""
    if args.module_config is not None:
        if args.config is not None:
            raise UsageError("give --module-config or --config, not both")
        return Path(args.module_config)
    if args.config is not None and detect_module_config(Path(args.config)):
        return Path(args.config)
    if args.groups or args.scenarios or args.module:
        raise UsageError("--groups, --scenarios and --module apply to a module-test config "
                         "(--module-config FILE); --module-path works with any config")
    return None


def handle_modules(args: argparse.Namespace, path: Path, console: Console) -> int:
    for flag, attribute, default in _CLASHES:
        if getattr(args, attribute, default) not in (default, None, False, []):
            raise UsageError(f"{flag} does not apply to module scenarios")
    config = load_module_config(path)
    selected = select(config, _names(args.groups), _names(args.scenarios))
    if args.dry_run:
        Console(width=None if sys.stdout.isatty() else 200, highlight=False).print(
            plan_table(config, selected))
        return 0
    options = ModuleOptions(config, selected, args.results_dir, args.label, args.server_bin,
                            args.module, tuple(Path(p) for p in args.module_path or ()),
                            quick=bool(getattr(args, "quick", False)))
    run = prepare_modules(options)
    for note in run.notes:
        console.print(f"[yellow]note[/yellow]: {note}", soft_wrap=True, highlight=False)
    log_to(run.out_dir)
    out = Console(width=None if sys.stdout.isatty() else 200, highlight=False)
    summary = execute_persisting(
        args, options.results_dir,
        lambda store: ModuleRunner(run, ScenarioProgress(console), store), console,
        "scenario")
    if summary is None:
        return Interrupted.exit_code
    out.print(results_table(summary.rows, f"{run.context.label} · kvload "
                                          f"{run.context.tool_version}"))
    print_profile(out, summary.rows, run.out_dir)
    out.print(f"results: {summary.metrics_path}")
    if summary.failed:
        console.print(f"[red]{summary.failed} of {len(summary.rows)} scenario(s) failed[/red]")
        return 1
    return 0
