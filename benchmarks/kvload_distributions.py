"""kvload's client CPU per request with skewed keys against uniform keys, side by side in
one run (stdlib only): what do `--key-distribution zipf:0.99` (an alias table,
then geometric tail segments: a few ns per key) and `hotset:0.01:0.9` (one more random
number per key) cost the hot path? The target is within 3% of uniform.

One valkey-server pinned to cpu0, the client pinned to cpu1, `SET -c 50 -d 64 -r 100000`
at P=1 and P=16. Each round runs the three clients (uniform, zipf, hotset) in a random
order, a fixed request count per run; client CPU is the child's user+sys from wait4.
Prints per pipeline the median µs per request of each and the ratios to uniform (1.00: no
cost; the run-to-run spread on these shared 2-core machines is a few percent).

Usage: python3 benchmarks/kvload_distributions.py [--kvload PATH] [--rounds N]
"""

from __future__ import annotations

import math
import shutil
import statistics
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from kvload_vs_valkey_benchmark import (  # noqa: E402
    DEFAULT_KVLOAD,
    REQUESTS,
    client_arguments,
    measure_rounds,
    pinned_server,
)

SHAPES = {"uniform": [], "zipf": ["--key-distribution", "zipf:0.99"],
          "hotset": ["--key-distribution", "hotset:0.01:0.9"]}
TARGET = 1.03
Z95 = 1.959964
T_TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447}


def t95(df: int) -> float:
    """Student's t two-sided 95% quantile: the table's to 6 degrees of freedom, then
    Cornish–Fisher to 1/df² (within 0.4% from 7)."""
    if df in T_TABLE:
        return T_TABLE[df]
    z = Z95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def paired(cpu: list[float], base: list[float]) -> str:
    """The geometric mean of the per-round ratios cpu/base (the same round's runs: a slow
    spell of the machine touches both) and its 95% t-interval over the rounds."""
    logs = [math.log(c / b) for c, b in zip(cpu, base, strict=True)]
    if len(logs) < 3:
        return "paired: needs 3 rounds"
    mean, se = statistics.fmean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
    t = t95(len(logs) - 1)
    return (f"paired {math.exp(mean):.3f} "
            f"[{math.exp(mean - t * se):.3f}, {math.exp(mean + t * se):.3f}]")


def report(pipeline: int, rounds: int, found: dict[str, tuple[list[float], list[float]]]) -> bool:
    """One pipeline's medians (µs CPU per request) and the ratios to uniform keys: of the
    medians, and paired per round (their 95% interval)."""
    print(f"P={pipeline} (SET -c 50 -d 64 -r 100000, n={REQUESTS[pipeline]}, rounds={rounds})")
    base = statistics.median(found["uniform"][0])
    met = True
    for shape, (cpus, rpss) in found.items():
        cpu, rps = statistics.median(cpus), statistics.median(rpss)
        ratio = cpu / base
        met &= ratio <= TARGET
        print(f"  {shape:<8}: {cpu:7.3f} µs CPU/req, {rps:12.2f} rps (median), "
              f"÷ uniform {ratio:.3f}, {paired(cpus, found['uniform'][0])}")
    print(f"  target (≤ {TARGET:.2f} × uniform) {'met' if met else 'MISSED'}")
    sys.stdout.flush()
    return met


def main() -> int:
    args, pipelines = client_arguments(__doc__, shutil.which("kvload") or str(DEFAULT_KVLOAD))
    clients = {shape: [args.kvload, *flags] for shape, flags in SHAPES.items()}
    with pinned_server() as port:
        met = [report(p, args.rounds, measure_rounds(clients, port, p, args.rounds))
               for p in pipelines]
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())
