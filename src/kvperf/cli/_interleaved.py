"""Shared by `compare`, `noise` and `run --commits`: their common flags, the flags → SidesRequest
mapping, and the interleaved run with progress and the store (pipeline/sides.py runs it)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kvperf.cli._choices import enum_choice
from kvperf.cli._measure import INSTRUCTION_RUNS, MEMORY_KEYS, default_runs
from kvperf.cli._network import add_server_host_args, check_server_host, server_host
from kvperf.cli._paths import local_path
from kvperf.cli._profile import profile_settings
from kvperf.cli._store import add_db_options, add_results_dir, live_store, log_to
from kvperf.core.kinds import Measure, Schedule
from kvperf.pipeline import quick
from kvperf.pipeline.ab import SidesResult
from kvperf.pipeline.duet import DUET_DEFAULT_SECONDS
from kvperf.pipeline.sides import PreparedSides, Side, SidesRequest, prepare_sides
from kvperf.pipeline.sides import check_schedule as check_sides_schedule
from kvperf.pipeline.sides import run_sides as run_planned_sides
from kvperf.report.progress import ProgressReporter


def add_common(p: argparse.ArgumentParser, default_runs: int) -> None:
    p.add_argument("--config", type=local_path,
                   help="JSON config (default: built-in SET/GET matrix)")
    p.add_argument("--runs", type=int, default=None,
                   help=f"interleaved rounds (default {default_runs}; ≥ 5 to flag 5× the CV; "
                        f"{INSTRUCTION_RUNS} with --measure instructions)")
    p.set_defaults(default_runs=default_runs)
    p.add_argument("--tool", choices=("kvload", "valkey-benchmark", "redis-benchmark"),
                   help="load tool (default: kvload if installed)")
    add_results_dir(p)
    p.add_argument("--label", help="results subdirectory (default: derived from the sides)")
    p.add_argument("--seed", type=int, help="seed of the side order (default: random, recorded)")
    add_schedule_argument(p)
    add_db_options(p)
    add_server_host_args(p)


def add_schedule_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--schedule", type=enum_choice(Schedule), choices=tuple(Schedule),
                   default=Schedule.ALTERNATE,
                   help="alternate (default): the sides' trials run one after another in a "
                        "random order per round; duet: they run at the same time on the same "
                        "pinned CPUs, so machine noise hits both alike (needs duration-bound "
                        f"trials; the built-in config then measures {DUET_DEFAULT_SECONDS} s)")


def request_from(args: argparse.Namespace, kind: str, seed: int | None = None
                 ) -> SidesRequest:
    """The interleaved run the flags ask for (runs: --runs, else the command's default)."""
    runs = quick.runs(default_runs(args, getattr(args, "default_runs", 1)))
    return SidesRequest(kind, runs, args.config, args.tool, args.results_dir, args.label,
                        seed, getattr(args, "measure", Measure.TIMING),
                        getattr(args, "schedule", Schedule.ALTERNATE), profile_settings(args),
                        getattr(args, "keys", MEMORY_KEYS))


def check_schedule(args: argparse.Namespace, sides: int) -> None:
    """Refuse a plan that cannot run under --schedule before anything is built (exit 2)."""
    check_sides_schedule(args.config, getattr(args, "measure", Measure.TIMING),
                         getattr(args, "schedule", Schedule.ALTERNATE), sides)


def run_sides(args: argparse.Namespace, request: SidesRequest, sides: list[Side],
              console: Console, store_dir: Path | None = None
              ) -> tuple[SidesResult, PreparedSides]:
    """Prepare every side (all input checks first), then run them interleaved with a
    progress line, rows going to the database unless --no-db (default: kvperf.db in
    ``store_dir``, else in the request's results directory)."""
    plan = prepare_sides(request, sides)
    remote = check_server_host(args, *plan.sides.values())
    log_to(plan.out_dir, echo_warnings=True)  # one logs.txt beside the sides
    described = "  ".join(
        f"{escape(name)}: "
        + (escape(plan.labels.get(name, name)) if p.context.server_version else "not built")
        for name, p in plan.sides.items())
    console.print(f"{described}  rounds: {request.runs}  order seed: {plan.seed}  "
                  f"schedule: {request.schedule}")
    reporter = ProgressReporter(console, plan.trials)
    with (server_host(args, remote) as launcher,
          live_store(args, store_dir or request.results_dir) as store, reporter):
        result = run_planned_sides(plan, reporter, store, launcher)
    return result, plan
