"""`kvperf noise`: an A/A run of one server against itself — this machine's noise, in numbers."""

from __future__ import annotations

import argparse
from typing import Any

from kvperf.cli._builds import add_build_args, build_flags
from kvperf.cli._common import Cli, ConsoleHooks
from kvperf.cli._interleaved import add_common
from kvperf.cli._network import remote_flags
from kvperf.cli._paths import command_path
from kvperf.cli._store import writer_flags
from kvperf.pipeline.commands.noise import noise, noise_request
from kvperf.pipeline.request.sides import NOISE_RUNS, NoiseFlags, NoiseRequest
from kvperf.report.comparison import stop_lines
from kvperf.report.noise import noise_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "noise", help="A/A run: CV per metric and runs needed to flag 3%% and 10%% changes",
        description="Run one server against itself, interleaved, and report the coefficient "
                    "of variation per metric, the interleaved runs the verdict rule needs to "
                    "flag a 3% or 10% change (90% chance, at the level a row has when its "
                    "whole series moves), and any false verdict.")
    p.add_argument("--server-bin", type=command_path,
                   help="server binary (default: the usual resolution)")
    p.add_argument("--commit", metavar="REF", help="build REF of --repo and use its server")
    add_common(p, default_runs=NOISE_RUNS)
    add_build_args(p)
    p.set_defaults(handler=handle)


def request(args: argparse.Namespace) -> NoiseRequest:
    """argv's flags → the checked request (UsageError, exit 2, before any build)."""
    return noise_request(NoiseFlags(
        server_bin=args.server_bin, commit=args.commit, config=args.config, runs=args.runs,
        max_runs=args.max_runs, tool=args.tool, label=args.label, seed=args.seed,
        schedule=args.schedule,
        build=build_flags(args), store=writer_flags(args), remote=remote_flags(args)))


def handle(args: argparse.Namespace, cli: Cli) -> int:
    found = noise(request(args), cli.world, ConsoleHooks(cli))
    cli.out.print(noise_table(found.rows, found.title))
    for line in stop_lines(found.stops):
        cli.out.print(f"rounds · {line}", highlight=False)
    found.check_store()
    return 0
