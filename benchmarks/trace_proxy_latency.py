#!/usr/bin/env python3
"""`kvload record`'s added latency at P=1: direct vs through the recording proxy (stdlib only).

Issue 27's check, side by side in one run. One valkey-server (pinned to cpu0); two
`kvload record` proxies in front of it (one plain, one with `--replies`, which also finds each
reply's end and pairs it with its command), writing their traces to a temporary directory;
each round runs the same kvload closed-loop GET workload (1 connection, P=1, 100 keys, 3-byte
values) directly and through each proxy in a random order. The added latency is the
difference of the p50s (and p99s) of each round; reported as the median over rounds.

Usage: python3 benchmarks/trace_proxy_latency.py [--rounds N] [--requests N] [--kvload PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
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


def run(kvload: str, port: int, requests: int, out: Path) -> tuple[float, float]:
    """(p50, p99) in ms of one closed-loop GET run at P=1."""
    subprocess.run(["taskset", "-c", "1", kvload, "-p", str(port), "-c", "1", "-P", "1",
                    "-t", "get", "-r", "100", "-n", str(requests), "-q", "--json", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    lat = json.loads(out.read_text())["tests"][0]["latency_ms"]["corrected"]
    return float(lat["p50"]), float(lat["p99"])


def start_proxy(kvload: str, port: int, trace: Path,
                extra: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    """A `kvload record` proxy (cpu1) in front of ``port``, once it listens; (process, port)."""
    pport = free_port()
    proxy = subprocess.Popen(["taskset", "-c", "1", kvload, "record", "--listen",
                              f"127.0.0.1:{pport}", "--upstream", f"127.0.0.1:{port}",
                              "--out", str(trace), *extra], stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", pport), timeout=0.2).close()
            return proxy, pport
        except OSError:
            if time.time() > deadline:
                proxy.kill()
                raise SystemExit("kvload record did not listen") from None
            time.sleep(0.05)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--kvload", default=shutil.which("kvload") or str(ROOT / ".venv/bin/kvload"))
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kvperf-proxy-"))
    port = free_port()
    server = start_server(port)
    proxies: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    try:
        for name, extra in (("proxy", []), ("replies", ["--replies"])):
            proxies[name] = start_proxy(a.kvload, port, tmp / f"{name}.kvt", extra)
        rows = []
        for r in range(a.rounds):
            sides = [("direct", port)] + [(name, p) for name, (_, p) in proxies.items()]
            random.shuffle(sides)
            got = {name: run(a.kvload, p, a.requests, tmp / f"{name}.json") for name, p in sides}
            rows.append(got)
            d50, d99 = got["direct"]
            print(f"round {r + 1}: p50 direct {d50:.3f}, "
                  + ", ".join(f"{n} {got[n][0]:.3f} ({(got[n][0] - d50) * 1000:+.0f} µs)"
                              for n in proxies)
                  + f"; p99 direct {d99:.3f}, "
                  + ", ".join(f"{n} {got[n][1]:.3f} ({(got[n][1] - d99) * 1000:+.0f} µs)"
                              for n in proxies))
        for n in proxies:
            add50 = statistics.median((g[n][0] - g["direct"][0]) * 1000 for g in rows)
            add99 = statistics.median((g[n][1] - g["direct"][1]) * 1000 for g in rows)
            print(f"added latency, {n} (median of {a.rounds} rounds):"
                  f" p50 {add50:+.0f} µs, p99 {add99:+.0f} µs")
    finally:
        for proxy, _ in proxies.values():
            os.kill(proxy.pid, signal.SIGINT)
            proxy.wait(timeout=10)
        server.kill()
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
