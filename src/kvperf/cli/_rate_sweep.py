"""`--rate-sweep` and its flags, declared once (run), mapped to ``RateSweepFlags``; and a
sweep's rendering: a table per swept series with its knee, and ``rate_sweep.md`` beside
metrics.json."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from kvperf.analysis.rate_curve import compare_knees, curves
from kvperf.analysis.verdict import Rule
from kvperf.config.rate_sweep import ARRIVALS, DEFAULT_POINT_SECONDS
from kvperf.pipeline.request.common import RateSweepFlags
from kvperf.pipeline.run.model import Prepared
from kvperf.pipeline.run.rate_sweep import PointWork, SaturationWork, SweepBatch, sweeping
from kvperf.plan.sweep import duration_text, trial_seconds
from kvperf.report.rate_sweep import curve_table, knee_markdown, knee_table, markdown
from kvperf.results.row import Row
from kvperf.store.files import read_histograms, write_text_atomic

MARKDOWN_FILE = "rate_sweep.md"
KNEES_FILE = "rate_sweep_knees.md"  # compare --rate-sweep, beside the sides' directories


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


def print_sweep_plan(out: Console, prepared: Prepared) -> None:
    """--dry-run of a sweep: its works and how long it takes (nothing without one)."""
    if not sweeping(prepared):
        return
    works = SweepBatch(prepared).works()
    points = [w for w in works if isinstance(w, PointWork)]
    closed = [w for w in works if isinstance(w, SaturationWork)]
    seconds = sum(trial_seconds(w.trial) for w in works if not isinstance(w, PointWork))
    seconds += sum(trial_seconds(w.point_trial()) for w in points)
    steps = ", ".join(dict.fromkeys(w.step.label for w in points))
    out.print(f"rate sweep: {len(closed)} closed-loop trial(s), then {len(points)} open-loop "
              f"point(s) ({steps}); {len(works)} trials ≈ {duration_text(seconds)}",
              highlight=False)


def print_knees(out: Console, a_rows: list[Row], b_rows: list[Row], dirs: tuple[Path, Path],
                names: tuple[str, str], rule: Rule) -> None:
    """compare --rate-sweep: each side's curves, then their knees judged (nothing when
    neither side swept); ``rate_sweep.md`` in each side's directory, the knees beside."""
    base = curves(a_rows, lambda r: read_histograms(dirs[0], r))
    new = curves(b_rows, lambda r: read_histograms(dirs[1], r))
    if not base and not new:
        return
    for side, found, directory in ((names[0], base, dirs[0]), (names[1], new, dirs[1])):
        for curve in found:
            out.print(curve_table(curve), f"({side})")
        write_text_atomic(directory / MARKDOWN_FILE, markdown(found, side))
    knees = compare_knees(base, new, rule)
    out.print(knee_table(knees, *names))
    path = dirs[0].parent / KNEES_FILE
    write_text_atomic(path, knee_markdown(knees, *names))
    out.print(f"rate sweep knees: {path}")


def print_rate_sweeps(out: Console, rows: list[Row], out_dir: Path, title: str) -> None:
    """A table per swept series (nothing when no row is a sweep's) and its markdown file."""
    found = curves(rows, lambda r: read_histograms(out_dir, r))
    if not found:
        return
    for curve in found:
        out.print(curve_table(curve))
    path = out_dir / MARKDOWN_FILE
    write_text_atomic(path, markdown(found, title))
    out.print(f"rate sweep: {path}")
