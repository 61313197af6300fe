"""``--module-repo R [--module-build CMD] [--module-artifact GLOB]`` on ``compare`` (two
module refs) and ``run --commits`` (module refs): the module built at each ref and its
scenarios (``--module-config``) run on one fixed server, sides interleaved in rounds
(pipeline/module_sides.py); then the verdicts (compare) or each side's table. Exit codes as
for compare: 0, 1 when a trial failed (a side whose module did not build) or with
--fail-on-regression a regression, 2 for bad input (before any build or server)."""

from __future__ import annotations

import argparse

from rich.markup import escape

from kvperf.analysis.comparison import compare_paired
from kvperf.analysis.instructions import DEFAULT_MIN_EFFECT, compare_instructions
from kvperf.analysis.verdict import Verdict
from kvperf.cli._builds import build_flags
from kvperf.cli._common import Cli, ConsoleHooks
from kvperf.cli._disturbed import interference_flags
from kvperf.cli._paths import local_path
from kvperf.cli._profile import print_differentials, print_profile
from kvperf.cli._store import writer_flags
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.pipeline.bisect import BisectRequest, BisectResult
from kvperf.pipeline.module_bisect import run_module_bisect
from kvperf.pipeline.module_sides import ModuleSides, run_module_sides
from kvperf.pipeline.request.common import InterferenceFlags, min_effect, water_line_rule
from kvperf.pipeline.request.module_sides import ModuleSidesFlags, module_sides_request
from kvperf.report.comparison import PAIRED_NOTE, markdown, terminal_table
from kvperf.report.instructions import markdown as instruction_markdown
from kvperf.report.instructions import terminal_tables as instruction_tables
from kvperf.report.scenarios import results_table
from kvperf.results.row import is_ok
from kvperf.sourcebuild.module_builder import ModuleBuild


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


class _Hooks(ConsoleHooks):
    def module_built(self, build: ModuleBuild) -> None:
        """As a server build's line, named a module's."""
        self.built(build.as_build(f"module {build.ref}"), build.cached)


def flags_of(args: argparse.Namespace, kind: str, refs: tuple[str, ...]) -> ModuleSidesFlags:
    bins = args.server_bin if isinstance(args.server_bin, list) else (
        [args.server_bin] if args.server_bin else [])
    if len(bins) > 1:
        raise UsageError("--module-repo runs every module build on one server: give "
                         "--server-bin once")
    return ModuleSidesFlags(
        kind=kind, refs=refs, repo=args.module_repo, module_config=args.module_config,
        build=args.module_build, artifact=args.module_artifact, module=args.module,
        module_paths=tuple(args.module_path or ()), groups=tuple(args.groups or ()),
        scenarios=tuple(args.scenarios or ()), server_bin=bins[0] if bins else None,
        server_ref=args.server_ref,
        valkey_path=getattr(args, "valkey_path", None), runs=args.runs,
        seed=getattr(args, "seed", None),
        label=args.label, builds=build_flags(args), store=writer_flags(args),
        interference=(interference_flags(args) if hasattr(args, "retry_disturbed")
                      else InterferenceFlags()),
        quick=getattr(args, "quick", False),
        measure=getattr(args, "measure", None) or Measure.TIMING)


def bisect_modules(args: argparse.Namespace, cli: Cli, asked: BisectRequest
                   ) -> BisectResult:
    """`bisect GOOD BAD --module-repo R`: the module's commits bisected on one server."""
    sides = module_sides_request(flags_of(args, "bisect", (args.good, args.bad)))
    return run_module_bisect(asked, sides, cli.world, _Hooks(cli))


def handle_module_sides(args: argparse.Namespace, cli: Cli, kind: str,
                        refs: tuple[str, ...]) -> int:
    request = module_sides_request(flags_of(args, kind, refs))
    ran = run_module_sides(request, cli.world, _Hooks(cli))
    return _report(cli, args, ran, kind)


def _verdicts(cli: Cli, args: argparse.Namespace, ran: ModuleSides,
              names: tuple[str, str]) -> bool:
    """The paired verdicts of every metric (and the --output report); whether one
    regressed."""
    rows = ran.result.rows
    rule = water_line_rule(args.water_line) if args.water_line else water_line_rule()
    results = compare_paired(rows["A"], rows["B"], args.metrics, rule)
    if results:
        cli.out.print(terminal_table(results, names[0], names[1]))
    if getattr(args, "output", None):
        args.output.write_text(markdown(results, [], names[0], names[1], note=PAIRED_NOTE))
        cli.out.print(f"markdown report: {args.output}", highlight=False)
    return any(r.decision.verdict is Verdict.REGRESSION for r in results)


def _instruction_verdicts(cli: Cli, args: argparse.Namespace, ran: ModuleSides,
                          names: tuple[str, str]) -> bool:
    """--measure instructions: the instruction verdicts and moved functions, the --output
    report and the differential instruction flamegraphs, as a server compare gives them."""
    rows, out = ran.result.rows, cli.out
    effect = min_effect(args.min_effect) if getattr(args, "min_effect", None) is not None \
        else DEFAULT_MIN_EFFECT
    results = compare_instructions(rows["A"], rows["B"], effect)
    for table in instruction_tables(results, *names):
        out.print(table)
    if getattr(args, "output", None):
        args.output.write_text(instruction_markdown(results, *names, effect))
        out.print(f"markdown report: {args.output}", highlight=False)
    print_differentials(out, rows["A"], rows["B"],
                        (ran.batches["A"].out_dir, ran.batches["B"].out_dir),
                        f"{names[1]} vs {names[0]}", kind="instructions")
    return any(m.decision.verdict is Verdict.REGRESSION for s in results for m in s.metrics)


def _report(cli: Cli, args: argparse.Namespace, ran: ModuleSides, kind: str) -> int:
    out, rows = cli.out, ran.result.rows
    for name, batch in ran.batches.items():
        build = ran.builds[name]
        out.print(results_table(rows[name], f"{name}: module {build.ref} "
                                            f"({build.sha[:12]}) · server "
                                            f"{batch.run.binary.label}"), highlight=False)
        if batch.reason:
            cli.err.print(f"[red]side {name} did not run: its module did not build[/red] "
                          f"({escape(batch.reason.splitlines()[0])})", soft_wrap=True)
    regressed = False
    if kind == "compare":
        names = (f"A {ran.builds['A'].ref}", f"B {ran.builds['B'].ref}")
        judge = (_instruction_verdicts if ran.batches["A"].run.options.measure ==
                 Measure.INSTRUCTIONS else _verdicts)
        regressed = judge(cli, args, ran, names)
        if any(r.get("profile") for r in rows["A"] + rows["B"]):  # the config's profiling_sets
            print_profile(out, rows["A"] + rows["B"], ran.out_dir)
            print_differentials(out, rows["A"], rows["B"],
                                (ran.batches["A"].out_dir, ran.batches["B"].out_dir),
                                f"{names[1]} vs {names[0]}")
    out.print(f"results: {ran.out_dir} (order seed {ran.result.seed})", highlight=False)
    ran.result.check_store()
    failed = sum(1 for side in rows.values() for r in side if not is_ok(r))
    if failed:
        cli.err.print(f"[red]{failed} scenario run(s) failed[/red]")
    return 1 if failed or (regressed and getattr(args, "fail_on_regression", False)) else 0
