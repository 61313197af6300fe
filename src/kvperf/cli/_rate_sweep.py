"""`--rate-sweep` and its flags, declared once (run), mapped to ``RateSweepFlags``; and a
sweep's rendering: a table per swept series with its knee, and ``rate_sweep.md`` beside
metrics.json."""

from __future__ import annotations

import argparse

from rich.console import Console

from kvperf.pipeline.commands.outputs import Knees, Swept
from kvperf.pipeline.commands.vocabulary import ARRIVALS, DEFAULT_POINT_SECONDS
from kvperf.pipeline.request.common import RateSweepFlags
from kvperf.report.rate_sweep import curve_table, knee_table


def add_rate_sweep_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("rate sweep (latency vs throughput, the knee)")
    g.add_argument("--rate-sweep", action="store_true",
                   help="per series: its closed-loop rps (saturation), then open-loop "
                        "trials at 10,30,50,60,70,80,85,90,95,100%% of it (kvload); the "
                        "latency-vs-throughput curve and its knee")
    g.add_argument("--rates", metavar="R,R…",
                   help="explicit open-loop rates (requests/s, e.g. 10000,50k) instead of "
                        "percents of the saturation rps")
    g.add_argument("--rate-steps", metavar="PCT,PCT…",
                   help="percents of the saturation rps to run (default "
                        "10,30,50,60,70,80,85,90,95,100)")
    g.add_argument("--point-seconds", type=int, metavar="S",
                   help=f"measure stage of each point (default {DEFAULT_POINT_SECONDS}; "
                        "quick mode: 1)")
    g.add_argument("--slo", metavar="pNN<=BOUND",
                   help="the knee is the highest rate whose corrected latency percentile "
                        "holds this bound, e.g. \"p99<=1ms\" (default: p99 within "
                        "--knee-factor × the low-rate p99)")
    g.add_argument("--knee-factor", type=float, metavar="F",
                   help="without --slo: a point breaks when its p99 exceeds F × the "
                        "low-rate baseline (default 2)")
    g.add_argument("--arrivals", choices=ARRIVALS,
                   help="open-loop send times: poisson (default: exponential gaps) or "
                        "uniform (an even grid per connection)")


def rate_sweep_flags(args: argparse.Namespace) -> RateSweepFlags:
    return RateSweepFlags(given=args.rate_sweep, rates=args.rates, steps=args.rate_steps,
                          point_seconds=args.point_seconds, slo=args.slo,
                          factor=args.knee_factor, arrivals=args.arrivals)


def print_sweep_plan(out: Console, plan: str | None) -> None:
    """--dry-run of a sweep: its works and how long it takes (nothing without one)."""
    if plan is not None:
        out.print(plan, highlight=False)


def print_knees(out: Console, found: Knees | None) -> None:
    """compare --rate-sweep: each side's curves, then their knees judged (nothing when
    neither side swept)."""
    if found is None:
        return
    for side, curves in found.sides:
        for curve in curves:
            out.print(curve_table(curve), f"({side})")
    out.print(knee_table(found.knees, found.sides[0][0], found.sides[1][0]))
    out.print(f"rate sweep knees: {found.path}")


def print_rate_sweeps(out: Console, found: Swept | None) -> None:
    """A table per swept series (nothing when no row is a sweep's) and its markdown file."""
    if found is None:
        return
    for curve in found.curves:
        out.print(curve_table(curve))
    out.print(f"rate sweep: {found.path}")
