"""Client CPU per request of two kvload builds side by side (stdlib only): did a change to
kvload (a refactor, a new layer) cost the hot path anything?

One valkey-server pinned to cpu0, the client pinned to cpu1, `SET -c 50 -d 64 -r 100000`
at P=1 and P=16, both loops (--io uring and --io epoll). Each round runs the four clients
(two builds × two loops) in a random order, a fixed request count per run; client CPU is
the child's user+sys from wait4. Prints per loop and pipeline the median µs per request of
each build and the ratio NEW / BASE (1.00: no change; the run-to-run spread on these
machines is a few percent).

Usage: python3 benchmarks/kvload_builds.py --base OLD_KVLOAD --new NEW_KVLOAD [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from kvload_vs_valkey_benchmark import (  # noqa: E402
    REQUESTS,
    free_port,
    measure,
    start_server,
)

LOOPS = ("uring", "epoll")


def report(pipeline: int, rounds: int, found: dict[str, tuple[float, float]]) -> None:
    """One pipeline's medians (µs CPU per request) and the ratio of the builds per loop."""
    print(f"P={pipeline} (SET -c 50 -d 64 -r 100000, n={REQUESTS[pipeline]}, rounds={rounds})")
    for loop in LOOPS:
        base, new = found[f"base-{loop}"][0], found[f"new-{loop}"][0]
        print(f"  {loop:<5}: base {base:7.3f} µs/req, new {new:7.3f} µs/req, "
              f"new/base {new / base:.3f}")
    sys.stdout.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the kvload binary before the change")
    ap.add_argument("--new", required=True, help="the kvload binary after it")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pipelines", default="1,16", help="comma-separated (default 1,16)")
    args = ap.parse_args()
    for path in (args.base, args.new):
        if not (os.path.exists(path) or shutil.which(path)):
            raise SystemExit(f"kvload not found at {path}")
    clients = {f"{side}-{loop}": [path, "--io", loop]
               for side, path in (("base", args.base), ("new", args.new)) for loop in LOOPS}
    port = free_port()
    server = start_server(port)
    try:
        for pipeline in (int(p) for p in args.pipelines.split(",")):
            report(pipeline, args.rounds, measure(clients, port, pipeline, args.rounds))
    finally:
        server.kill()
        server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
