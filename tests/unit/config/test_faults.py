"""config/faults.py and the loader's ``faults`` key: entries parsed, mistakes named, and
schedules a topology cannot serve refused (the loader's ConfigError is exit 2)."""

from __future__ import annotations

from typing import Any

import pytest

from kvperf.config.faults import Fault, from_config, refusal
from kvperf.config.loader import parse_config
from kvperf.core.errors import ConfigError


def test_entries_parse_sorted_by_time_with_their_target() -> None:
    faults = from_config("faults", [{"at": 5, "promote": "replica"},
                                    {"at": 2.5, "pause": "primary", "seconds": 1},
                                    {"at": 1, "kill": "primary-of-slot 42"}])
    assert [f.at for f in faults] == [1.0, 2.5, 5.0]
    assert faults[0].slot == 42 and faults[1].slot is None
    assert faults[1] == Fault(2.5, "pause", "primary", 1.0)
    assert faults[1].text() == "pause primary at 2.5s for 1s"


@pytest.mark.parametrize(("entry", "message"), [
    ({"kill": "primary"}, "missing 'at'"),
    ({"at": -1, "kill": "primary"}, "'at' must be a number >= 0"),
    ({"at": 1, "kill": "primary", "pause": "primary"}, "exactly one action"),
    ({"at": 1, "kill": "leader"}, "unknown target 'leader'"),
    ({"at": 1, "kill": "primary-of-slot 16384"}, "not a hash slot"),
    ({"at": 1, "promote": "primary"}, "acts on a replica"),
    ({"at": 1, "kill": "primary", "seconds": 2}, "'seconds' belongs to a pause"),
    ({"at": 1, "pause": "primary", "seconds": 0}, "'seconds' must be a number"),
    ("kill", "must be an object"),
])
def test_a_bad_entry_is_named(entry: Any, message: str) -> None:
    with pytest.raises(ValueError, match="entry 0") as info:
        from_config("faults", [entry])
    assert message in str(info.value)


def test_topology_refusals() -> None:
    kill = from_config("faults", [{"at": 1, "kill": "primary"}])
    promote = from_config("faults", [{"at": 1, "promote": "replica"}])
    failover = from_config("faults", [{"at": 1, "failover": "replica"}])
    slot = from_config("faults", [{"at": 1, "kill": "primary-of-slot 0"}])
    assert refusal(kill, cluster=False, replicas=0, duration=5) is None
    assert "time-bounded" in (refusal(kill, cluster=False, replicas=0, duration=None) or "")
    assert "after the measure stage" in (refusal(kill, cluster=False, replicas=0, duration=1) or "")
    assert "needs a replica" in (refusal(promote, cluster=False, replicas=0, duration=5) or "")
    assert refusal(promote, cluster=False, replicas=1, duration=5) is None
    assert "with \"failover\"" in (refusal(promote, cluster=True, replicas=1, duration=5) or "")
    assert "needs a cluster" in (refusal(failover, cluster=False, replicas=1, duration=5) or "")
    assert "needs cluster_mode" in (refusal(slot, cluster=False, replicas=0, duration=5) or "")
    assert refusal(slot, cluster=True, replicas=0, duration=5) is None


def test_the_loader_checks_every_cluster_mode_and_carries_the_schedule() -> None:
    both = {"commands": ["SET"], "duration": 5, "cluster_mode": [False, True],
            "faults": [{"at": 1, "kill": "primary-of-slot 0"}]}
    with pytest.raises(ConfigError, match=r"object 0: .*needs cluster_mode"):
        parse_config(both, set())
    fine = {"commands": ["SET"], "duration": 5, "faults": [{"at": 1, "kill": "primary"}]}
    spec = parse_config(fine, set())[0]
    assert spec.faults == (Fault(1.0, "kill", "primary"),)
