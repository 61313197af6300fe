#!/usr/bin/env python3
"""The numbers behind the ``disturbed`` threshold: foreign CPU share of quiet trials vs
trials beside a busy loop on the server's core.

Quiet: `kvperf run --runs N` of one pinned trial (SET, 64-byte values, 50 clients, P=1, 1 s
measured, server on cpu0, client on cpu1), after waiting (up to --wait seconds) until the
machine is idle: less than 3% of any CPU busy over a second while nothing of kvperf runs.
Hog: the same beside `python3 -c 'while True: pass'` pinned to cpu0 with taskset, started
before and killed (by pid) after. Prints per arm every trial's foreign share (the verdict's
number: the worst watched core's), its rps, what the top foreign process was, and the
maxima/minima a threshold must sit between. On a shared machine other jobs start during
the quiet arm: its trials where another process took 0.1 s or more of the watched cores are
counted apart (they are disturbed, and flagged rightly); "alone" are the others.

Usage: python3 benchmarks/interference_threshold.py [--runs N] [--wait SECONDS]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kvperf.server.interference import parse_proc_stat

ROOT = Path(__file__).resolve().parent.parent
CONFIG = [{"commands": ["SET"], "data_sizes": [64], "pipelines": [1], "clients": [50],
           "keyspacelen": [10_000], "duration": 1, "warmup": 0, "server_cpu_range": "0",
           "client_cpu_range": "1"}]
HOG = "import os\nif os.fork():\n    os._exit(0)\nos.setsid()\nprint(os.getpid(), flush=True)\n" \
      "os.close(1)\nwhile True:\n    pass\n"
IDLE = 0.03
ALONE = 0.1  # CPU seconds the top foreign process may take for a trial to count as alone


def _busiest(seconds: float = 1.0) -> float:
    """The busiest CPU's share over ``seconds`` (user + nice + system), nothing of ours
    running."""
    hz = os.sysconf("SC_CLK_TCK")
    before = parse_proc_stat(Path("/proc/stat").read_text())
    time.sleep(seconds)
    after = parse_proc_stat(Path("/proc/stat").read_text())
    return max((after[c].busy - before[c].busy) / hz / seconds for c in before)


def _wait_quiet(limit: float) -> float:
    deadline = time.monotonic() + limit
    busiest = _busiest()
    while busiest >= IDLE and time.monotonic() < deadline:
        busiest = _busiest()
    return busiest


def _trials(kvperf: str, runs: int, tmp: Path, label: str) -> list[dict[str, Any]]:
    config = tmp / "config.json"
    config.write_text(json.dumps(CONFIG))
    subprocess.run([kvperf, "run", "--config", str(config), "--runs", str(runs),
                    "--results-dir", str(tmp), "--label", label, "--no-db"],
                   capture_output=True, check=True)
    rows: list[dict[str, Any]] = json.loads((tmp / label / "metrics.json").read_text())
    return rows


def _alone(row: dict[str, Any]) -> bool:
    return all(t["cpu_s"] < ALONE for t in row["interference"]["top"])


def _show(name: str, rows: list[dict[str, Any]]) -> list[float]:
    shares = [r["interference"]["foreign_share"] for r in rows]
    alone = [r["interference"]["foreign_share"] for r in rows if _alone(r)]
    print(f"{name}: foreign share max {max(shares):.1%}, min {min(shares):.1%}, "
          f"flagged {sum(r['interference']['disturbed'] for r in rows)} of {len(rows)}; "
          f"alone: {len(alone)} trials, max {max(alone, default=0.0):.1%}")
    for r in rows:
        top = r["interference"]["top"][:1]
        who = f"{top[0]['command'][:40]} {top[0]['cpu_s']} s" if top else "-"
        print(f"  run {r['run']}: {r['interference']['foreign_share']:.1%} "
              f"rps {r['rps']:,.0f} top {who}")
    return shares


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--wait", type=float, default=600.0)
    parser.add_argument("--kvperf", default=str(ROOT / ".venv" / "bin" / "kvperf"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        busiest = _wait_quiet(args.wait)
        print(f"before the quiet trials the busiest CPU was {busiest:.1%} busy")
        rows = _trials(args.kvperf, args.runs, Path(tmp), "quiet")
        _show("quiet", rows)
        quiet = [r["interference"]["foreign_share"] for r in rows if _alone(r)]
        starter = subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", HOG],
                                   stdout=subprocess.PIPE, text=True)
        assert starter.stdout is not None
        hog = int(starter.stdout.readline())
        starter.wait()
        try:
            loaded = _show("hog on cpu0", _trials(args.kvperf, args.runs, Path(tmp), "hog"))
        finally:
            os.kill(hog, signal.SIGKILL)
    print(f"a threshold must sit above the quiet (alone) maximum "
          f"{max(quiet, default=0.0):.1%} and below the hog minimum {min(loaded):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
