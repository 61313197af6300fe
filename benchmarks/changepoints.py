#!/usr/bin/env python3
"""Change-point pass over 10 million stored metric values in PostgreSQL (target ≤ 10 s).

Starts a throwaway PostgreSQL 15 cluster (tests/pg.py) unless --url is given, bulk-loads the
synthetic history of benchmarks/synthetic_history.py (1000 commits × 200 series × 5 trials ×
10 metrics = 10M values; every 10th series steps by 8 % at 60 % of the commits), then times
what `kvperf regressions` does, for all 10 metrics (all 10M values), for its default metrics
(rps, p50, p99: 3M values) and for rps alone (1M values):
  load     one value per commit per series and metric from the database (store/series.py:
           the aggregation to histories of 1000 points, in PostgreSQL)
  detect   E-Divisive means + t-test on each history (analysis/regressions.py)
  pass     load + detect (the figure held to the target)
  cli      `kvperf regressions --db URL --metric …` end to end (process start included)
and checks the answer: every stepped (series, metric) found at the step; change points
elsewhere (false positives) are counted and must stay under 1 % of the histories.

Usage: .venv/bin/python benchmarks/changepoints.py [--values N] [--url URL] [--repeat 3]
Exit status 1 if the all-metrics pass's median exceeds the target or the answer is wrong.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import Engine

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from synthetic_history import METRICS, database, populate, sha, shape, timed  # noqa: E402

from kvperf.analysis.regressions import DEFAULT_METRICS, Finding, find_all  # noqa: E402
from kvperf.analysis.stored import to_series  # noqa: E402
from kvperf.store.db import make_engine, parse_url  # noqa: E402
from kvperf.store.series import History, histories  # noqa: E402

TARGET_S = 10.0


def check(found: list[Finding], metrics: tuple[str, ...], commits: int,
          series: int) -> tuple[list[str], int]:
    """Problems with the answer (missed or misplaced steps) and the false-positive count."""
    step_sha = sha(int(commits * 0.6))
    stepped = {(f"syn{s:06d}", m) for s in range(series) if s % 10 == 0 for m in metrics}
    at_step = {(f.series_key, f.metric) for f in found if f.first_after.sha == step_sha}
    problems = [f"missed {k}" for k in sorted(stepped - at_step)]
    false = len(found) - len(at_step & stepped)
    if false > 0.01 * series * len(metrics):
        problems.append(f"{false} false change points")
    return problems, false


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=10_000_000)
    parser.add_argument("--url", help="use this (empty) PostgreSQL database instead")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    commits, series = shape(args.values)
    with database(args.url, "changepoint_bench") as url:
        start = time.perf_counter()
        populate(url, args.values)
        print(f"loaded {commits} commits × {series} series × 5 trials × {len(METRICS)} "
              f"metrics = {commits * series * 5 * len(METRICS):,} values in "
              f"{time.perf_counter() - start:.1f} s")
        engine = make_engine(parse_url(url))
        rows, problems, passes = [], [], {}
        for label, metrics in (("all", METRICS), ("default", DEFAULT_METRICS), ("rps", ("rps",))):
            result = measure(engine, url, metrics, args.repeat)
            rows.extend((f"{label}/{name}", *figures) for name, *figures in result[0])
            found_problems, false = check(result[1], metrics, commits, series)
            problems += [f"{label}: {p}" for p in found_problems]
            passes[label] = result[2]
            print(f"{label}: {len(result[1])} change points, {false} false", flush=True)
        engine.dispose()
    print(f"{'step':16} {'best s':>8} {'median s':>9}  result")
    for name, b, m, note in rows:
        print(f"{name:16} {b:8.2f} {m:9.2f}  {note}")
    for p in problems:
        print(f"WRONG: {p}")
    for label, median in passes.items():
        verdict = "OK" if median <= TARGET_S else "MISSED"
        print(f"{label} pass median {median:.2f} s (target ≤ {TARGET_S:.0f} s): {verdict}")
    return 0 if passes["all"] <= TARGET_S and not problems else 1


def measure(engine: Engine, url: str, metrics: tuple[str, ...],
            repeat: int) -> tuple[list[tuple[str, float, float, str]], list[Finding], float]:
    """Time load, detect, pass and the CLI for these metrics."""

    def load() -> list[History]:
        return histories(engine, metrics, min_points=6)

    def detect(found: list[History]) -> list[Finding]:
        return find_all(to_series(h) for h in found)

    rows = []
    best, median, loaded = timed(load, repeat)
    rows.append(("load", best, median, f"{len(loaded)} histories"))
    best, median, found = timed(lambda: detect(loaded), repeat)
    rows.append(("detect", best, median, f"{len(found)} change points"))
    best, pass_median, found = timed(lambda: detect(load()), repeat)
    rows.append(("pass", best, pass_median, f"{len(found)} change points"))
    cli = [str(Path(sys.executable).parent / "kvperf"), "regressions", "--db", url, "--json",
           *(f"--metric={m}" for m in metrics)]
    best, median, out = timed(lambda: subprocess.run(cli, capture_output=True, text=True,
                                                     check=True).stdout, repeat)
    rows.append(("cli", best, median, f"{len(json.loads(out))} change points"))
    return rows, found, pass_median


if __name__ == "__main__":
    sys.exit(main())
