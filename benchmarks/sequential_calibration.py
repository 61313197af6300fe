#!/usr/bin/env python3
"""`--runs auto`'s sequential rule: false alarms under repeated looks and rounds to a
decision, measured by simulation, against the fixed-n rule; and the calibration of its
looks' levels (``kvperf.analysis.sequential.SPENT``).

Simulated paired comparisons (kvperf.analysis.calibration: 2 series × 14 correlated metrics,
rounds sharing a ±5% drift, normal / log-normal / heavy-tailed noise), drawn for --max-runs
rounds and looked at after each round from the third, each series stopping on its own
(kvperf.analysis.sequential_calibration). For each rps CV 0.5–10% and noise it prints:

- A/A: % with a false alarm (any of the 28 rows flagged at a look while its series was
  open, or in the final table: the rate the calibration keeps ≤ 1%), mean rounds;
- a 10% slowdown of series 0: % where it stopped as a regression, the mean rounds until it
  stopped (and until every series did), and the fixed --runs (fixed-n rule at α = 0.01)
  that detects it in ≥ 90%, with its rate.

--calibrate 3,10,12: instead, for each --max-runs listed, the largest constant c of the
spent levels (c × sequential.shape per look) with every A/A cell ≤ 1% (bisection, the same
draws at every c), as SPENT's entries.

--coupling measured: the metrics coupled as a quiet machine's rounds showed them
(kvperf.analysis.calibration.MEASURED) instead of the tight coupling of the tables.

Usage: .venv/bin/python benchmarks/sequential_calibration.py [--aa-reps 4000] [--reps 1000]
       [--max-runs 12] [--level L] [--seed 1] [--calibrate LIST] [--coupling measured]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from kvperf.analysis.calibration import COUPLINGS, NOISES, Cell, rates, run
from kvperf.analysis.sequential import Design
from kvperf.analysis.sequential_calibration import A_A_CVS, calibrate, sequential

EFFECT = 0.10
TARGET = 0.90


def fixed_runs(cv: float, noise: str, reps: int, most: int, rng: np.random.Generator,
               coupling: str = "tight") -> tuple[int | None, float]:
    """The fewest rounds (2 … most) at which the fixed-n rule detects the effect ≥ 90%."""
    rate = 0.0
    for n in range(2, most + 1):
        judged, _, _ = run(Cell(n, cv, EFFECT, True, noise, coupling), reps, rng)
        rate = rates(judged).detected
        if rate >= TARGET:
            return n, rate
    return None, rate


def listed(text: str) -> list[int]:
    """``3-20,24,40`` → [3, 4, …, 20, 24, 40]."""
    found: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        found.extend(range(int(low), int(high or low) + 1))
    return found


def table(design: Design, args: argparse.Namespace, rng: np.random.Generator) -> None:
    print(f"looks after rounds {design.min_rounds}…{design.max_rounds} at levels "
          + ", ".join(f"{k}: {level:.3g}" for k, level in design.levels.items())
          + f" ({design.kind}); paired, 2 series × 14 metrics, each series stopping on its own")
    print("| CV | noise | A/A false alarms | A/A mean rounds | 10%: detected | "
          "10%: mean rounds to decide it (all series) | fixed --runs for ≥ 90% (its rate) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    for cv in sorted({*A_A_CVS, 0.03, 0.04}):
        for noise in NOISES:
            aa = sequential(Cell(0, cv, 0.0, True, noise, args.coupling), args.aa_reps, rng,
                            design)
            ab = sequential(Cell(0, cv, EFFECT, True, noise, args.coupling), args.reps, rng,
                            design)
            n, rate = fixed_runs(cv, noise, args.reps, 20, rng, args.coupling)
            fixed = f"{n} ({rate:.1%})" if n else f"> 20 ({rate:.1%})"
            worst = max(worst, aa.any_flag)
            print(f"| {cv:.1%} | {noise} | {aa.any_flag:.2%} | {aa.mean_rounds_all:.1f} | "
                  f"{ab.detected:.1%} | {ab.mean_rounds:.2f} ({ab.mean_rounds_all:.1f}) | "
                  f"{fixed} |", flush=True)
    print(f"\nworst A/A cell: {worst:.2%} (target ≤ 1%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aa-reps", type=int, default=4000, help="comparisons per A/A cell")
    parser.add_argument("--reps", type=int, default=1000, help="comparisons per 10%% cell")
    parser.add_argument("--max-runs", type=int, default=12)
    parser.add_argument("--level", type=float, default=None,
                        help="one level for every look (default: the calibrated levels; "
                             "0.00121 at --max-runs 12 is the constant rule before them)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--coupling", choices=sorted(COUPLINGS), default="tight")
    parser.add_argument("--calibrate", type=listed, default=None, metavar="LIST",
                        help="print the calibrated level for each --max-runs listed")
    args = parser.parse_args()
    started = time.monotonic()
    if args.calibrate:
        for most in args.calibrate:
            level, worst, cell = calibrate(Design(most), args.aa_reps, args.seed)
            print(f"    {most}: {level:.5f},  # worst A/A cell {worst:.2%} ({cell}), "
                  f"{time.monotonic() - started:.0f} s", flush=True)
    else:
        table(Design(args.max_runs, level=args.level), args, np.random.default_rng(args.seed))
    print(f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
