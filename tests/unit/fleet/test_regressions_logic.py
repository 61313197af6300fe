"""analysis.regressions: series of commits → change points with direction and commit range."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from kvperf.analysis.regressions import (
    CommitValue,
    Series,
    Thresholds,
    find_all,
    judge_step,
    series_findings,
)
from kvperf.analysis.verdict import Verdict

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _sha(i: int) -> str:
    return f"{i:012x}{'f' * 28}"


def _series(values: np.ndarray, metric: str = "rps", key: str = "k1") -> Series:
    points = [CommitValue(_sha(i), T0 + timedelta(hours=i), float(v))
              for i, v in enumerate(values)]
    return Series.of(key, {"command": "SET"}, metric, points)


def _noisy(n: int, cv: float, seed: int, level: float = 100_000.0) -> np.ndarray:
    return level * (1.0 + cv * np.random.default_rng(seed).standard_normal(n))


def test_rps_drop_is_a_regression_between_the_right_commits() -> None:
    x = _noisy(40, 0.01, 1)
    x[25:] *= 0.90
    (f,) = series_findings(_series(x))
    assert f.direction == "regression"
    assert f.magnitude == pytest.approx(-0.10, abs=0.015)
    assert f.last_before.sha == _sha(24)
    assert f.first_after.sha == _sha(25)
    assert f.commit_range == f"{24:012x}..{25:012x}"


def test_latency_rise_is_a_regression_and_drop_an_improvement() -> None:
    up = _noisy(40, 0.01, 2, level=1.0)
    up[20:] *= 1.15
    down = _noisy(40, 0.01, 3, level=1.0)
    down[20:] *= 0.85
    assert [f.direction for f in series_findings(_series(up, "p99_latency_ms"))] == ["regression"]
    assert [f.direction for f in series_findings(_series(down, "p99_latency_ms"))] == [
        "improvement"]


@pytest.mark.parametrize("seed", range(8))
def test_noise_only_has_no_findings(seed: int) -> None:
    assert series_findings(_series(_noisy(80, 0.02, seed))) == []


def test_small_step_below_min_effect_is_not_reported_by_default() -> None:
    x = _noisy(60, 0.001, 4)
    x[30:] *= 1.01  # 1 % rps: significant, but under the 2 % minimum effect
    assert series_findings(_series(x)) == []
    (f,) = series_findings(_series(x), Thresholds(min_magnitude=0.0))
    assert f.direction == "improvement"


def test_since_filters_by_first_commit_of_new_regime_and_regressions_come_first() -> None:
    a = _noisy(40, 0.005, 5)
    a[10:] *= 1.20                      # improvement at hour 10
    b = _noisy(40, 0.005, 6)
    b[30:] *= 0.95                      # regression at hour 30
    both = [_series(a, key="a"), _series(b, key="b")]
    found = find_all(both)
    assert [(f.series_key, f.direction) for f in found] == [("b", "regression"),
                                                             ("a", "improvement")]
    late = find_all(both, since=T0 + timedelta(hours=20))
    assert [f.series_key for f in late] == ["b"]


def test_change_points_are_judged_by_the_verdict_rule() -> None:
    """Each change point's segments go through the verdict rule at the detection's level: a
    30% step is a regression at 1% CV and still at 15% (the t-test weighs the noise); its
    p-value is the rule's."""
    for cv in (0.01, 0.15):
        x = _noisy(60, cv, 7)
        x[30:] *= 0.7
        (f,) = series_findings(_series(x))
        assert f.direction == "regression" and f.pvalue < 1e-6
        verdict, p = judge_step(x[:30], x[30:], "rps", Thresholds())
        assert verdict is Verdict.REGRESSION and p == f.pvalue
    assert judge_step(np.full(5, 100.0), np.full(5, 101.0), "rps", Thresholds())[0] is \
        Verdict.NO_CHANGE  # no spread: the ±5% water line
