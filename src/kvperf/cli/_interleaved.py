"""Shared by `compare` and `noise`: options for two sides, the interleaved run, progress."""

from __future__ import annotations

import argparse
import secrets
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from kvperf.cli._store import add_db_options, live_store
from kvperf.core.errors import UsageError
from kvperf.pipeline import RunOptions, prepare
from kvperf.pipeline.ab import ABResult, interleave
from kvperf.report.progress import ProgressReporter


def add_common(p: argparse.ArgumentParser, default_runs: int) -> None:
    p.add_argument("--config", type=Path, help="JSON config (default: built-in SET/GET matrix)")
    p.add_argument("--runs", type=int, default=default_runs,
                   help=f"interleaved rounds (default {default_runs}; ≥ 8 for p < 0.01)")
    p.add_argument("--tool", choices=("kvload", "valkey-benchmark", "redis-benchmark"),
                   help="load tool (default: kvload if installed)")
    p.add_argument("--results-dir", type=Path, default=Path("results"))
    p.add_argument("--label", help="results subdirectory (default: derived from the sides)")
    p.add_argument("--seed", type=int, help="seed of the A/B order (default: random, recorded)")
    add_db_options(p)


def side_options(args: argparse.Namespace, server_bin: str | None, base: Path,
                 side: str) -> RunOptions:
    if args.runs < 1:
        raise UsageError(f"--runs must be at least 1, got {args.runs}")
    return RunOptions(config=args.config, results_dir=base, label=side, runs=args.runs,
                      server_bin=server_bin, tool=args.tool)


def default_label(kind: str) -> str:
    """A fresh directory per comparison, so reruns never mix their rows."""
    return f"{kind}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def run_sides(args: argparse.Namespace, bins: tuple[str | None, str | None], kind: str,
              console: Console) -> tuple[ABResult, Any, Any]:
    """Prepare both sides (all input checks first), then run them interleaved."""
    base = args.results_dir / (args.label or default_label(kind))
    a = prepare(side_options(args, bins[0], base, "A"))
    b = prepare(side_options(args, bins[1], base, "B"))
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    reporter = ProgressReporter(console, 2 * len(a.trials))
    console.print(f"A: {a.context.server_version}  B: {b.context.server_version}  "
                  f"rounds: {args.runs}  order seed: {seed}")
    with live_store(args, args.results_dir) as store, reporter:
        result = interleave(a, b, seed, reporter, store)
    return result, a, b
