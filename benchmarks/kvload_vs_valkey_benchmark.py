#!/usr/bin/env python3
"""Client CPU per request: kvload (io_uring and epoll loops) vs valkey-benchmark (stdlib only).

One valkey-server pinned to cpu0, the client pinned to cpu1. Workload SET with
-c 50 -d 64 -r 100000, for P=1 and P=16. Rounds run the three clients (kvload --io uring,
kvload --io epoll, valkey-benchmark) in a random order per round; each run has a fixed
request count. Client CPU is the child's user+sys from os.wait4 (all its threads, so
io_uring worker threads would be counted too), rps comes from the tool's CSV output.
Printed per pipeline: CPU per request and rps of each, and the ratios
kvload-uring / valkey-benchmark, kvload-epoll / valkey-benchmark and uring / epoll.

Usage: python3 benchmarks/kvload_vs_valkey_benchmark.py [--rounds N] [--kvload PATH]
Exit status 1 if a target of kvload-uring is missed (CPU ratio <= 0.40 at P=1, <= 0.45 at
P=16, rps ratio >= 1; issue 16).
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_KVLOAD = ROOT / "crates" / "kvload" / "target" / "release" / "kvload"
# Requests per run, sized for roughly 3-5 s on a 2-core machine.
REQUESTS = {1: 500_000, 16: 3_000_000}
TARGETS = {1: 0.40, 16: 0.45}
VB = "valkey-benchmark"


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


def run_client(client: list[str], port: int, pipeline: int, n: int) -> tuple[float, float]:
    """Returns (cpu seconds user+sys, rps) of `n` requests."""
    binary = client[0]
    cmd = ["taskset", "-c", "1", *client, "-p", str(port), "-t", "set", "-c", "50", "-d", "64",
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


def measure_rounds(clients: dict[str, list[str]], port: int, pipeline: int, rounds: int,
                   n: int | None = None) -> dict[str, tuple[list[float], list[float]]]:
    """Each client's (µs CPU per request, rps) per round, the clients in a random order in
    each round, `n` requests per run (default REQUESTS[pipeline])."""
    n = n or REQUESTS[pipeline]
    cpu_us: dict[str, list[float]] = {t: [] for t in clients}
    rps: dict[str, list[float]] = {t: [] for t in clients}
    for _ in range(rounds):
        order = list(clients)
        random.shuffle(order)
        for t in order:
            cpu, r = run_client(clients[t], port, pipeline, n)
            cpu_us[t].append(cpu * 1e6 / n)
            rps[t].append(r)
    return {t: (cpu_us[t], rps[t]) for t in clients}


def measure(clients: dict[str, list[str]], port: int, pipeline: int,
            rounds: int, n: int | None = None) -> dict[str, tuple[float, float]]:
    """Median (µs CPU per request, rps) of each client over alternating rounds."""
    found = measure_rounds(clients, port, pipeline, rounds, n)
    return {t: (statistics.median(c), statistics.median(r)) for t, (c, r) in found.items()}


def report(pipeline: int, rounds: int, m: dict[str, tuple[float, float]]) -> bool:
    """Prints one pipeline's figures; True when kvload-uring meets its targets."""
    print(f"P={pipeline} (SET -c 50 -d 64 -r 100000, n={REQUESTS[pipeline]}, rounds={rounds})")
    for t, (cpu, r) in m.items():
        print(f"  {t:<17}: {cpu:8.3f} us CPU/request, {r:12.2f} rps (median)")
    (u_cpu, u_rps), (e_cpu, e_rps), (v_cpu, v_rps) = m["kvload-uring"], m["kvload-epoll"], m[VB]
    ratio = u_cpu / v_cpu
    met = ratio <= TARGETS[pipeline] and u_rps >= v_rps
    print(f"  CPU ratio kvload-uring/valkey-benchmark: {ratio:.3f} "
          f"(target <= {TARGETS[pipeline]:.2f})")
    print(f"  CPU ratio kvload-epoll/valkey-benchmark: {e_cpu / v_cpu:.3f}")
    print(f"  CPU ratio kvload-uring/kvload-epoll    : {u_cpu / e_cpu:.3f}")
    print(f"  rps ratio kvload-uring/valkey-benchmark: {u_rps / v_rps:.3f} (target >= 1.00); "
          f"kvload-epoll/valkey-benchmark: {e_rps / v_rps:.3f}")
    print(f"  target {'met' if met else 'MISSED'}")
    sys.stdout.flush()
    return met


@contextmanager
def pinned_server() -> Iterator[int]:
    """A valkey-server on cpu0 (``start_server``) for the block: its port; killed after."""
    port = free_port()
    server = start_server(port)
    try:
        yield port
    finally:
        server.kill()
        server.wait()


def client_arguments(doc: str | None, kvload: str,
                     extra: Callable[[argparse.ArgumentParser], None] = lambda ap: None
                     ) -> tuple[argparse.Namespace, list[int]]:
    """The kvload benchmarks' common command line (--kvload, default ``kvload``; --rounds;
    --pipelines, each one of REQUESTS' depths) and ``extra``'s options: the arguments and
    the pipelines; SystemExit naming a kvload that is not there or a depth not measured."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kvload", default=kvload)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pipelines", default="1,16", help="comma-separated (default 1,16)")
    extra(ap)
    args = ap.parse_args()
    if not (os.path.exists(args.kvload) or shutil.which(args.kvload)):
        raise SystemExit(f"kvload not found at {args.kvload}")
    try:
        pipelines = [int(p) for p in args.pipelines.split(",")]
    except ValueError:
        pipelines = []
    if not pipelines or any(p not in REQUESTS for p in pipelines):
        raise SystemExit(f"--pipelines: each one of {sorted(REQUESTS)}, got {args.pipelines}")
    return args, pipelines


def main() -> int:
    args, pipelines = client_arguments(__doc__, str(DEFAULT_KVLOAD), lambda ap: ap.add_argument(
        "--valkey-benchmark", default=shutil.which("valkey-benchmark") or "valkey-benchmark"))
    if not (os.path.exists(args.valkey_benchmark) or shutil.which(args.valkey_benchmark)):
        raise SystemExit(f"{VB} not found at {args.valkey_benchmark}")
    clients = {"kvload-uring": [args.kvload, "--io", "uring"],
               "kvload-epoll": [args.kvload, "--io", "epoll"], VB: [args.valkey_benchmark]}
    ok = True
    with pinned_server() as port:
        for pipeline in pipelines:
            ok &= report(pipeline, args.rounds, measure(clients, port, pipeline, args.rounds))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
