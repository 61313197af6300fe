"""An alert's pure parts: the lifecycle's moves, the regimes around a range, the step's CI
and the fixed check (docs/guide/alerts.md)."""

from __future__ import annotations

import math

import pytest

from kvperf.analysis.alerts import fix_check, regimes, step
from kvperf.core.errors import UsageError
from kvperf.store.alerts import TRANSITIONS, next_state


def test_the_lifecycle_moves_forward_and_refuses_naming_the_state() -> None:
    assert next_state(1, "new", "ack") == "acknowledged"
    assert next_state(1, "acknowledged", "culprit") == "culprit"
    assert next_state(1, "culprit", "culprit") == "culprit"  # a later bisection renames it
    assert next_state(1, "culprit", "fixed") == "fixed"
    assert next_state(1, "new", "invalid") == "invalid"
    assert next_state(1, "acknowledged", "assign") == "acknowledged"
    with pytest.raises(UsageError, match="alert 7 is acknowledged: ack applies only to an "
                                         "alert that is new"):
        next_state(7, "acknowledged", "ack")
    for resolved in ("fixed", "invalid", "expected"):
        for action in ("ack", "assign", "culprit", "fixed", "invalid", "expected"):
            with pytest.raises(UsageError, match=f"alert 2 is {resolved}"):
                next_state(2, resolved, action)
    assert set(TRANSITIONS["note"]) == {"new", "acknowledged", "culprit", "fixed", "invalid",
                                        "expected"}


def test_regimes_end_where_a_fix_or_an_earlier_step_begins() -> None:
    values = [200.0, 300.0, 301.0, 299.0, 120.0, 121.0, 119.0, 300.0, 300.0]
    before, after = regimes(values, 4, before_mean=300.0, after_mean=120.0)
    assert before == [300.0, 301.0, 299.0] and after == [120.0, 121.0, 119.0]


def test_the_step_has_the_rule_s_interval_around_the_change() -> None:
    s = step([100.0, 101.0, 99.0, 100.0], [90.0, 91.0, 89.0, 90.0], "rps")
    assert s.change == pytest.approx(-0.1)
    assert s.low < -0.1 < s.high and s.high < -0.08 and s.low > -0.12
    assert (s.before_commits, s.after_commits) == (4, 4)
    assert math.isnan(step([], [1.0], "rps").low)


def test_a_fix_is_back_within_the_metric_s_minimum_effect() -> None:
    back = fix_check("rps", 300_000.0, [120_000.0, 120_000.0, 299_000.0, 300_000.0, 301_000.0])
    assert back.commits == 3 and back.back and back.change == pytest.approx(0.0)
    still = fix_check("rps", 300_000.0, [120_000.0, 120_000.0, 290_000.0])
    assert not still.back and still.change == pytest.approx(-0.4111, abs=1e-3)
    assert not fix_check("rps", 300_000.0, []).back  # nothing measured after the change
    latency = fix_check("p99_latency_ms", 1.0, [1.04])  # 5 % margin for latency
    assert latency.back and latency.margin == pytest.approx(0.05)
