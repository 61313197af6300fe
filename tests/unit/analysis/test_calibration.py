"""The verdict rule's calibration at small scale, on every CI run (the full grid:
benchmarks/verdict_calibration.py, docs/PERFORMANCE.md)."""

from __future__ import annotations

import numpy as np
import pytest

from kvperf.analysis.calibration import Cell, check_runs_needed, rates, run, simulate

A_A_CELLS = [Cell(n, cv, 0.0, paired, noise) for n in (2, 3, 6) for cv in (0.01, 0.05)
             for paired in (False, True) for noise in ("lognormal", "heavy")]


def test_a_a_comparisons_rarely_flag_anything() -> None:
    """24 A/A cells × 500 comparisons of 28 rows: any flagged row in at most 2% of them."""
    rng = np.random.default_rng(1)
    flags = [rates(run(cell, 500, rng)[0]).any_flag for cell in A_A_CELLS]
    assert float(np.mean(flags)) <= 0.02, dict(zip(A_A_CELLS, flags, strict=True))


@pytest.mark.parametrize("noise", ["normal", "lognormal"])
def test_ten_percent_at_one_percent_cv_with_three_runs_is_detected(noise: str) -> None:
    r = rates(run(Cell(3, 0.01, 0.10, False, noise), 400, np.random.default_rng(2))[0])
    assert r.detected >= 0.85, r
    assert r.not_straddling == 0.0 and r.wrong <= 0.02, r


def test_five_cvs_with_five_paired_runs_is_detected() -> None:
    r = rates(run(Cell(5, 0.01, 0.05, True, "heavy"), 400, np.random.default_rng(3))[0])
    assert r.detected >= 0.9, r


def test_runs_needed_mostly_settles_the_comparison() -> None:
    check = check_runs_needed(Cell(3, 0.02, 0.05, True, "lognormal"), 10,
                              np.random.default_rng(4))
    assert check.checked >= 5 and check.concluded >= 0.6 * check.checked, check


def test_the_simulated_metrics_correlate_as_measured_ones() -> None:
    """avg latency ≈ 1/rps (correlation ≈ −1), max latency hardly follows it."""
    la, _ = simulate(Cell(20, 0.02, 0.0, False, "lognormal"), 200, np.random.default_rng(5))
    runs = la[:, :14].transpose(0, 2, 1).reshape(-1, 14)
    corr = np.corrcoef(runs, rowvar=False)
    assert corr[0, 1] < -0.99 and abs(corr[0, 7]) < 0.3
