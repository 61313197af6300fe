#!/usr/bin/env python3
"""How a real compare's metrics move with its rps: the numbers behind
``analysis.calibration.MEASURED`` (issue 40: the simulation that calibrates ``--runs auto``).

From compares kept by ``benchmarks/sequential_real.py`` (each DIR/*/A and DIR/*/B a side's
metrics.json, rounds paired by series and run): per series and metric, over every paired
round, the log-ratio B/A's standard deviation over rps's (``sd ratio``), its correlation with
rps's, and the simulation's loading (−corr × sd ratio) and own noise (√(1 − corr²) × sd
ratio) they give. With ``--ab DIR`` (compares with a slowdown) also each metric's mean
log-ratio over rps's, for a series the slowdown moved (``moved``: 1 moves as much as rps, 0
not at all), and its mean over its sd (``z/pair``: the evidence one round gives).

Usage (rows of the quiet runs of session 12):
    PYTHONPATH=src .venv/bin/python benchmarks/metric_coupling.py --aa /work/seqreal/aa \\
        --ab /work/seqreal/ab
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from kvperf.analysis.calibration import MEASURED, METRICS
from kvperf.analysis.comparison import metric_value
from kvperf.analysis.sequential import series_of
from kvperf.store.files import read_rows

NAMES = [m.name for m in METRICS]


def log_ratios(directory: Path) -> dict[str, np.ndarray]:
    """Per series: (paired rounds, metrics) log-ratios B/A, NaN where a side lacks it."""
    found: dict[str, list[list[float]]] = defaultdict(list)
    for compare in sorted(p for p in directory.iterdir() if (p / "A" / "metrics.json").is_file()):
        sides = [{(series_of(r), r.get("run")): r for r in read_rows(compare / s / "metrics.json")
                  if r.get("status", "ok") == "ok"} for s in "AB"]
        for key, a in sides[0].items():
            b = sides[1].get(key)
            if b is not None:
                pairs = [(metric_value(a, n), metric_value(b, n)) for n in NAMES]
                found[key[0]].append([math.log(y / x) if x and y else math.nan for x, y in pairs])
    return {series: np.array(rows) for series, rows in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--aa", type=Path, required=True)
    parser.add_argument("--ab", type=Path)
    args = parser.parse_args()
    moved = {s: x for s, x in log_ratios(args.ab).items()} if args.ab else {}
    for series, x in log_ratios(args.aa).items():
        rps = x[:, 0]
        print(f"\n{series}: {len(x)} paired A/A rounds, sd of rps's log-ratio {np.std(rps):.4f}")
        print(f"  {'metric':36s} {'sd ratio':>8s} {'corr':>6s} {'load':>6s} {'own':>6s}"
              f" {'moved':>6s} {'z/pair':>6s}   MEASURED: load own moved")
        ab = moved.get(series)
        slowed = ab is not None and abs(np.nanmean(ab[:, 0])) > np.nanstd(ab[:, 0])
        for k, (name, model) in enumerate(zip(NAMES, MEASURED, strict=True)):
            ok = ~np.isnan(x[:, k])
            if ok.sum() < 5:
                print(f"  {name:36s} {'not in the rows':>33s}")
                continue
            ratio = float(np.std(x[ok, k]) / np.std(rps[ok]))
            corr = float(np.corrcoef(x[ok, k], rps[ok])[0, 1]) if ratio > 0 else math.nan
            text = (f"  {name:36s} {ratio:8.2f} {corr:+6.2f} {-corr * ratio:+6.2f} "
                    f"{math.sqrt(max(0.0, 1 - corr * corr)) * ratio:6.2f}")
            if slowed and ab is not None and (~np.isnan(ab[:, k])).sum() >= 5:
                y = ab[~np.isnan(ab[:, k]), k]
                worse = -1.0 if name == "rps" else 1.0
                text += (f" {float(worse * np.mean(y) / -np.nanmean(ab[:, 0])):+6.2f} "
                         f"{float(abs(np.mean(y)) / np.std(y)):6.2f}")
            else:
                text += " " * 14
            print(text + f"   {model.load:+.2f} {model.own:.2f} "
                         f"{model.moved * model.affected:.2f}")


if __name__ == "__main__":
    main()
