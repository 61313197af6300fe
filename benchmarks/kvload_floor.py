"""Client CPU per request: kvload against the floor, a minimal C client (stdlib only).

The floor is `benchmarks/floor_client.c` (libc only, compiled here with `cc -O2` into a
temporary directory): one epoll thread, each batch of P SETs written with one write,
replies read with 64 KiB reads and counted by a one-line scan, the same keys as kvload's
(`key:<12 digits>`, wyrand multiply-high over -r) and a fixed -d-byte value, nothing
measured but the elapsed time. What kvload spends above it is its own work per request:
latency histograms, per-reply RESP parsing, the event loop's bookkeeping (issue 38 item 7:
at P=16 within 10%).

One valkey-server pinned to cpu0, the client pinned to cpu1, `SET -c 50 -d 64 -r 100000`
at P=1 and P=16. Each round runs the clients (kvload with its default loop, kvload
--io epoll, the floor) in a random order, a fixed request count per run; client CPU is the
child's user+sys from wait4 (all its threads). Prints per pipeline the median µs per
request and rps of each, and the ratios kvload ÷ floor.

Usage: python3 benchmarks/kvload_floor.py [--kvload PATH] [--rounds N] [--pipelines 1,16]
Exit status 1 if kvload (default loop) is above 1.10 × the floor at P=16.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from kvload_vs_valkey_benchmark import (  # noqa: E402
    DEFAULT_KVLOAD,
    client_arguments,
    measure,
    pinned_server,
)

SOURCE = Path(__file__).resolve().parent / "floor_client.c"
# Requests per run: about 4 s each on a busy 2-core machine.
REQUESTS = {1: 100_000, 16: 1_000_000}
TARGET = {16: 1.10}


def build_floor(into: str) -> str:
    """Compiles floor_client.c into directory `into`; returns the binary's path."""
    out = os.path.join(into, "floor_client")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("no C compiler (cc) on PATH: the floor client is built at run time")
    subprocess.run([cc, "-O2", "-o", out, str(SOURCE)], check=True)
    return out


def report(pipeline: int, rounds: int, found: dict[str, tuple[float, float]]) -> bool:
    """One pipeline's medians and the ratios to the floor; True when the target is met."""
    print(f"P={pipeline} (SET -c 50 -d 64 -r 100000, n={REQUESTS[pipeline]}, rounds={rounds})")
    floor = found["floor"][0]
    for name, (cpu, rps) in found.items():
        print(f"  {name:<12}: {cpu:7.3f} µs CPU/req, {rps:12.2f} rps (median), "
              f"÷ floor {cpu / floor:.3f}")
    target = TARGET.get(pipeline)
    met = target is None or found["kvload"][0] / floor <= target
    if target is not None:
        print(f"  target (kvload ≤ {target:.2f} × floor) {'met' if met else 'MISSED'}")
    sys.stdout.flush()
    return met


def main() -> int:
    args, pipelines = client_arguments(__doc__, shutil.which("kvload") or str(DEFAULT_KVLOAD))
    with tempfile.TemporaryDirectory(prefix="kvload-floor-") as tmp:
        clients = {"kvload": [args.kvload], "kvload-epoll": [args.kvload, "--io", "epoll"],
                   "floor": [build_floor(tmp)]}
        with pinned_server() as port:
            met = [report(p, args.rounds, measure(clients, port, p, args.rounds, REQUESTS[p]))
                   for p in pipelines]
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())
