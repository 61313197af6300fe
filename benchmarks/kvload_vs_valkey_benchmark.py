#!/usr/bin/env python3
"""Client CPU per request: kvload vs valkey-benchmark (stdlib only).

One valkey-server pinned to cpu0, the client pinned to cpu1. Workload SET with
-c 50 -d 64 -r 100000, for P=1 and P=16. Rounds alternate the two tools in a
random order per round; each run has a fixed request count. Client CPU is the
child's user+sys from os.wait4, rps comes from the tool's CSV output.

Usage: python3 benchmarks/kvload_vs_valkey_benchmark.py [--rounds N] [--kvload PATH]
Exit status 1 if a target (CPU ratio <= 0.50 at P=1, <= 0.60 at P=16, rps ratio >= 1) is missed.
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_KVLOAD = ROOT / "crates" / "kvload" / "target" / "release" / "kvload"
# Requests per run, sized for roughly 3-5 s on a 2-core machine.
REQUESTS = {1: 500_000, 16: 3_000_000}
TARGETS = {1: 0.50, 16: 0.60}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    cmd = ["taskset", "-c", "0", "valkey-server", "--port", str(port), "--bind", "127.0.0.1",
           "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("valkey-server did not start")


def run_client(binary: str, port: int, pipeline: int) -> tuple[float, float]:
    """Returns (cpu seconds user+sys, rps)."""
    n = REQUESTS[pipeline]
    cmd = ["taskset", "-c", "1", binary, "-p", str(port), "-t", "set", "-c", "50", "-d", "64",
           "-r", "100000", "-P", str(pipeline), "-n", str(n), "--csv"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read().decode()
    err = proc.stderr.read().decode()
    _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{binary} failed: {err.strip()}")
    rows = list(csv.reader(io.StringIO(out)))
    set_rows = [r for r in rows if r and r[0] == "SET"]
    if not set_rows:
        raise SystemExit(f"{binary}: no SET row in output:\n{out}")
    return ru.ru_utime + ru.ru_stime, float(set_rows[-1][1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--kvload", default=str(DEFAULT_KVLOAD))
    ap.add_argument("--valkey-benchmark",
                    default=shutil.which("valkey-benchmark") or "valkey-benchmark")
    args = ap.parse_args()
    tools = {"kvload": args.kvload, "valkey-benchmark": args.valkey_benchmark}
    for name, path in tools.items():
        if not (os.path.exists(path) or shutil.which(path)):
            raise SystemExit(f"{name} not found at {path}")
    port = free_port()
    server = start_server(port)
    ok = True
    try:
        for pipeline in (1, 16):
            cpu_us: dict[str, list[float]] = {t: [] for t in tools}
            rps: dict[str, list[float]] = {t: [] for t in tools}
            for _ in range(args.rounds):
                order = list(tools)
                random.shuffle(order)
                for t in order:
                    cpu, r = run_client(tools[t], port, pipeline)
                    cpu_us[t].append(cpu * 1e6 / REQUESTS[pipeline])
                    rps[t].append(r)
            kv_cpu = statistics.median(cpu_us["kvload"])
            vb_cpu = statistics.median(cpu_us["valkey-benchmark"])
            kv_rps = statistics.median(rps["kvload"])
            vb_rps = statistics.median(rps["valkey-benchmark"])
            ratio = kv_cpu / vb_cpu
            met = ratio <= TARGETS[pipeline] and kv_rps >= vb_rps
            ok &= met
            print(f"P={pipeline} (SET -c 50 -d 64 -r 100000, n={REQUESTS[pipeline]}, "
                  f"rounds={args.rounds})")
            print(f"  kvload           : {kv_cpu:8.3f} us CPU/request, {kv_rps:12.2f} rps (median)")
            print(f"  valkey-benchmark : {vb_cpu:8.3f} us CPU/request, {vb_rps:12.2f} rps (median)")
            print(f"  CPU ratio kvload/valkey-benchmark: {ratio:.3f} "
                  f"(target <= {TARGETS[pipeline]:.2f})")
            print(f"  rps ratio kvload/valkey-benchmark: {kv_rps / vb_rps:.3f} (target >= 1.00)")
            print(f"  target {'met' if met else 'MISSED'}")
            sys.stdout.flush()
    finally:
        server.kill()
        server.wait()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
