"""Tests for kvperf.analysis.power: the rule's chance to conclude, and the runs it needs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kvperf.analysis.power import (
    _nct_cdf_approx,
    conclusive_probability,
    flag_probability,
    runs_to_conclude,
    runs_to_flag,
)


def test_flag_probability_hand_value() -> None:
    """Paired, 5 pairs, sd 2%, true +10%, level 0.01: se = 0.02/√5 = 0.0089443, ncp =
    ln(1.1)/se = 10.656, t_{4,0.995} = 4.6041 and ln(1.02)/se = 2.214 (the t bound rules), so
    the chance is P(T'(4, 10.656) > 4.6041)."""
    expected = float(stats.nct.sf(4.604095, 4, math.log(1.1) / (0.02 / math.sqrt(5))))
    assert flag_probability(5, 0.10, 0.02, 0.02, 0.01, paired=True) == pytest.approx(expected)


def test_flag_probability_is_capped_by_the_minimum_effect() -> None:
    """A true change exactly at the minimum effect is beyond it half the time, at best."""
    p = flag_probability(10_000, 0.02, 0.01, 0.02, 0.01, paired=True)
    assert 0.45 < p < 0.55


def test_flag_probability_by_simulation() -> None:
    rng = np.random.default_rng(5)
    n, sd, effect, level = 6, 0.03, 0.08, 0.005
    lr = rng.normal(math.log1p(effect), sd, (40_000, n))
    t = lr.mean(1) / (lr.std(1, ddof=1) / math.sqrt(n))
    flagged = (np.abs(t) > stats.t.ppf(1 - level / 2, n - 1)) & (lr.mean(1) >= math.log(1.02))
    predicted = flag_probability(n, effect, sd, 0.02, level, paired=True)
    assert flagged.mean() == pytest.approx(predicted, abs=0.02)


def test_conclusive_adds_the_no_change_side() -> None:
    """No effect, tiny spread: the 95% interval soon fits inside ±2%."""
    assert conclusive_probability(10, 0.0, 0.005, 0.02, 0.01, paired=False) > 0.99
    assert conclusive_probability(2, 0.0, 0.05, 0.02, 0.01, paired=False) < 0.05


def test_runs_to_conclude_is_the_smallest_n_reaching_power() -> None:
    n = runs_to_conclude(3, 0.05, 0.03, 0.02, 0.005, paired=True)
    assert n is not None
    assert conclusive_probability(n, 0.05, 0.03, 0.02, 0.005, True) >= 0.9
    assert conclusive_probability(n - 1, 0.05, 0.03, 0.02, 0.005, True) < 0.9


def test_an_effect_on_the_edge_cannot_be_settled() -> None:
    assert runs_to_conclude(3, math.log(1.02), 0.03, 0.02, 0.005, paired=True) is None
    assert runs_to_conclude(3, 0.05, math.nan, 0.02, 0.005, paired=True) is None


def test_runs_to_flag() -> None:
    n = runs_to_flag(0.10, 0.02, 0.02, 0.005, paired=True)
    assert n is not None and flag_probability(n, 0.10, 0.02, 0.02, 0.005, True) >= 0.9
    assert flag_probability(n - 1, 0.10, 0.02, 0.02, 0.005, True) < 0.9
    assert runs_to_flag(0.03, 0.02, 0.05, 0.005, paired=True) is None  # below min effect
    # unpaired with the same per-run sd: se √2 larger, but 2n − 2 degrees of freedom
    unpaired = runs_to_flag(0.10, 0.02, 0.02, 0.005, paired=False)
    assert unpaired is not None
    assert flag_probability(unpaired, 0.10, 0.02, 0.02, 0.005, False) >= 0.9


def test_power_stays_defined_where_scipy_nct_overflows() -> None:
    """A duet's paired spread (~0.5%) makes the noncentrality large: scipy's nct gives nan
    there; the Abramowitz & Stegun 26.7.10 approximation takes over, close to the exact value
    where both exist."""
    powers = [flag_probability(n, 0.03, 0.0053, 0.02, 0.01, True) for n in range(2, 9)]
    assert all(0.0 <= p <= 1.0 for p in powers), powers
    ncp = math.log1p(0.03) * math.sqrt(5) / 0.0053
    crit = float(stats.t.ppf(0.995, 4))
    approx = 1 - _nct_cdf_approx(crit, 4, ncp)
    exact = float(stats.nct.sf(crit, 4, ncp))  # scipy still answers at n = 5
    assert abs(exact - approx) < 0.02, (exact, approx)
