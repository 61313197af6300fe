"""A rate sweep's plan (plan/sweep.py) and settings (config/rate_sweep.py): the ladder, each
point's trial and identity, the time estimate (a default sweep of one series ≤ 2 minutes,
quick mode shorter), and the settings' parsing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvperf.config.loader import parse_config
from kvperf.config.rate_sweep import (
    DEFAULT_PERCENTS,
    RateSweep,
    from_config,
    parse_numbers,
    parse_slo,
)
from kvperf.plan.matrix import expand
from kvperf.plan.sweep import (
    duration_text,
    ladder,
    point_id,
    point_trial,
    sweep_seconds,
)
from kvperf.plan.trial import Trial

DEFAULT_SERIES = {"commands": ["SET"], "data_sizes": 64, "clients": 50, "duration": 3,
                  "warmup": 1, "keyspacelen": 100_000}


def base_trial(**overrides: object) -> Trial:
    spec = parse_config([{**DEFAULT_SERIES, **overrides}], {0, 1})
    return expand(spec)[0]


def test_default_ladder_is_percents_of_saturation_finer_near_the_top() -> None:
    steps = ladder(RateSweep())
    assert [s.label for s in steps] == ["10%", "30%", "50%", "60%", "70%", "80%", "85%",
                                        "90%", "95%", "100%"]
    assert [s.target(200_000.0) for s in steps][:3] == [20_000.0, 60_000.0, 100_000.0]
    assert steps[0].target(None) is None  # no saturation: no rate


def test_explicit_rates_are_sorted_and_need_no_saturation() -> None:
    steps = ladder(RateSweep(rates=parse_numbers("50k,10000,20000", "--rates")))
    assert [(s.label, s.target(None)) for s in steps] == [
        ("10000/s", 10_000.0), ("20000/s", 20_000.0), ("50000/s", 50_000.0)]
    steps = ladder(RateSweep(rates=parse_numbers("2000000,2500.5", "--rates")))
    assert [s.label for s in steps] == ["2500.5/s", "2000000/s"]


def test_a_point_is_the_series_load_open_loop_for_point_seconds() -> None:
    base = base_trial()
    step = ladder(RateSweep())[3]
    trial = point_trial(base, step, 123_456.0, RateSweep(point_seconds=4))
    load = trial.load
    assert (load.rps, load.arrivals, load.duration, load.requests, load.warmup) == (
        123_456.0, "poisson", 4, None, 1)
    assert (load.command, load.clients, load.data_size) == (base.load.command, 50, 64)
    assert "at 123,456 rps" in trial.describe()


def test_a_points_identity_is_its_series_and_step_not_its_rate_or_round() -> None:
    base = base_trial()
    steps = ladder(RateSweep())
    ids = {point_id(base, s) for s in steps}
    assert len(ids) == len(steps) and base.id not in ids
    assert point_id(replace(base, run=2), steps[0]) == point_id(base, steps[0])
    other = base_trial(data_sizes=128)
    assert point_id(other, steps[0]) != point_id(base, steps[0])


def test_ordinary_trial_ids_do_not_change() -> None:
    """Load gained rps/arrivals: a trial without them keeps its identity (history)."""
    base = base_trial()
    assert "rps" not in base.params() and "arrivals" not in base.params()


def test_a_default_sweep_of_one_series_takes_at_most_two_minutes() -> None:
    base = base_trial()  # the built-in config's series: 3 s + 1 s warmup
    seconds = sweep_seconds(base, RateSweep())
    assert 60 <= seconds <= 120, seconds
    quick = sweep_seconds(replace(base, load=replace(base.load, warmup=0, duration=1)),
                          RateSweep(point_seconds=1))
    assert quick <= 30 and quick < seconds / 2
    assert duration_text(seconds) .endswith(" s") and "min" in duration_text(seconds)


def test_settings_from_a_config_object() -> None:
    assert from_config("rate_sweep", True) == RateSweep()
    assert from_config("rate_sweep", False) is None
    sweep = from_config("rate_sweep", {"percents": [20, 60, 90], "point_seconds": 2,
                                       "slo": "p99<=1ms", "arrivals": "uniform"})
    assert sweep is not None
    assert (sweep.percents, sweep.point_seconds, sweep.arrivals) == ((20, 60, 90), 2,
                                                                      "uniform")
    assert sweep.slo == parse_slo("p99<=1ms")
    specs = parse_config([{**DEFAULT_SERIES, "rate_sweep": {"rates": "10k,20k"}}], {0})
    assert specs[0].rate_sweep == RateSweep(rates=(10_000.0, 20_000.0))
    assert DEFAULT_PERCENTS[-1] == 100


@pytest.mark.parametrize(("value", "says"), [
    ({"rates": [0]}, "positive"), ({"rates": "x"}, "not a number"),
    ({"percents": [10, 500]}, "beyond 150%"), ({"slo": "p99 under 1ms"}, "rate_sweep.slo"),
    ({"point_seconds": 0}, "point_seconds"), ({"factor": 1}, "above 1"),
    ({"rate": [1]}, "unknown key 'rate'"), ({"percents": [1], "rates": [1]}, "not both"),
    ({"arrivals": "bursty"}, "arrivals"), ("yes", "must be true or an object")])
def test_bad_settings_name_the_key(value: object, says: str) -> None:
    with pytest.raises(ValueError, match=says.replace("(", r"\(")):
        from_config("rate_sweep", value)


@pytest.mark.parametrize(("text", "metric", "bound", "strict"), [
    ("p99<=1ms", "p99", 1.0, False), ("p99.9 < 2.5ms", "p99.9", 2.5, True),
    ("p50<=300us", "p50", 0.3, False), ("p90<=0.002s", "p90", 2.0, False)])
def test_slo_parsing(text: str, metric: str, bound: float, strict: bool) -> None:
    slo = parse_slo(text)
    assert (slo.metric, slo.strict) == (metric, strict)
    assert slo.bound_ms == pytest.approx(bound)
    assert parse_slo(slo.text()) == slo


@pytest.mark.parametrize("text", ["p99>=1ms", "p98<=1ms", "p99<=1", "p99<=0ms", "fast"])
def test_unparsable_slos(text: str) -> None:
    with pytest.raises(ValueError):
        parse_slo(text)
