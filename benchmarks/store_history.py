#!/usr/bin/env python3
"""History query time over 10 million stored metric values in PostgreSQL.

Starts a throwaway PostgreSQL 15 cluster (tests/pg.py) unless --url is given, bulk-loads the
synthetic history of benchmarks/synthetic_history.py (1000 commits × 200 series × 5 trials ×
10 metrics = 10M values), then times:
  all      per-series per-commit aggregation of every metric over all commits (1M cells)
  all-rps  the same for rps only
  last-10  what `kvperf history` shows by default (last 10 commits, rps)
  sha      `kvperf history --sha A B` (two commits, the 10 common metrics)
  cli-sha  the CLI end to end: `kvperf history --sha A B --db URL` (process start included)
Each query runs --repeat times; the best and median are printed.

Usage: .venv/bin/python benchmarks/store_history.py [--values N] [--url URL] [--repeat 3]
Exit status 1 if a query's median exceeds the target (10 s).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from synthetic_history import database, populate, sha, timed  # noqa: E402

from kvperf.store.db import make_engine, parse_url  # noqa: E402
from kvperf.store.history import COMMON_METRICS, cells, latest_revisions  # noqa: E402

TARGET_S = 10.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=10_000_000)
    parser.add_argument("--url", help="an existing empty PostgreSQL database (else a temp one)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with database(args.url, "history_bench") as url:
        start = time.perf_counter()
        populate(url, args.values)
        print(f"populate {args.values:,} values: {time.perf_counter() - start:.1f} s")
        engine = make_engine(parse_url(url))
        a, b = sha(100), sha(900)
        queries: dict[str, Callable[[], int]] = {
            "all": lambda: len(cells(engine, None, [], {})),
            "all-rps": lambda: len(cells(engine, None, ["rps"], {})),
            "last-10": lambda: len(cells(engine, [r.name for r in
                                                  latest_revisions(engine, 10, {})],
                                         ["rps"], {})),
            "sha": lambda: len(cells(engine, [a, b], list(COMMON_METRICS), {})),
            "cli-sha": lambda: len(subprocess.run(
                [str(Path(sys.prefix) / "bin" / "kvperf"), "history", "--sha", a[:10],
                 b[:10], "--db", url], check=True, capture_output=True).stdout.splitlines()),
        }
        failed = False
        print(f"{'query':8} {'best s':>8} {'median s':>9} {'rows':>9}")
        for name, fn in queries.items():
            best, median, size = timed(fn, args.repeat)
            failed |= median > TARGET_S
            print(f"{name:8} {best:8.2f} {median:9.2f} {size:9,}")
        engine.dispose()
    print(f"target: each ≤ {TARGET_S:.0f} s — {'MISSED' if failed else 'met'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
