"""`kvperf` entry point: builds the parser, dispatches, maps errors to exit codes.

Exit codes: 0 ok · 1 a trial failed · 2 bad input (config, flags) · 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from types import FrameType

from rich.console import Console
from rich.markup import escape

from kvperf import __version__
from kvperf.cli import alerts as alerts_cmd
from kvperf.cli import bisect as bisect_cmd
from kvperf.cli import cache as cache_cmd
from kvperf.cli import clients as clients_cmd
from kvperf.cli import compare as compare_cmd
from kvperf.cli import compare_results as compare_results_cmd
from kvperf.cli import db as db_cmd
from kvperf.cli import doctor as doctor_cmd
from kvperf.cli import history as history_cmd
from kvperf.cli import noise as noise_cmd
from kvperf.cli import regressions as regressions_cmd
from kvperf.cli import report as report_cmd
from kvperf.cli import run as run_cmd
from kvperf.cli import suites as suites_cmd
from kvperf.cli import trace as trace_cmd
from kvperf.cli import track as track_cmd
from kvperf.cli._common import Cli
from kvperf.core.errors import Interrupted, KvperfError
from kvperf.core.proc import leave_realtime
from kvperf.pipeline.world import World


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kvperf",
        description="Benchmark Valkey and other Redis-protocol servers: real servers, real "
                    "load, results you can defend.",
    )
    parser.add_argument("--version", action="version", version=f"kvperf {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    run_cmd.add_parser(subparsers)
    compare_cmd.add_parser(subparsers)
    compare_results_cmd.add_parser(subparsers)
    bisect_cmd.add_parser(subparsers)
    noise_cmd.add_parser(subparsers)
    db_cmd.add_parser(subparsers)
    history_cmd.add_parser(subparsers)
    track_cmd.add_parser(subparsers)
    regressions_cmd.add_parser(subparsers)
    alerts_cmd.add_parser(subparsers)
    doctor_cmd.add_parser(subparsers)
    report_cmd.add_parser(subparsers)
    suites_cmd.add_parser(subparsers)
    clients_cmd.add_parser(subparsers)
    cache_cmd.add_parser(subparsers)
    trace_cmd.add_parser(subparsers)
    return parser


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(f"received {signal.Signals(signum).name}")


_UNRAISABLE_BEFORE = sys.unraisablehook


def _redeliver(unraisable: sys.UnraisableHookArgs) -> None:
    """A signal whose exception is raised where Python only prints exceptions — an at-fork
    hook (logging's, around every fork), a ``__del__`` — would be lost: the run went on
    and exited 0 after a SIGTERM (test_track_corpus, once in CI). Send the signal again, so
    its handler raises at the next ordinary line, once this hook has returned (sent from
    this hook, the handler would run inside it, where its exception is only printed again);
    anything else is printed as before."""
    exc = unraisable.exc_value
    if isinstance(exc, KeyboardInterrupt | Interrupted):
        again = signal.SIGINT if isinstance(exc, KeyboardInterrupt) else signal.SIGTERM
        threading.Timer(0.01, os.kill, (os.getpid(), again)).start()
    else:
        _UNRAISABLE_BEFORE(unraisable)


def main(argv: list[str] | None = None, world: World | None = None) -> int:
    """Run kvperf; returns the exit code (the console script exits with it). ``world``:
    the seams its work goes through (pipeline/world.py; tests pass recording fakes)."""
    leave_realtime()  # under chrt: only what kvperf measures keeps the real-time policy
    console = Console(stderr=True, width=None if sys.stderr.isatty() else 220)
    signal.signal(signal.SIGTERM, _raise_interrupted)
    sys.unraisablehook = _redeliver
    # Ctrl-C is part of the contract (exit 130, finished results kept, servers stopped) even
    # when kvperf inherits SIGINT as ignored, as a background job of a script does.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args = build_parser().parse_args(argv)
    cli = Cli(console, Console(width=None if sys.stdout.isatty() else 220), world or World())
    try:
        code: int = args.handler(args, cli)
        return code
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/yellow]")
        return Interrupted.exit_code
    except KvperfError as exc:
        console.print(f"[red]kvperf: {escape(str(exc))}[/red]", highlight=False, soft_wrap=True)
        return exc.exit_code


def entry() -> None:
    sys.exit(main())
