"""`kvperf bisect GOOD BAD --repo R`: the first commit that moved a series' metric, by
interleaved A/B steps: flags → the checked request (pipeline/request/bisect.py) →
pipeline/bisect.py on the live bench → the steps and the answer → the exit code."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from rich.markup import escape

from kvperf.cli._bisection import print_result
from kvperf.cli._builds import add_build_args, build_flags
from kvperf.cli._choices import enum_choice
from kvperf.cli._clients import add_client_repo, add_clients_dir
from kvperf.cli._common import Cli, ConsoleHooks
from kvperf.cli._definitions import (
    add_definition_args,
    add_snapshot_args,
    definition_flags,
    with_snapshot_flags,
)
from kvperf.cli._module_sides import (
    add_module_source_args,
    module_flags,
    refuse_module_flags,
)
from kvperf.cli._modules import add_module_args
from kvperf.cli._paths import command_path, local_path
from kvperf.cli._store import add_db_options, add_results_dir, writer_flags
from kvperf.core.kinds import Measure
from kvperf.pipeline.commands.bisect import bisect, bisect_request
from kvperf.pipeline.commands.module_sides import module_sides_request
from kvperf.pipeline.commands.vocabulary import (
    BUDGET_FACTOR,
    COUNTED_METRICS,
    DEFAULT_MIN_EFFECT,
    DEFAULT_RUNS,
    TIMING_METRICS,
)
from kvperf.pipeline.request.bisect import BisectFlags, BisectRequest


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "bisect", help="find the first commit of GOOD..BAD that moved a series' metric",
        description="Binary search over GOOD..BAD (first parents): each step builds a commit "
                    "and compares it with GOOD by interleaved A/B runs, judged by compare's "
                    "verdict rule. Step 0 (GOOD vs BAD) must find a regression or an "
                    "improvement; commits that do not build, or stay inconclusive within "
                    "--max-runs, are skipped. The log (bisect.json) is written after every "
                    "batch of runs: --resume continues it. With --definitions, each step "
                    "runs the selected benchmark definitions' tests (timing) and --series "
                    "names a test.")
    p.add_argument("good", metavar="GOOD", help="a ref where the metric is as before")
    p.add_argument("bad", metavar="BAD", help="a later ref where it moved")
    p.add_argument("--config", type=local_path,
                   help="JSON config (default: built-in SET/GET matrix)")
    p.add_argument("--series", help="the series to follow, e.g. 'SET P=16' (COMMAND and "
                                    "key=value of d, P, c, io; required when the config "
                                    "has more than one series)")
    p.add_argument("--metric", help=f"default: {COUNTED_METRICS[0]} with --measure "
                                    f"instructions, rps with timing; one of "
                                    f"{', '.join(TIMING_METRICS + COUNTED_METRICS)}")
    p.add_argument("--measure", type=enum_choice(Measure),
                   choices=(Measure.TIMING, Measure.INSTRUCTIONS),
                   help="instructions (default where valgrind is installed) or timing")
    p.add_argument("--runs", type=int, help="runs per side per step (default "
                   f"{DEFAULT_RUNS[Measure.INSTRUCTIONS]} instructions, "
                   f"{DEFAULT_RUNS[Measure.TIMING]} timing)")
    p.add_argument("--max-runs", type=int, help="runs per side an inconclusive step may "
                   f"grow to before it is skipped (default {BUDGET_FACTOR} × --runs)")
    p.add_argument("--min-effect", type=float, metavar="PCT",
                   help="the smallest change that counts, in percent: with timing, the "
                        "followed metric's smallest flagged change and the margin within "
                        "which a step reads no change (default: the metric's own, 5%% for "
                        "latency, 2%% for throughput and CPU; a larger one settles neutral "
                        "steps in fewer runs when the change sought is large); with "
                        f"instructions, the smallest change flagged (default "
                        f"{DEFAULT_MIN_EFFECT * 100:g}%%)")
    p.add_argument("--resume", action="store_true",
                   help="continue the bisection logged under --results-dir/--label")
    p.add_argument("--tool", choices=("kvload", "valkey-benchmark", "redis-benchmark"),
                   help="load tool (default: kvload if installed)")
    add_results_dir(p)
    p.add_argument("--label", help="results subdirectory (default: bisect-GOOD-BAD shas)")
    p.add_argument("--seed", type=int, help="seed of the side orders (default: random, "
                                            "recorded per batch)")
    p.add_argument("--output", type=local_path, help="write a markdown report here")
    add_db_options(p)
    add_build_args(p)
    add_definition_args(p)
    add_snapshot_args(p, reuse=False)
    add_module_args(p)
    add_module_source_args(p, valkey_path=True)
    p.add_argument("--server-bin", type=command_path, metavar="PATH",
                   help="with --module-repo: the fixed server every module build runs on")
    p.add_argument("--client", metavar="NAME", help="bisect a client library's commits "
                   "(GOOD and BAD are refs of its --client-repo): each step runs the harness "
                   "with the library at a commit against one server (docs/CLIENTS.md)")
    add_client_repo(p)
    add_clients_dir(p)
    p.set_defaults(handler=handle)


def request(args: argparse.Namespace) -> BisectRequest:
    """argv's flags → the checked request (UsageError, exit 2, before any fetch or build)."""
    return bisect_request(BisectFlags(
        args.good, args.bad, series=args.series, metric=args.metric, measure=args.measure,
        runs=args.runs, max_runs=args.max_runs, min_effect=args.min_effect,
        resume=args.resume, tool=args.tool, config=args.config, label=args.label,
        seed=args.seed, output=args.output, build=build_flags(args),
        store=writer_flags(args), client=args.client,
        definitions=with_snapshot_flags(args, definition_flags(args)),
        client_repos=tuple(args.client_repo), clients_dirs=tuple(args.clients_dir)))


def handle(args: argparse.Namespace, cli: Cli) -> int:
    refuse_module_flags(args)
    modules = None
    if args.module_repo is not None:  # module commits on one server (cli/_module_sides.py)
        args.repo = args.repo or args.module_repo
        args.measure = args.measure or Measure.TIMING  # module scenarios are timed
        modules = module_sides_request(replace(
            module_flags(args, "bisect", (args.good, args.bad),
                         (args.server_bin,) if args.server_bin else ()),
            seed=args.seed, measure=args.measure))
    asked = request(args)
    found = bisect(asked, modules, cli.world, ConsoleHooks(cli))
    if found.undecided is not None:
        cli.err.print(f"[red]{escape(found.undecided)}[/red]: nothing to bisect; log: "
                      f"{found.result.directory / 'bisect.json'}", soft_wrap=True)
        return found.exit_code
    print_result(cli.out, found.result, found.report)
    return found.exit_code
