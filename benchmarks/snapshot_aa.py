#!/usr/bin/env python3
"""Loaded equals preloaded, in figures (issue 39, item 2): per stratum (strings, hashes,
lists, sets, zsets in a large encoding, streams) the measured figures of a test started
from its dataset snapshot against the same test preloaded for real, judged by kvperf's own
verdict rule (`kvperf compare-results`, the calibrated minimum effect).

Each round runs the six tiny definitions twice through `kvperf run --definitions` on this
machine's valkey-server: once with `--no-snapshots` (label `fresh`), once from a warm
snapshot cache (label `snapshot`), the two in a random order per round. Rows are renumbered
by round (each invocation is round 1 of its own) so compare-results pairs them.

Usage: python3 benchmarks/snapshot_aa.py [--rounds N] [--test-time S] [--out DIR]
Exit status 1 if compare-results flags a regression or an improvement.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

DEFINITION = """\
version: 0.4
name: aa-{name}
tested-groups: [{name}]
redis-topologies: [oss-standalone]
dbconfig:
  configuration-parameters:
    save: '""'
{settings}  preload_tool:
    tool: memtier_benchmark
    arguments: '{preload} --command-key-pattern P --key-minimum 1 --key-maximum {keys}
      -n allkeys -c 4 -t 1 --hide-histogram'
clientconfig:
  tool: memtier_benchmark
  arguments: '{client} --command-key-pattern R --key-minimum 1 --key-maximum {keys}
    -c 4 -t 1 --test-time 60 --hide-histogram'
"""
STRATA = {  # name: (preload command, client command, keys, settings)
    "string": ('--command "SET __key__ __data__" --data-size 32', '--command "GET __key__"',
               100_000, ""),
    "hash": ('--command "HSET __key__ f1 v1 f2 v2 f3 v3 f4 v4"', '--command "HGET __key__ f3"',
             50_000, ""),
    "list": ('--command "RPUSH __key__ a b c d e f g h i j k l m n o p"',
             '--command "LRANGE __key__ 0 7"', 20_000, ""),
    "set": ('--command "SADD __key__ a b c d e f g h"', '--command "SISMEMBER __key__ e"',
            50_000, ""),
    "zset-skiplist": ('--command "ZADD __key__ 1 a 2 b 3 c 4 d"',
                      '--command "ZSCORE __key__ c"', 50_000,
                      "    zset-max-listpack-entries: 1\n"),
    "stream": ('--command "XADD __key__ * f v"', '--command "XLEN __key__"', 50_000, ""),
}


def write_definitions(defs: Path) -> None:
    defs.mkdir(parents=True, exist_ok=True)
    for name, (preload, client, keys, settings) in STRATA.items():
        (defs / f"{name}.yml").write_text(DEFINITION.format(
            name=name, preload=preload, client=client, keys=keys, settings=settings))


def kvperf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["kvperf", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=1800)
    if done.returncode not in (0, 1):
        sys.exit(f"kvperf {' '.join(args)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return done


def one(work: Path, label: str, test_time: int, cache: Path) -> None:
    more = ["--no-snapshots"] if label == "fresh" else ["--no-server-reuse"]  # each loads
    kvperf("run", "--definitions", "defs", "--override-test-time", str(test_time),
           "--label", label, "--results-dir", "results", "--no-db",
           "--snapshot-cache", str(cache), *more, cwd=work)


def renumber(metrics: Path) -> None:
    """Each invocation wrote run 1: the n-th row of a series is round n."""
    rows = json.loads(metrics.read_text())
    seen: dict[str, int] = {}
    for row in rows:
        seen[row["command"]] = seen.get(row["command"], 0) + 1
        row["run"] = seen[row["command"]]
    metrics.write_text(json.dumps(rows))


def preload_sources(metrics: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for row in json.loads(metrics.read_text()):
        found.setdefault(row["command"], set()).add(row["definition"]["preload"]["source"])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--test-time", type=int, default=1)
    parser.add_argument("--out", type=Path, help="keep the results here (default: a temp dir)")
    args = parser.parse_args()
    work = args.out or Path(tempfile.mkdtemp(prefix="kvperf-snapshot-aa-"))
    work.mkdir(parents=True, exist_ok=True)
    write_definitions(work / "defs")
    cache = work / "snapshots"
    kvperf("run", "--definitions", "defs", "--override-test-time", "1", "--label", "warm",
           "--results-dir", "warmup", "--no-db", "--snapshot-cache", str(cache), cwd=work)
    rng = random.Random(os.environ.get("KVPERF_AA_SEED", "39"))
    for _ in range(args.rounds):
        for label in rng.sample(["fresh", "snapshot"], 2):
            one(work, label, args.test_time, cache)
    for label in ("fresh", "snapshot"):
        renumber(work / "results" / label / "metrics.json")
    print("preload sources:", {label: preload_sources(work / "results" / label /
                                                        "metrics.json")
                               for label in ("fresh", "snapshot")})
    judged = kvperf("compare-results", "results/fresh", "results/snapshot", "--metrics",
                    "rps", cwd=work)
    print(judged.stdout, judged.stderr)
    flagged = any(word in judged.stdout for word in ("regression", "improvement"))
    print(f"results in {work}; flagged: {flagged}")
    return 1 if flagged else 0


if __name__ == "__main__":
    raise SystemExit(main())
