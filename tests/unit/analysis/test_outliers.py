"""Tests for kvperf.analysis.outliers: stalled runs, found on the primary metric."""

from __future__ import annotations

import math

import numpy as np

from kvperf.analysis.outliers import outlier_runs, screen


def _logs(values: list[float]) -> np.ndarray:
    return np.log(np.array(values))


def test_a_three_times_slower_run_is_an_outlier() -> None:
    assert outlier_runs(_logs([100, 101, 99, 33, 100.5])).tolist() == [
        False, False, False, True, False]


def test_up_to_one_run_in_five() -> None:
    two_of_six = _logs([100, 101, 99, 33, 34, 100.5])
    assert not outlier_runs(two_of_six).any()  # 2 > 6 // 5: a noisy series, not outliers
    two_of_ten = _logs([100, 101, 99, 33, 34, 100.5, 100, 99.5, 100.2, 100.1])
    assert outlier_runs(two_of_ten).sum() == 2


def test_fewer_than_five_runs_keep_everything() -> None:
    assert not outlier_runs(_logs([100, 101, 33, 100.5])).any()


def test_within_a_factor_1_5_is_no_outlier() -> None:
    assert not outlier_runs(_logs([100, 101, 99, 68, 100.5])).any()  # 1.47× off


def test_absent_runs_are_ignored() -> None:
    logs = np.array([math.log(v) if v else math.nan for v in [100, 0, 101, 99, 33, 100.5]])
    assert outlier_runs(logs).tolist() == [False, False, False, False, True, False]


def test_screen_drops_pairs_when_paired_and_counts_them() -> None:
    primary_a = _logs([100, 100, 100, 100, 100])
    primary_b = _logs([90, 91, 89, 30, 90])  # round 4's ratio is 3.3× off
    metric_a, metric_b = _logs([1.0] * 5), _logs([1.1] * 5)
    a, b, dropped = screen(metric_a, metric_b, primary_a, primary_b, paired=True)
    assert np.isnan(a[3]) and np.isnan(b[3]) and int(dropped) == 1
    a, b, dropped = screen(metric_a, metric_b, primary_a, primary_b, paired=False)
    assert not np.isnan(a).any() and np.isnan(b[3]) and int(dropped) == 1
