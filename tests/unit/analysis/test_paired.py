"""Tests for kvperf.analysis.paired (the comparison row's CV)."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from kvperf.analysis.paired import cv

# --- cv ---------------------------------------------------------------------


def test_cv_hand_value() -> None:
    # [1, 2, 3]: mean 2, sample variance (1 + 0 + 1)/2 = 1 -> s = 1, CV = 0.5
    assert cv([1.0, 2.0, 3.0]) == pytest.approx(0.5, rel=1e-15)


def test_cv_matches_scipy_variation() -> None:
    x = [10.0, 12.0, 9.5, 11.0]
    assert cv(x) == pytest.approx(stats.variation(x, ddof=1), rel=1e-12)


def test_cv_degenerate() -> None:
    assert math.isnan(cv([5.0]))
    assert math.isnan(cv([]))
    assert math.isnan(cv([-1.0, 1.0]))
    assert cv([4.0, 4.0]) == 0.0
