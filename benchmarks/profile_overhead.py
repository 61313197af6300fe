#!/usr/bin/env python3
"""What profiling costs the server it measures: rps of profiled trials ÷ unprofiled ones.

One `kvperf run` with the seed's ``profiling_sets`` — off, cpu (perf cpu-clock at 999 Hz)
and wall-time (plus every sched_switch with its stack) — so the three run side by side in
every round (SET, 64-byte values, 50 clients, P=1 and P=16, 3 s measured, server on cpu0
and client on cpu1 as kvperf's default). Prints, per pipeline and mode, the median over
rounds of profiled rps ÷ the same round's unprofiled rps. The numbers say why profiled
trials stay out of timing statistics, and how much more wall-time mode perturbs.

Usage: python3 benchmarks/profile_overhead.py [--rounds N] [--kvperf PATH]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETS = [{"enabled": False}, {"enabled": True, "mode": "cpu"},
        {"enabled": True, "mode": "wall-time"}]
CONFIG = [{"commands": ["SET"], "data_sizes": [64], "pipelines": [1, 16], "clients": [50],
           "keyspacelen": [100_000], "duration": 3, "warmup": 1, "server_cpu_range": "0",
           "client_cpu_range": "1", "profiling_sets": SETS}]


def _mode(row: dict[str, object]) -> str:
    profile = row.get("profile")
    return str(profile["mode"]) if isinstance(profile, dict) else "off"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kvperf", default=str(ROOT / ".venv" / "bin" / "kvperf"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "overhead.json"
        config.write_text(json.dumps(CONFIG))
        done = subprocess.run([args.kvperf, "run", "--config", str(config), "--runs",
                               str(args.rounds), "--results-dir", tmp, "--label", "o",
                               "--no-db"], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
            return 1
        rows = json.loads((Path(tmp) / "o" / "metrics.json").read_text())
    rps = {(r["pipeline"], r["run"], _mode(r)): r["rps"] for r in rows}
    print(f"profiled rps ÷ unprofiled rps, median of {args.rounds} rounds "
          f"(perf {shutil.which('perf')})")
    print("| P | cpu (cpu-clock 999 Hz) | wall-time (+ sched_switch) |")
    print("| --- | --- | --- |")
    for pipeline in (1, 16):
        ratios = {mode: statistics.median(
            rps[(pipeline, run, mode)] / rps[(pipeline, run, "off")]
            for run in range(1, args.rounds + 1)) for mode in ("cpu", "wall-time")}
        print(f"| {pipeline} | {ratios['cpu']:.3f} | {ratios['wall-time']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
