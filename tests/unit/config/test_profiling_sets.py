"""The seed's ``profiling_sets`` in kvperf's config: parsing, errors, and the plan's trials."""

from __future__ import annotations

from typing import Any

import pytest

from kvperf.config.loader import parse_config
from kvperf.config.model import ProfileSettings
from kvperf.core.errors import ConfigError
from kvperf.core.kinds import ProfileMode
from kvperf.plan.matrix import expand

BASE = {"requests": 10, "commands": ["SET", "GET"]}


def _sets(value: Any) -> tuple[ProfileSettings | None, ...]:
    [spec] = parse_config([{**BASE, "profiling_sets": value}], {0, 1})
    return spec.profiling


def test_the_seeds_example_off_and_wall_time() -> None:
    sets = _sets([{"enabled": False}, {"enabled": True, "mode": "wall-time",
                                       "sampling_freq": 499}])
    assert sets == (None, ProfileSettings(499, "fp", ProfileMode.WALL_TIME))


def test_defaults_and_a_measure_window() -> None:
    [on] = _sets([{"delays": {"measure": {"delay": 1, "duration": 2.5}}}])
    assert on == ProfileSettings(999, "fp", ProfileMode.CPU, 1.0, 2.5)


def test_no_profiling_sets_means_one_unprofiled_set() -> None:
    [spec] = parse_config([BASE], {0, 1})
    assert spec.profiling == (None,)


@pytest.mark.parametrize(("value", "message"), [
    ([], "non-empty list"),
    ([{"enabled": "yes"}], "profiling_sets[0].enabled must be true or false"),
    ([{"mode": "off-cpu"}], "profiling_sets[0].mode must be one of cpu, wall-time"),
    ([{"sampling_freq": 0}], "sampling_freq must be an integer 1-100000"),
    ([{"enabled": False}, {"frequency": 99}], "profiling_sets[1] has unknown key 'frequency'"),
    ([{"delays": {"search": {"delay": 1}}}], "names phase 'search'; phases here: measure"),
    ([{"delays": {"measure": {"delay": -1}}}], "delays.measure.delay must be a number ≥ 0"),
    ([{"delays": {"measure": {"start": 1}}}], "must be an object with \"delay\""),
    ([{"call_graph": "lbr"}], "call_graph must be one of fp, dwarf"),
])
def test_mistakes_name_the_set_and_key(value: Any, message: str) -> None:
    with pytest.raises(ConfigError, match="object 0") as caught:
        _sets(value)
    assert message in str(caught.value)


def test_each_set_repeats_the_trials_with_its_own_identity() -> None:
    specs = parse_config([{**BASE, "profiling_sets": [{"enabled": False}, {"mode": "cpu"}]}],
                         {0, 1})
    plan = expand(specs, runs=2)
    assert len(plan) == 2 * 2 * 2
    first = [t for t in plan if t.run == 1]
    assert [(t.load.command.name, t.profile is not None) for t in first] == [
        ("SET", False), ("GET", False), ("SET", True), ("GET", True)]
    assert len({t.id for t in first}) == 4
    assert "profile" not in first[0].params()  # unprofiled ids are as before
    assert first[2].params()["profile"]["mode"] == "cpu"
    assert first[2].describe().endswith("[profiled cpu]")
