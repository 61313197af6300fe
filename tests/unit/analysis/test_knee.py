"""The knee rule (analysis/knee.py) on constructed curves: the SLO form, the growth-factor
form and its baseline, confirmed breaks (a lone noisy point is not the knee), unsustained
rates, no knee, a knee beyond the top, the interval over rounds, and two sides' knees through
the verdict rule."""

from __future__ import annotations

import math

import pytest

from kvperf.analysis.knee import CurvePoint, baseline_ms, find_knee, knee_interval
from kvperf.analysis.rate_curve import Curve, compare_knees
from kvperf.analysis.verdict import Verdict
from kvperf.config.rate_sweep import parse_slo

SATURATION = 100_000.0
PERCENTS = (10, 30, 50, 60, 70, 80, 85, 90, 95, 100)


def curve(p99s: list[float], achieved: list[float] | None = None) -> list[CurvePoint]:
    """Points at PERCENTS of SATURATION with these corrected p99s (ms)."""
    out = []
    for i, p99 in enumerate(p99s):
        target = SATURATION * PERCENTS[i] / 100
        latency = {"mean": p99 / 3, "p50": p99 / 4, "p90": p99 / 2, "p99": p99,
                   "p99_9": p99 * 2, "max": p99 * 3}
        out.append(CurvePoint(f"{PERCENTS[i]}%", target,
                              achieved[i] if achieved else target, latency, latency,
                              PERCENTS[i]))
    return out


def test_factor_rule_knee_is_the_point_before_the_first_confirmed_break() -> None:
    points = curve([0.10, 0.12, 0.13, 0.15, 0.18, 0.21, 0.26, 0.40, 0.9, 40.0])
    knee = find_knee(points, SATURATION)
    # baseline: the lowest p99 at ≤ 30% of saturation = 0.10; bound 0.20 ms
    assert baseline_ms(points, SATURATION) == pytest.approx(0.10)
    assert knee.bound_ms == pytest.approx(0.20)
    assert knee.index == 4 and knee.reached  # 70%: 80% (0.21) breaks and 85% confirms
    assert knee.breaks == (False,) * 5 + (True,) * 5
    assert "80% breaks" in knee.reason


def test_a_lone_noisy_point_is_not_the_knee() -> None:
    points = curve([0.10, 0.11, 0.35, 0.12, 0.13, 0.15, 0.19, 0.30, 0.6, 30.0])
    knee = find_knee(points, SATURATION)
    assert knee.breaks[2] and not knee.breaks[3]
    assert knee.index == 6  # 85%: 90% and 95% break


def test_the_baseline_is_the_lowest_p99_of_the_low_rate_points() -> None:
    # 10% is noisy (0.3), 30% is the quiet baseline 0.1: bound 0.2
    points = curve([0.30, 0.10, 0.12, 0.14, 0.16, 0.25, 0.3, 0.4, 0.5, 9.0])
    knee = find_knee(points, SATURATION)
    assert knee.bound_ms == pytest.approx(0.20)
    assert knee.index == 4
    # without a saturation rps the first point is the baseline
    assert find_knee(points, None).bound_ms == pytest.approx(0.60)


def test_slo_rule_uses_the_named_percentile() -> None:
    points = curve([0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.2, 1.5, 50.0])
    assert find_knee(points, SATURATION, parse_slo("p99<=1ms")).index == 6  # 85%: 1.0 holds
    assert find_knee(points, SATURATION, parse_slo("p99<1ms")).index == 5  # strict
    # p99.9 = 2 × p99 here: 0.5 ms × 2 = 1.0 holds at 60%, 70% (1.2) breaks
    assert find_knee(points, SATURATION, parse_slo("p99.9<=1000us")).index == 3


