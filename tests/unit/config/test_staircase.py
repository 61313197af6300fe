"""A config's "staircase": parsed and refused as memtier refuses a ramp (pure)."""

from __future__ import annotations

import pytest

from kvperf.config.loader import ConfigError, parse_config
from kvperf.config.staircase import Staircase, staircase_from_config
from kvperf.plan.matrix import expand
from kvperf.results.row import trial_series

RAMP = {"start": 10, "step": 10, "step_seconds": 5}


def _config(**extra: object) -> list[dict[str, object]]:
    return [{"commands": ["SET"], "clients": [30], "duration": [20], "staircase": RAMP,
             **extra}]


def test_a_ramp_reaches_every_trial_and_its_series() -> None:
    [spec] = parse_config(_config(), {0, 1})
    assert spec.staircase == Staircase(10, 10, 5)
    [trial] = expand([spec])
    assert trial.load.staircase == Staircase(10, 10, 5)
    assert trial.params()["staircase"] == RAMP
    assert "staircase 10+10 every 5s" in trial.describe()
    assert trial_series(trial)["config_set"] == {"staircase": "10+10 every 5s"}
    assert Staircase(10, 10, 5).argv() == ["--clients-start", "10", "--clients-step", "10",
                                           "--step-duration", "5"]


def test_without_a_ramp_nothing_changes() -> None:
    [spec] = parse_config([{"commands": ["SET"], "duration": [1]}], {0})
    [trial] = expand([spec])
    assert trial.load.staircase is None and "staircase" not in trial.params()
    assert trial_series(trial)["config_set"] is None


@pytest.mark.parametrize(("value", "message"), [
    ([10, 10, 5], "must be an object"),
    ({"start": 10, "step": 10}, "needs 'step_seconds'"),
    ({**RAMP, "stop": 3}, "unknown key 'stop'"),
    ({**RAMP, "step": 0}, "'step' must be a positive integer"),
    ({**RAMP, "start": True}, "'start' must be a positive integer"),
])
def test_bad_ramps_name_the_setting(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        staircase_from_config("staircase", value)


@pytest.mark.parametrize(("extra", "message"), [
    ({"clients": [30, 10]}, r"'start' \(10\) must be less than 'clients' \(10\)"),
    ({"duration": None, "requests": [1000]}, "'staircase' needs 'duration'"),
    ({"rate_sweep": True}, "cannot be combined with 'rate_sweep'"),
    ({"faults": [{"at": 1, "kill": "primary"}], "replicas": 1},
     "cannot be combined with 'faults'"),
])
def test_a_config_refuses_what_memtier_refuses(extra: dict[str, object], message: str) -> None:
    obj = {k: v for k, v in _config(**extra)[0].items() if v is not None}
    with pytest.raises(ConfigError, match=message):
        parse_config([obj], {0, 1})
