#!/usr/bin/env python3
"""`--runs auto`'s variants by simulation (issue 40 item 1): (a) the constant level
(POCOCK), (b) the spent levels (SPENT × shape), (c) a look also deciding a series on its rps
tested in a family of the open series' rps only, at a constant level, (d) the same at the
spent levels; (e) and (f) as (c) and (d) with the full rule at --share of the level;
(g) as (a), its constant calibrated afresh; (c)–(g) calibrated so that every A/A cell flags
≤ 1% (any flag anywhere).
Prints each variant's level, worst A/A cell, and, for a 10% slowdown, detection and mean
rounds to decide it per CV and noise.

``--coupling measured``: the metrics coupled as a quiet machine's rounds showed them
(``analysis.calibration.MEASURED``), not as the fixed-n tables assume (``tight``).

Usage: PYTHONPATH=src .venv/bin/python benchmarks/sequential_variants.py [--aa-reps 2000]
       [--reps 1000] [--seed 1] [--only c,d] [--coupling measured]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from kvperf.analysis.calibration import COUPLINGS, NOISES, Cell
from kvperf.analysis.sequential import POCOCK, SPENT, Design, shape
from kvperf.analysis.sequential_calibration import (
    A_A_CVS,
    TARGET,
    FloatArray,
    draw,
    outcome,
    run_looks,
    spent,
)

DESIGN = Design(12)
CVS = (0.01, 0.02, 0.03, 0.05, 0.10)


def constant(c: float) -> dict[int, float]:
    return dict.fromkeys(DESIGN.schedule, c)


def decayed(c: float) -> dict[int, float]:
    return spent(DESIGN, c)


def looks(levels: Callable[[float], dict[int, float]], share: float | None, c: float
          ) -> tuple[dict[int, float], dict[int, float] | None]:
    """The full rule's levels and the primaries' (None: no primary family): the full rule
    at ``share`` of the primaries' level."""
    if share is None:
        return levels(c), None
    return {k: v * share for k, v in levels(c).items()}, levels(c)


def calibrate(levels: Callable[[float], dict[int, float]], share: float | None, low: float,
              high: float, cells: list[tuple[FloatArray, FloatArray]], steps: int
              ) -> tuple[float, float]:
    """The largest c between ``low`` and ``high`` with every A/A cell ≤ 1% (bisection on
    its logarithm); the worst cell's rate there."""
    def worst(c: float) -> float:
        return max(float(run_looks(a, b, DESIGN, *looks(levels, share, c)).ever.mean())
                   for a, b in cells)
    if worst(low) > TARGET:
        return low, worst(low)
    for _ in range(steps):
        middle = float(np.sqrt(low * high))
        low, high = (middle, high) if worst(middle) <= TARGET else (low, middle)
    return low, worst(low)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--aa-reps", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=7)
    parser.add_argument("--only", default="a,b,c,d")
    parser.add_argument("--coupling", choices=sorted(COUPLINGS), default="tight")
    parser.add_argument("--share", type=float, default=0.1,
                        help="(e), (f): the full rule at this share of the primaries' level")
    args = parser.parse_args()
    started = time.monotonic()
    rng = np.random.default_rng(args.seed)
    cells = [draw(Cell(0, cv, 0.0, True, noise, args.coupling), args.aa_reps, rng,
                  DESIGN.max_rounds)
             for cv in A_A_CVS for noise in NOISES]
    alpha, first = DESIGN.alpha, shape(DESIGN.min_rounds, DESIGN.max_rounds)[0]
    variants = {"a": (constant, None, POCOCK[12], None),
                "b": (decayed, None, SPENT[12], None),
                "c": (constant, 1.0, alpha / DESIGN.looks / 2, alpha),
                "d": (decayed, 1.0, alpha / 2, alpha / first),
                "e": (constant, args.share, alpha / DESIGN.looks / 2, alpha),
                "f": (decayed, args.share, alpha / 2, alpha / first),
                "g": (constant, None, alpha / DESIGN.looks / 2, alpha)}
    ab = {(cv, noise): draw(Cell(0, cv, 0.10, True, noise, args.coupling), args.reps, rng,
                               DESIGN.max_rounds)
          for cv in CVS for noise in NOISES}
    for name in args.only.split(","):
        levels, share, low, high = variants[name]
        if high is not None:
            c, worst = calibrate(levels, share, low, high, cells, args.steps)
        else:
            c = low
            worst = max(float(run_looks(a, b, DESIGN, *looks(levels, share, c)).ever.mean())
                        for a, b in cells)
        print(f"({name}) c = {c:.5f} levels " + ", ".join(
            f"{k}: {v:.3g}" for k, v in levels(c).items()) +
            f"; worst A/A {worst:.2%}; {time.monotonic() - started:.0f} s", flush=True)
        for cv in CVS:
            found = [outcome(run_looks(*ab[(cv, noise)], DESIGN, *looks(levels, share, c)),
                             DESIGN)
                     for noise in NOISES]
            print(f"  CV {cv:.0%}: " + "; ".join(
                f"{noise} det {o.detected:.1%} rounds {o.mean_rounds:.2f}"
                for noise, o in zip(NOISES, found, strict=True)) +
                f" | mean det {np.mean([o.detected for o in found]):.1%} rounds "
                f"{np.mean([o.mean_rounds for o in found]):.2f}", flush=True)
    print(f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