def test_a_point_that_did_not_sustain_its_rate_breaks() -> None:
    p99s = [0.1] * 10
    achieved = [SATURATION * p / 100 for p in PERCENTS]
    achieved[8] = achieved[9] = 0.8 * SATURATION  # 95% and 100% fell behind
    knee = find_knee(curve(p99s, achieved), SATURATION)
    assert knee.index == 7 and "achieved" in knee.reason


def test_no_knee_and_a_knee_beyond_the_top() -> None:
    low = find_knee(curve([0.1, 0.5, 0.5] + [9.0] * 7), SATURATION, parse_slo("p99<=0.05ms"))
    assert low.index is None and "lowest rate already breaks" in low.reason
    flat = find_knee(curve([0.1] * 10), SATURATION)
    assert flat.index == 9 and not flat.reached and "beyond the top" in flat.reason


def test_a_break_at_the_last_point_counts_alone() -> None:
    knee = find_knee(curve([0.1] * 9 + [5.0]), SATURATION)
    assert knee.index == 8 and knee.reached


def test_knee_interval_over_rounds() -> None:
    one = knee_interval([70_000.0])
    assert one.mean == pytest.approx(70_000) and math.isnan(one.low)
    three = knee_interval([70_000.0, 72_000.0, 74_000.0])
    assert three.mean == pytest.approx((70_000 * 72_000 * 74_000) ** (1 / 3))
    assert 0 < three.low < 70_000 < 74_000 < three.high  # t(2) interval is wide
    assert three.high / three.mean == pytest.approx(three.mean / three.low)  # on logs
    wide = knee_interval([30_000.0, 110_000.0])
    assert wide.low > 0  # never a negative rate
    with pytest.raises(ValueError):
        knee_interval([])


def _curve(knees: list[float | None], sweep_id: str = "s1") -> Curve:
    points = tuple(curve([0.1] * 10))
    return Curve("SET d=64 P=1 c=50", sweep_id, (SATURATION,), points,
                 find_knee(points, SATURATION), tuple(knees), {"slo": None, "factor": 2.0},
                 "poisson")


def test_two_sides_knees_are_judged_by_the_verdict_rule_paired_by_round() -> None:
    base = [70_000.0, 72_000.0, 69_000.0, 71_000.0, 70_500.0]
    higher = [k * 1.2 * (1 + 0.01 * (-1) ** i) for i, k in enumerate(base)]
    (up,) = compare_knees([_curve(base)], [_curve(higher)])
    assert up.decision.verdict is Verdict.IMPROVEMENT
    assert up.ratio.ratio == pytest.approx(1.2, rel=0.02) and up.ratio.method == "paired t"
    assert up.ratio.low < up.ratio.ratio < up.ratio.high
    (down,) = compare_knees([_curve(higher)], [_curve(base)])
    assert down.decision.verdict is Verdict.REGRESSION
    (same,) = compare_knees([_curve(base)], [_curve(base)])
    assert same.decision.verdict is Verdict.NO_CHANGE
    # a round whose knee was below the lowest rate is left out of the pairs
    (gap,) = compare_knees([_curve([*base[:4], None])], [_curve(higher)])
    assert gap.ratio.n == 4
    # two runs that were not one interleaved run: independent samples
    (apart,) = compare_knees([_curve(base)], [_curve(higher)], paired=False)
    assert apart.ratio.method == "t" and apart.decision.verdict is Verdict.IMPROVEMENT
    # a series swept on one side only is not compared
    assert compare_knees([_curve(base, "s1")], [_curve(base, "s2")]) == []


def test_a_sweep_point_s_series_names_its_rate() -> None:
    """compare's verdict table lists a sweep's points one series each: the label says which
    (before: every point read "SET d=64 P=1 c=50", the same name on six rows)."""
    from kvperf.analysis.comparison import describe_group

    key = (("command", "SET"), ("data_size", 64), ("pipeline", 1), ("clients", 50),
           ("config_set", (("rate", "70%"),)))
    assert describe_group(key) == "SET d=64 P=1 c=50 @ 70%"
