#!/usr/bin/env python3
"""Does kvload's open loop keep up? Achieved ÷ asked rate and client CPU (stdlib only).

One valkey-server pinned to cpu0, kvload pinned to cpu1 (one client core), `SET -c 50 -d 64
-r 100000 -P 1`. Each round first measures the server's closed-loop rate (kvload's closed
loop, the same core), then runs the open loop (`--rps`, Poisson arrivals, as a rate sweep's
points) at each percent of that rate with every client — a kvload build × loop (`--io uring`,
`--io epoll`) — in a random order. Client CPU is the child's user+sys from wait4, as a share
of the measured span (cores used, ≥ 0.90: client-saturated).

Printed per percent and client, medians over rounds: achieved ÷ asked, cores used, late
sends (> 1 ms behind their intended time) as a share of requests, corrected p50/p99 (from
the intended send time) and service p50. The load average is printed before and after:
the machine is shared, and a busy neighbour on the server's core lowers the closed loop
and the open loop alike (the ratio is measured side by side).

Usage: python3 benchmarks/open_loop_rate.py [--kvload [NAME=]PATH]… [--rounds N]
       [--percents 50,80,90,95,100] [--seconds S] [--loops uring,epoll]
Exit status 1 if a client's median achieved ÷ asked is below 0.95 at a percent ≤ 95.
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
from dataclasses import dataclass
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from kvload_vs_valkey_benchmark import DEFAULT_KVLOAD, free_port, start_server  # noqa: E402

LOAD = ["-t", "set", "-c", "50", "-d", "64", "-r", "100000", "-P", "1"]
TARGET = 0.95


@dataclass(frozen=True)
class Point:
    """One kvload run: its rate, the client's CPU share and its latency (ms)."""
    rps: float
    cores: float
    late: float
    p50: float
    p99: float
    service_p50: float


def run_kvload(client: list[str], port: int, seconds: float, rps: float | None) -> Point:
    """One run of `client` for `seconds` after a 1 s warmup; closed loop when rps is None."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "kvload.json"
        rate = [] if rps is None else ["--rps", f"{rps:.0f}", "--arrivals", "poisson"]
        cmd = ["taskset", "-c", "1", *client, "-p", str(port), *LOAD, "--warmup", "1",
               "--duration", str(seconds), *rate, "--json", str(report), "-q"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
        _, status, ru = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(cmd)} failed: {err.strip()}")
        test = json.loads(report.read_text())["tests"][0]
    latency = test["latency_ms"]
    return Point(rps=float(test["achieved_rps"]),
                 cores=(ru.ru_utime + ru.ru_stime) / (seconds + 1),
                 late=test["late"] / max(test["requests"], 1),
                 p50=latency["corrected"]["p50"], p99=latency["corrected"]["p99"],
                 service_p50=latency["service"]["p50"])


def one_round(clients: dict[str, list[str]], closed: list[str], port: int,
              args: argparse.Namespace) -> tuple[float, dict[tuple[int, str], Point]]:
    """The closed-loop rate, then every (percent, client) open-loop run in a random order."""
    saturation = run_kvload(closed, port, args.seconds, None).rps
    runs = [(pct, name) for pct in args.percents for name in clients]
    random.shuffle(runs)
    found = {}
    for pct, name in runs:
        found[(pct, name)] = run_kvload(clients[name], port, args.seconds,
                                        saturation * pct / 100)
    return saturation, found


def median_point(points: list[Point]) -> Point:
    fields = Point.__dataclass_fields__
    return Point(**{f: statistics.median(getattr(p, f) for p in points) for f in fields})


def report(saturations: list[float], runs: list[dict[tuple[int, str], Point]],
           clients: dict[str, list[str]], percents: list[int]) -> bool:
    """The table of medians; True when every client kept ≥ 95% of the asked rate up to 95%."""
    sat = statistics.median(saturations)
    print(f"closed loop (kvload on one core): median {sat:,.0f} rps over {len(runs)} rounds "
          f"({', '.join(f'{s:,.0f}' for s in saturations)})")
    print(f"{'point':>5} {'client':<18} {'asked':>9} {'achieved':>9} {'ach/asked':>9} "
          f"{'cores':>6} {'late':>6} {'p50 corr':>9} {'p99 corr':>9} {'p50 svc':>8}")
    ok = True
    for pct in percents:
        for name in clients:
            asked = [s * pct / 100 for s in saturations]
            points = [r[(pct, name)] for r in runs]
            ratio = statistics.median(p.rps / a for p, a in zip(points, asked, strict=True))
            m = median_point(points)
            ok &= pct > 95 or ratio >= TARGET
            print(f"{pct:>4}% {name:<18} {statistics.median(asked):>9,.0f} {m.rps:>9,.0f} "
                  f"{ratio:>9.3f} {m.cores:>6.2f} {m.late:>6.1%} {m.p50:>9.3f} {m.p99:>9.3f} "
                  f"{m.service_p50:>8.3f}")
    sys.stdout.flush()
    return ok


def parse_clients(specs: list[str], loops: list[str]) -> dict[str, list[str]]:
    """`[NAME=]PATH` per build × loop → the client's argv (name `NAME-LOOP`)."""
    clients = {}
    for spec in specs or [str(DEFAULT_KVLOAD)]:
        name, _, path = spec.rpartition("=")
        if not os.path.exists(path):
            raise SystemExit(f"kvload not found at {path}")
        for loop in loops:
            clients[f"{name or 'kvload'}-{loop}"] = [path, "--io", loop]
    return clients


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kvload", action="append", default=[], metavar="[NAME=]PATH",
                    help="a kvload build (repeat to compare builds; the last one's closed "
                         "loop measures the server)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--percents", default="50,80,90,95,100")
    ap.add_argument("--loops", default="uring,epoll")
    args = ap.parse_args()
    args.percents = [int(p) for p in args.percents.split(",")]
    clients = parse_clients(args.kvload, args.loops.split(","))
    closed = [list(clients.values())[-1][0]]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    port = free_port()
    server = start_server(port)
    try:
        rounds = [one_round(clients, closed, port, args) for _ in range(args.rounds)]
    finally:
        server.kill()
        server.wait()
    ok = report([s for s, _ in rounds], [r for _, r in rounds], clients, args.percents)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
