"""`compare --server-bin`'s default schedule: a duet wherever the plan allows it."""

from __future__ import annotations

from pathlib import Path

from kvperf.core.kinds import Measure, Schedule
from kvperf.pipeline.sides.sides import default_schedule
from tests.helpers import write_config


def test_duet_where_the_plan_allows_it_else_alternate(tmp_path: Path) -> None:
    timed = write_config(tmp_path, [{"commands": ["SET"], "duration": [1]}], "timed.json")
    counted = write_config(tmp_path, [{"commands": ["SET"], "requests": [1000]}], "n.json")
    assert default_schedule(None, Measure.TIMING, None, False, 3) is Schedule.DUET
    assert default_schedule(timed, Measure.TIMING, "kvload", False, 2) is Schedule.DUET
    assert default_schedule(counted, Measure.TIMING, None, False, 2) is Schedule.ALTERNATE
    assert default_schedule(timed, Measure.MEMORY, None, False, 2) is Schedule.ALTERNATE
    assert default_schedule(timed, Measure.TIMING, None, True, 2) is Schedule.ALTERNATE
    assert default_schedule(timed, Measure.TIMING, "valkey-benchmark", False, 2) is \
        Schedule.ALTERNATE
