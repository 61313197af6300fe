"""``--module-repo R [--module-build CMD] [--module-artifact GLOB]`` on ``compare`` (two
module refs) and ``run --commits`` (module refs): the module built at each ref and its
scenarios (``--module-config``) run on one fixed server, sides interleaved in rounds
(pipeline/commands/module_sides.py); then the verdicts (compare) or each side's table. Exit
codes as for compare: 0, 1 when a trial failed (a side whose module did not build) or with
--fail-on-regression a regression, 2 for bad input (before any build or server)."""

from __future__ import annotations

import argparse

from rich.markup import escape

from kvperf.cli._builds import build_flags
from kvperf.cli._common import Cli, ConsoleHooks
from kvperf.cli._paths import local_path
from kvperf.cli._profile import print_differentials, print_profile
from kvperf.cli._store import writer_flags
from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.module_sides import (
    ModuleSidesRan,
    module_sides_request,
    run_sides,
)
from kvperf.pipeline.request.module_sides import ModuleSidesFlags, ModuleSidesRequest
from kvperf.report.comparison import terminal_table
from kvperf.report.instructions import terminal_tables as instruction_tables
from kvperf.report.scenarios import results_table


def add_module_source_args(p: argparse.ArgumentParser, valkey_path: bool = False) -> None:
    g = p.add_argument_group(
        "module builds", "refs are commits of a module repository, built and run on one "
                         "fixed server (docs/guide/modules.md \"Module builds\")")
    g.add_argument("--module-repo", metavar="R",
                   help="the module's git repository (path or URL): the refs are its commits")
    g.add_argument("--module-build", metavar="CMD",
                   help="the build command, run with sh -c in the module's worktree "
                        "(default: detected: Cargo.toml → cargo build --release, "
                        "CMakeLists.txt → cmake + build, Makefile → make); placeholders "
                        "{server_src} {jobs} {tree} (also $KVPERF_SERVER_SRC …)")
    g.add_argument("--module-artifact", metavar="GLOB",
                   help="the built .so, a glob relative to the worktree (default: the "
                        "recipe's, e.g. target/release/*.so)")
    g.add_argument("--server-ref", metavar="REF",
                   help="with --module-repo: the fixed server built from --repo at REF (its "
                        "tree is {server_src})")
    if valkey_path:  # run declares --valkey-path itself
        g.add_argument("--valkey-path", type=local_path, metavar="DIR",
                       help="with --module-repo: the fixed server of a built Valkey source "
                            "tree (its tree is {server_src})")


def refuse_module_flags(args: argparse.Namespace) -> None:
    if args.module_repo is None and (args.module_build or args.module_artifact or
                                     args.server_ref):
        raise UsageError("--module-build, --module-artifact and --server-ref need "
                         "--module-repo R")


def module_flags(args: argparse.Namespace, kind: str, refs: tuple[str, ...],
                 server_bins: tuple[str, ...]) -> ModuleSidesFlags:
    """The module flags every command that takes --module-repo declares (add_module_args,
    add_module_source_args, the build and store flags); each command adds its own with
    ``dataclasses.replace``."""
    if len(server_bins) > 1:
        raise UsageError("--module-repo runs every module build on one server: give "
                         "--server-bin once")
    return ModuleSidesFlags(
        kind=kind, refs=refs, repo=args.module_repo, module_config=args.module_config,
        build=args.module_build, artifact=args.module_artifact, module=args.module,
        module_paths=tuple(args.module_path or ()), groups=tuple(args.groups or ()),
        scenarios=tuple(args.scenarios or ()),
        server_bin=server_bins[0] if server_bins else None, server_ref=args.server_ref,
        valkey_path=args.valkey_path, runs=args.runs, label=args.label,
        builds=build_flags(args), store=writer_flags(args))


def handle_module_sides(cli: Cli, flags: ModuleSidesFlags) -> int:
    """compare / run --commits with --module-repo: run, render, exit code."""
    request: ModuleSidesRequest = module_sides_request(flags)
    found = run_sides(request, flags.kind, cli.world, ConsoleHooks(cli))
    out = cli.out
    for name, title, rows, why in found.sides:
        out.print(results_table(rows, title), highlight=False)
        if why:
            cli.err.print(f"[red]side {name} did not run: its module did not build[/red] "
                          f"({escape(why)})", soft_wrap=True)
    _verdicts(cli, found)
    out.print(f"results: {found.out_dir} (order seed {found.seed})", highlight=False)
    found.check_store()
    if found.failed:
        cli.err.print(f"[red]{found.failed} scenario run(s) failed[/red]")
    return found.exit_code


def _verdicts(cli: Cli, found: ModuleSidesRan) -> None:
    """compare: the verdicts or instruction verdicts, the report, profiles, differentials."""
    if found.names is None:
        return
    out = cli.out
    if found.instructions is not None:
        for table in instruction_tables(found.instructions, *found.names):
            out.print(table)
    elif found.verdicts:
        out.print(terminal_table(found.verdicts, found.names[0], found.names[1]))
    if found.report is not None:
        out.print(f"markdown report: {found.report}", highlight=False)
    print_differentials(out, found.counted)
    print_profile(out, found.profile)
    for made in found.differentials:
        print_differentials(out, made)
