#!/usr/bin/env python3
"""A client harness's own cost (issue 23, docs/CLIENTS.md): the same harness timing a no-op
instead of the library call (spec ``noop: true``) against the library call, per operation,
at P=1 with one connection (SET, 100 B, single model).

One valkey-server (Debian's, on a free loopback port, pinned to cpu0; the harness on cpu1);
for each installed shipped harness (all 14 after `kvperf clients install --all`), rounds of
(library, no-op) runs in a random order; the per-operation time is the measured window over
the operations. Printed per harness: the library's µs/op, the no-op's µs/op and their ratio
(target ≤ 2%).

Usage: .venv/bin/python benchmarks/client_harness_cost.py [--rounds N] [--requests N]
       [--client NAME …]
Exit status 1 when a harness's no-op costs more than 2% of its library call.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kvperf.clients.manifest import discover, shipped_dirs
from kvperf.clients.result import parse
from kvperf.core import proc

TARGET = 0.02


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spec(port: int, requests: int, noop: bool) -> dict[str, object]:
    return {"format": "kvperf-client-workload", "version": 1,
            "endpoint": {"host": "127.0.0.1", "port": port, "tls": False, "ca_file": None,
                         "cert_file": None, "key_file": None},
            "commands": [{"command": "SET", "ratio": 1}],
            "keys": {"prefix": "key:", "count": 10000, "pattern": "random"},
            "value_size": 100, "pipeline": 1, "transaction": False,
            "concurrency": {"model": "single", "workers": 1}, "requests": requests,
            "duration_s": None, "warmup_s": 0.5, "seed": 1, "noop": noop}


def _per_op(argv: tuple[str, ...], env: dict[str, str], spec: dict[str, object],
            scratch: Path) -> float:
    path = scratch / "spec.json"
    path.write_text(json.dumps(spec))
    done = proc.run_measured((*argv, str(path)), stdout=scratch / "out", stderr=scratch / "err",
                             cwd=scratch, env=env, deadline=300)
    if done.returncode != 0:
        raise SystemExit(f"{argv}: exit {done.returncode}: {(scratch / 'err').read_text()}")
    result = parse((scratch / "out").read_text(), spec)
    return result.duration_s / result.ops * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=30_000)
    parser.add_argument("--client", action="append", default=[])
    args = parser.parse_args()
    known = discover(shipped_dirs())
    names = args.client or sorted(n for n, m in known.items() if m.installed)
    server = shutil.which("valkey-server")
    assert server, "valkey-server is not installed"
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        child = proc.spawn(["taskset", "-c", "0", server, "--port", str(port), "--save", "",
                            "--appendonly", "no"], cwd=scratch)
        try:
            time.sleep(0.5)
            failed = False
            for name in names:
                manifest = known[name]
                argv = ("taskset", "-c", "1", *manifest.expand(manifest.run))
                env = manifest.environment()
                times: dict[bool, list[float]] = {False: [], True: []}
                for _ in range(args.rounds):
                    for noop in random.sample([False, True], 2):
                        times[noop].append(_per_op(argv, env, _spec(port, args.requests, noop),
                                                   scratch))
                library, noop_cost = (statistics.median(times[k]) for k in (False, True))
                share = noop_cost / library
                failed |= share > TARGET
                print(f"{name:18} library {library:7.2f} µs/op  no-op {noop_cost:5.2f} µs/op "
                      f" no-op/library {share:6.2%}  (median of {args.rounds} rounds)")
        finally:
            child.kill()
            child.wait()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
