#!/usr/bin/env python3
"""What interference sampling costs: rps with the /proc sampler on ÷ rps with it off.

Paired rounds: each round runs `kvperf run` three times in a random order — sampling off
(``KVPERF_INTERFERENCE=off``, the benchmark's switch), on (kvperf's default), and off once
more — on the same config (SET, 64-byte values, 50 clients, P=1 and P=16, 2 s measured,
server on cpu0 and client on cpu1 as kvperf's default). Per pipeline it prints the median
over rounds of on ÷ off and, as the A/A noise floor, of off′ ÷ off, each with the spread
(the interquartile range of the round ratios); and the sampler's own cost: the CPU time of
one /proc snapshot here, times the samples per second.

Usage: python3 benchmarks/interference_overhead.py [--rounds N] [--kvperf PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kvperf.server.interference import Scope
from kvperf.server.interference_probe import INTERVAL, read_snapshot

ROOT = Path(__file__).resolve().parent.parent
CONFIG = [{"commands": ["SET"], "data_sizes": [64], "pipelines": [1, 16], "clients": [50],
           "keyspacelen": [100_000], "duration": 2, "warmup": 0, "server_cpu_range": "0",
           "client_cpu_range": "1"}]
ARMS = ("off", "on", "off2")


def _run(kvperf: str, config: Path, out: Path, arm: str) -> dict[int, float]:
    env = {**os.environ, "KVPERF_INTERFERENCE": "on" if arm == "on" else "off"}
    done = subprocess.run([kvperf, "run", "--config", str(config), "--results-dir", str(out),
                           "--label", arm, "--no-db"], capture_output=True, text=True,
                          env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stdout[-2000:] + done.stderr[-2000:])
    rows = json.loads((out / arm / "metrics.json").read_text())
    sampled = {bool(r["interference"]) for r in rows}
    if sampled != {arm == "on"}:
        raise SystemExit(f"arm {arm}: rows sampled {sampled}")
    return {r["pipeline"]: r["rps"] for r in rows}


def _spread(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return f"{statistics.median(values):.4f} (IQR {q[0]:.4f}–{q[2]:.4f})"


def _snapshot_cost(repeat: int = 50) -> float:
    """CPU seconds of one /proc snapshot (every process, kvperf's threads)."""
    scope = Scope(tuple(sorted(os.sched_getaffinity(0))), False, os.getpid())
    start = time.process_time()
    for _ in range(repeat):
        read_snapshot(scope)
    return (time.process_time() - start) / repeat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--kvperf", default=str(ROOT / ".venv" / "bin" / "kvperf"))
    args = parser.parse_args()
    ratios: dict[tuple[int, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "overhead.json"
        config.write_text(json.dumps(CONFIG))
        for round_ in range(args.rounds):
            rps = {}
            for arm in random.sample(ARMS, len(ARMS)):
                rps[arm] = _run(args.kvperf, config, Path(tmp) / f"r{round_}", arm)
            for pipeline in (1, 16):
                base = rps["off"][pipeline]
                ratios.setdefault((pipeline, "on"), []).append(rps["on"][pipeline] / base)
                ratios.setdefault((pipeline, "aa"), []).append(rps["off2"][pipeline] / base)
    cost = _snapshot_cost()
    print(f"rps ratios over {args.rounds} paired rounds (median, IQR of the round ratios)")
    print("| P | sampling on ÷ off | A/A: off′ ÷ off |")
    print("| --- | --- | --- |")
    for pipeline in (1, 16):
        print(f"| {pipeline} | {_spread(ratios[(pipeline, 'on')])} | "
              f"{_spread(ratios[(pipeline, 'aa')])} |")
    print(f"one snapshot: {cost * 1e3:.2f} ms CPU ({len(os.listdir('/proc'))} /proc entries); "
          f"every {INTERVAL} s: {cost / INTERVAL:.2%} of one CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
