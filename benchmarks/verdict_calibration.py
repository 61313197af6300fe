#!/usr/bin/env python3
"""The verdict rule's false alarms and power, measured by simulation over a grid.

Simulated comparisons (kvperf.analysis.calibration: 2 series × 14 correlated metrics, series 0
slowed by the effect) judged by the rule kvperf uses (kvperf.analysis.verdict.judge). For each
cell — n runs per side 2, 3, 5, 6, 10, 20; rps CV 0.5, 1, 2, 5, 10%; effect 0, 1, 2, 3, 5, 10,
20%; paired and unpaired; normal, log-normal and heavy-tailed noise — it prints:

- effect 0 (A/A): the false-flag rate, the share of comparisons with any row flagged;
- effect > 0: the detection rate, the share where series 0's rps is a regression;

then the targets (docs/PERFORMANCE.md) with the worst cell of each, the share of wrong flags
in A/B (a row of the unchanged series, or an improvement), and the check of "needs ~N more
runs": inconclusive comparisons given N more runs from the same cell, how many concluded.

Usage: .venv/bin/python benchmarks/verdict_calibration.py [--reps 2000] [--aa-reps 20000]
       [--runs-check 10] [--seed 1] [--markdown]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from kvperf.analysis.calibration import NOISES, Cell, Rates, check_runs_needed, rates, run

NS = (2, 3, 5, 6, 10, 20)
CVS = (0.005, 0.01, 0.02, 0.05, 0.10)
EFFECTS = (0.0, 0.01, 0.02, 0.03, 0.05, 0.10, 0.20)
DESIGNS = ((False, "unpaired"), (True, "paired"))


@dataclass(frozen=True)
class Result:
    cell: Cell
    reps: int
    rates: Rates
    checked: int
    concluded: int


def cells(effects: tuple[float, ...] = EFFECTS) -> Iterator[Cell]:
    for paired, _ in DESIGNS:
        for noise in NOISES:
            for n in NS:
                for effect in effects:
                    for cv in CVS:
                        yield Cell(n, cv, effect, paired, noise)


def measure(cell: Cell, args: argparse.Namespace, rng: np.random.Generator) -> Result:
    reps = args.aa_reps if cell.effect == 0 else args.reps
    judged, _, _ = run(cell, reps, rng)
    check = check_runs_needed(cell, args.runs_check, rng) if args.runs_check else None
    return Result(cell, reps, rates(judged), check.checked if check else 0,
                  check.concluded if check else 0)


def _cell_text(r: Result) -> str:
    value = r.rates.any_flag if r.cell.effect == 0 else r.rates.detected
    return f"{value * 100:.2f}" if r.cell.effect == 0 else f"{value * 100:.1f}"


def table(results: dict[Cell, Result], paired: bool, markdown: bool) -> list[str]:
    """One table per design: rows (n, effect), columns CV; each cell normal/lognormal/heavy."""
    head = ["n", "effect", *(f"CV {cv:.1%}" for cv in CVS)]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)] if markdown else \
        ["  ".join(f"{h:>18}" for h in head)]
    effects = sorted({c.effect for c in results})
    for n in NS:
        for effect in effects:
            texts = [" / ".join(_cell_text(results[Cell(n, cv, effect, paired, noise)])
                                for noise in NOISES) for cv in CVS]
            label = "A/A" if effect == 0 else f"{effect:.0%}"
            cells_ = [str(n), label, *texts]
            lines.append("| " + " | ".join(cells_) + " |" if markdown
                         else "  ".join(f"{c:>18}" for c in cells_))
    return lines


def _worst(results: list[Result], key: str, low: bool) -> tuple[float, Cell | None]:
    if not results:
        return math.nan, None
    pick = min if low else max
    best = pick(results, key=lambda r: getattr(r.rates, key))
    return getattr(best.rates, key), best.cell


def targets(results: dict[Cell, Result]) -> list[str]:
    values = list(results.values())
    aa = [r for r in values if r.cell.effect == 0]
    ab = [r for r in values if r.cell.effect > 0]
    strong = [r for r in ab if r.cell.n >= 5 and r.cell.effect >= 5 * r.cell.cv - 1e-12]
    ten = [r for r in ab if (r.cell.n, r.cell.cv, r.cell.effect) == (3, 0.01, 0.10)]
    sd = math.sqrt(0.01 * 0.99 / max(1, min((r.reps for r in aa), default=1)))
    rows = [(f"A/A any-row false flags ≤ 1% (worst cell; Monte-Carlo sd at 1%: {sd:.2%})",
             *_worst(aa, "any_flag", False)),
            ("A/B wrong flags (worst cell)", *_worst(ab, "wrong", False)),
            ("effect ≥ 5×CV, n ≥ 5: detected ≥ 95% (worst cell)",
             *_worst(strong, "detected", True))]
    rows += [(f"10% at CV 1%, n = 3, {'paired' if r.cell.paired else 'unpaired'} "
              f"{r.cell.noise}: ≥ 90%", r.rates.detected, r.cell) for r in ten]
    rows.append(("inconclusive rows whose adjusted CI does not straddle the minimum effect",
                 *_worst(values, "not_straddling", False)))
    rows.append(("inconclusive rows whose 95% CI lies wholly beyond it (worst cell; n ≥ 5)",
                 *_worst([r for r in values if r.cell.n >= 5], "ci95_beyond", False)))
    rows.append(("the same, any n (worst cell)", *_worst(values, "ci95_beyond", False)))
    out = [f"{name}: {value * 100:.2f}%  ({cell})" for name, value, cell in rows]
    pooled_aa = sum(r.rates.any_flag * r.reps for r in aa) / max(1, sum(r.reps for r in aa))
    out.append(f"A/A false flags pooled over {len(aa)} cells: {pooled_aa * 100:.3f}%")
    return out + runs_check(values)


def runs_check(values: list[Result]) -> list[str]:
    """How often "needs ~N more runs" was enough, overall and by runs per side."""
    out = []
    groups = [("all", values), *((f"n = {n}", [r for r in values if r.cell.n == n])
                                 for n in NS),
              *((f"effect {e:.0%}", [r for r in values if r.cell.effect == e]) for e in EFFECTS)]
    for label, group in groups:
        checked, concluded = sum(r.checked for r in group), sum(r.concluded for r in group)
        if checked:
            out.append(f"'needs ~N more runs' ({label}): {concluded} of {checked} inconclusive "
                       f"comparisons concluded after the N runs asked for "
                       f"({concluded / checked:.1%})")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="comparisons per A/B cell")
    parser.add_argument("--aa-reps", type=int, default=20000, help="comparisons per A/A cell")
    parser.add_argument("--runs-check", type=int, default=10,
                        help="inconclusive comparisons per cell given the runs asked for")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    parser.add_argument("--aa-only", action="store_true", help="only the A/A cells")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.monotonic()
    grid = list(cells((0.0,) if args.aa_only else EFFECTS))
    results = {}
    for k, cell in enumerate(grid, 1):
        results[cell] = measure(cell, args, rng)
        if k % 35 == 0:
            print(f"{k}/{len(grid)} cells, {time.monotonic() - started:.0f} s", file=sys.stderr)
    for paired, name in DESIGNS:
        print(f"\n{name}: A/A rows = % of comparisons with any row flagged; other rows = % "
              "detected (series 0 rps a regression); each cell normal / lognormal / heavy")
        print("\n".join(table(results, paired, args.markdown)))
    print()
    print("\n".join(targets(results)))
    print(f"\n{len(results)} cells in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
