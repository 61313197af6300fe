"""Shared by `compare`, `noise` and `run --commits`: sides, the interleaved run, progress."""

from __future__ import annotations

import argparse
import secrets
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kvperf.cli._builds import build_provenance
from kvperf.cli._choices import enum_choice
from kvperf.cli._measure import INSTRUCTION_RUNS, default_runs
from kvperf.cli._paths import local_path
from kvperf.cli._store import add_db_options, live_store
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Schedule
from kvperf.pipeline import Prepared, RunOptions, prepare, quick
from kvperf.pipeline.ab import SidesResult, interleave_sides
from kvperf.pipeline.duet import DUET_DEFAULT_SECONDS, check_duet
from kvperf.pipeline.prepare import load_specs
from kvperf.plan.matrix import expand
from kvperf.report.progress import ProgressReporter
from kvperf.sourcebuild.builder import Build


def add_common(p: argparse.ArgumentParser, default_runs: int) -> None:
    p.add_argument("--config", type=local_path,
                   help="JSON config (default: built-in SET/GET matrix)")
    p.add_argument("--runs", type=int, default=None,
                   help=f"interleaved rounds (default {default_runs}; ≥ 5 to flag 5× the CV; "
                        f"{INSTRUCTION_RUNS} with --measure instructions)")
    p.set_defaults(default_runs=default_runs)
    p.add_argument("--tool", choices=("kvload", "valkey-benchmark", "redis-benchmark"),
                   help="load tool (default: kvload if installed)")
    p.add_argument("--results-dir", type=local_path, default="results")
    p.add_argument("--label", help="results subdirectory (default: derived from the sides)")
    p.add_argument("--seed", type=int, help="seed of the side order (default: random, recorded)")
    add_schedule_argument(p)
    add_db_options(p)


def add_schedule_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--schedule", type=enum_choice(Schedule), choices=tuple(Schedule),
                   default=Schedule.ALTERNATE,
                   help="alternate (default): the sides' trials run one after another in a "
                        "random order per round; duet: they run at the same time on the same "
                        "pinned CPUs, so machine noise hits both alike (needs duration-bound "
                        f"trials; the built-in config then measures {DUET_DEFAULT_SECONDS} s)")


def check_schedule(args: argparse.Namespace, sides: int) -> None:
    """Refuse a plan that cannot run under --schedule before anything is built (exit 2)."""
    if getattr(args, "schedule", Schedule.ALTERNATE) != Schedule.DUET:
        return
    options = RunOptions(config=args.config, measure=getattr(args, "measure", Measure.TIMING),
                         schedule=Schedule.DUET)
    check_duet(expand(load_specs(options), 1), options.measure, sides)


@dataclass(frozen=True)
class Side:
    """One side of an interleaved run: a server binary, or why it has none."""

    name: str
    server_bin: str | None = None
    commit: str | None = None
    blocked: str | None = None
    provenance: tuple[tuple[str, str], ...] = ()


def side_from_build(name: str, build: Build) -> Side:
    return Side(name, str(build.server_bin) if build.server_bin else None, build.sha,
                None if build.ok else build.error or "build failed", build_provenance(build))


def side_options(args: argparse.Namespace, side: Side, base: Path) -> RunOptions:
    if args.runs < 1:
        raise UsageError(f"--runs must be at least 1, got {args.runs}")
    return RunOptions(config=args.config, results_dir=base, label=side.name, runs=args.runs,
                      server_bin=side.server_bin, tool=args.tool, commit=side.commit,
                      blocked=side.blocked, provenance=side.provenance,
                      measure=getattr(args, "measure", Measure.TIMING),
                      schedule=getattr(args, "schedule", Schedule.ALTERNATE),
                      revision_from_binary=True)


def default_label(kind: str) -> str:
    """A fresh directory per comparison, so reruns never mix their rows."""
    return f"{kind}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def run_sides(args: argparse.Namespace, sides: list[Side], kind: str,
              console: Console) -> tuple[SidesResult, dict[str, Prepared]]:
    """Prepare every side (all input checks first), then run them interleaved."""
    args.runs = quick.runs(default_runs(args, getattr(args, "default_runs", 1)))
    base = args.results_dir / (args.label or default_label(kind))
    prepared = {s.name: prepare(side_options(args, s, base)) for s in sides}
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    first = next(iter(prepared.values()))
    reporter = ProgressReporter(console, len(sides) * len(first.trials))
    described = "  ".join(f"{escape(name)}: {p.context.server_version or 'not built'}"
                          for name, p in prepared.items())
    schedule = first.options.schedule
    console.print(f"{described}  rounds: {args.runs}  order seed: {seed}  schedule: {schedule}")
    with live_store(args, args.results_dir) as store, reporter:
        result = interleave_sides(prepared, seed, reporter, store, schedule)
    return result, prepared
