#!/usr/bin/env python3
"""`--runs auto`'s sequential rule: false alarms under repeated looks and rounds to a
decision, measured by simulation, against the fixed-n rule.

Simulated paired comparisons (kvperf.analysis.calibration: 2 series × 14 correlated metrics,
rounds sharing a ±5% drift, normal / log-normal / heavy-tailed noise), drawn for --max-runs
rounds and looked at after each round from the third (kvperf.analysis.sequential_calibration).
For each rps CV 0.5–10% and noise it prints:

- A/A: % with any of the 28 rows flagged at any look up to the stop (the bound the rule
  keeps within 1%), % flagged at the stop (what the report shows), mean rounds;
- a 10% slowdown of series 0: % where its rps is a regression at the stop, mean rounds, and
  the fixed --runs (fixed-n rule at α = 0.01) that detects it in ≥ 90%, with its rate.

Usage: .venv/bin/python benchmarks/sequential_calibration.py [--aa-reps 4000] [--reps 1000]
       [--max-runs 12] [--exponent 1.0] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from kvperf.analysis.calibration import NOISES, Cell, rates, run
from kvperf.analysis.sequential import SPENDING_EXPONENT, Design
from kvperf.analysis.sequential_calibration import sequential

CVS = (0.005, 0.01, 0.02, 0.05, 0.10)
EFFECT = 0.10
TARGET = 0.90


def fixed_runs(cv: float, noise: str, reps: int, most: int, rng: np.random.Generator
               ) -> tuple[int | None, float]:
    """The fewest rounds (2 … most) at which the fixed-n rule detects the effect ≥ 90%."""
    rate = 0.0
    for n in range(2, most + 1):
        judged, _, _ = run(Cell(n, cv, EFFECT, True, noise), reps, rng)
        rate = rates(judged).detected
        if rate >= TARGET:
            return n, rate
    return None, rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aa-reps", type=int, default=4000, help="comparisons per A/A cell")
    parser.add_argument("--reps", type=int, default=1000, help="comparisons per 10%% cell")
    parser.add_argument("--max-runs", type=int, default=12)
    parser.add_argument("--exponent", type=float, default=SPENDING_EXPONENT,
                        help="γ: each look at α·looks^−γ (0: no correction)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    design = Design(max_rounds=args.max_runs, exponent=args.exponent)
    started = time.monotonic()
    print(f"looks after rounds {design.min_rounds}…{design.max_rounds}, each at α = "
          f"{design.nominal:.4g}; paired, 2 series × 14 metrics")
    print("| CV | noise | A/A flagged, any look | A/A flagged at the stop | A/A mean rounds | "
          "10%: detected | 10%: mean rounds | fixed --runs for ≥ 90% (its rate) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    for cv in CVS:
        for noise in NOISES:
            aa = sequential(Cell(0, cv, 0.0, True, noise), args.aa_reps, rng, design)
            ab = sequential(Cell(0, cv, EFFECT, True, noise), args.reps, rng, design)
            n, rate = fixed_runs(cv, noise, args.reps, args.max_runs, rng)
            fixed = f"{n} ({rate:.1%})" if n else f"> {args.max_runs} ({rate:.1%})"
            worst = max(worst, aa.any_flag)
            print(f"| {cv:.1%} | {noise} | {aa.any_flag:.2%} | {aa.flag_at_stop:.2%} | "
                  f"{aa.mean_rounds:.1f} | {ab.detected:.1%} | {ab.mean_rounds:.1f} | "
                  f"{fixed} |", flush=True)
    print(f"\nworst A/A cell, any look: {worst:.2%} (target ≤ 1%); "
          f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
