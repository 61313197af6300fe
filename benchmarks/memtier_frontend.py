#!/usr/bin/env python3
"""kvload's memtier front end against kvload's own mode: client CPU per request (stdlib only).

Issue 12's performance check, side by side in one run. One valkey-server pinned to cpu0, the
client pinned to cpu1; SET with 50 connections, 64-byte values, 100,000 keys, uniform keys,
at P=1 and P=16. Each round runs both front ends in a random order with the same request
count; client CPU is the child's user+sys from os.wait4, rps the tool's own JSON.

Then one 1:10 SET:GET run through the memtier front end (the corpus' most common mix): the
server's and the client's CPU utilisation over the run say whether the run is server-bound
(flagged when the client uses more of its core than the server does).

Usage: python3 benchmarks/memtier_frontend.py [--rounds N] [--kvload PATH]
Exit status 1 if a target is missed (memtier ÷ own CPU per request ≤ 1.05; the mix
server-bound).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(ROOT))

from benchmarks.kvload_vs_valkey_benchmark import free_port, start_server  # noqa: E402

CLIENTS = 50
REQUESTS = {1: 400_000, 16: 2_400_000}
TARGET = 1.05
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _run(argv: list[str]) -> float:
    """Client CPU seconds (user + sys) of one run; exits on failure."""
    proc = subprocess.Popen(["taskset", "-c", "1", *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[0]} {argv[1]} failed: {err.strip()[-400:]}")
    return usage.ru_utime + usage.ru_stime


def own_mode(kvload: str, port: int, pipeline: int, out: Path) -> tuple[float, float]:
    """(CPU µs per request, rps) of kvload's own mode."""
    n = REQUESTS[pipeline]
    cpu = _run([kvload, "-p", str(port), "-t", "set", "-c", str(CLIENTS), "-d", "64",
                "-r", "100000", "-P", str(pipeline), "-n", str(n), "-q", "--json", str(out)])
    test = json.loads(out.read_text())["tests"][0]
    return cpu / n * 1e6, float(test["achieved_rps"])


def memtier_mode(kvload: str, port: int, pipeline: int, out: Path,
                 ratio: str = "1:0") -> tuple[float, float, int]:
    """(CPU µs per request, Ops/sec, requests) of the memtier front end."""
    per_client = REQUESTS[pipeline] // CLIENTS
    cpu = _run([kvload, "memtier", "-s", "127.0.0.1", "-p", str(port), "-t", "1",
                "-c", str(CLIENTS), "--ratio", ratio, "-d", "64", "--key-maximum", "100000",
                "--key-pattern", "R:R", "--pipeline", str(pipeline), "-n", str(per_client),
                "--hide-histogram", "--json-out-file", str(out)])
    totals = json.loads(out.read_text())["ALL STATS"]["Totals"]
    requests = per_client * CLIENTS
    return cpu / requests * 1e6, float(totals["Ops/sec"]), requests


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def mix_utilisation(kvload: str, port: int, server_pid: int, out: Path) -> tuple[float, float]:
    """(server, client) CPU utilisation (share of one core) over a 1:10 SET:GET run."""
    before, started = _cpu_seconds(server_pid), time.monotonic()
    client_cpu, _, _ = memtier_mode(kvload, port, 1, out, ratio="1:10")
    wall = time.monotonic() - started
    server = (_cpu_seconds(server_pid) - before) / wall
    client = client_cpu * REQUESTS[1] / 1e6 / wall
    return server, client


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--kvload", default=shutil.which("kvload") or str(ROOT / ".venv/bin/kvload"))
    args = ap.parse_args()
    rng = random.Random(12)
    port = free_port()
    server = start_server(port)
    missed = False
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.json"
            for pipeline in (1, 16):
                ratios, rps = [], []
                for _ in range(args.rounds):
                    order = ["own", "memtier"]
                    rng.shuffle(order)
                    got: dict[str, tuple[float, float]] = {}
                    for mode in order:
                        if mode == "own":
                            got[mode] = own_mode(args.kvload, port, pipeline, out)
                        else:
                            cpu, ops, _ = memtier_mode(args.kvload, port, pipeline, out)
                            got[mode] = (cpu, ops)
                    ratios.append(got["memtier"][0] / got["own"][0])
                    rps.append((got["own"][1], got["memtier"][1]))
                ratio = statistics.median(ratios)
                missed |= ratio > TARGET
                print(f"P={pipeline}: client CPU/request memtier ÷ own = {ratio:.3f} "
                      f"(rounds: {', '.join(f'{r:.3f}' for r in ratios)}; target ≤ {TARGET}); "
                      f"rps own {statistics.median(r[0] for r in rps):,.0f}, "
                      f"memtier {statistics.median(r[1] for r in rps):,.0f}")
            server_util, client_util = mix_utilisation(args.kvload, port, server.pid, out)
            bound = "server-bound" if server_util >= client_util else "CLIENT-BOUND"
            missed |= server_util < client_util
            print(f"1:10 SET:GET, P=1, 50 connections: server {server_util:.0%} of a core, "
                  f"client {client_util:.0%}: {bound}")
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
