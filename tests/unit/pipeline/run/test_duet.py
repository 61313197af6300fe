"""Duet rounds: the sides meet before warmup and measure; one side's failure fails the round.

The runners here are stand-ins (named so): they call the barrier hook the way a real trial
does and return rows, so the synchronisation logic is tested without servers. The real duet
runs against real servers in tests/integration/test_builds.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from kvperf.config.loader import parse_config
from kvperf.core.errors import UsageError
from kvperf.pipeline.run.duet import check_duet, run_duet_round
from kvperf.pipeline.run.model import Work
from kvperf.pipeline.run.runner import Runner
from kvperf.plan.matrix import expand
from kvperf.plan.trial import Trial


@dataclass
class StandInRunner:
    """Plays a side: meets its partners at the two stages, or fails at ``fail_at``."""

    name: str
    fail_at: str | None = None
    blocked: str | None = None
    delay: float = 0.0
    met: dict[str, float] = field(default_factory=dict)

    def run_trial(self, work: Work, sync: Callable[[str], None] | None = None
                  ) -> dict[str, Any]:
        if self.blocked:
            return {"status": "failed", "error": self.blocked}
        try:
            for stage in ("warmup", "measure"):
                time.sleep(self.delay)
                if stage == self.fail_at:
                    return {"status": "failed", "error": f"{self.name} broke at {stage}"}
                assert sync is not None
                sync(stage)
                self.met[stage] = time.monotonic()
        except Exception as exc:  # what Runner.run_trial does with a KvperfError
            return {"status": "failed", "error": str(exc)}
        return {"status": "ok", "error": None}


def _trials(bound: dict[str, int]) -> list[Trial]:
    return expand(parse_config([{**bound, "commands": ["SET"]}], {0, 1}), 1)


def _round(*runners: StandInRunner) -> dict[str, dict[str, Any]]:
    trial = _trials({"duration": 1})[0]
    sides = {r.name: cast(Runner, r) for r in runners}
    started: list[str] = []
    rows = run_duet_round(sides, {r.name: cast(Work, trial) for r in runners},
                          [r.name for r in runners], started.append)
    assert started == [r.name for r in runners]
    return rows


def test_sides_wait_for_each_other_before_measuring() -> None:
    slow, fast = StandInRunner("A", delay=0.3), StandInRunner("B")
    rows = _round(slow, fast)
    assert [rows[s]["status"] for s in "AB"] == ["ok", "ok"]
    assert abs(slow.met["measure"] - fast.met["measure"]) < 0.1


def test_a_side_failing_before_the_measure_stage_fails_its_partner() -> None:
    rows = _round(StandInRunner("A", fail_at="measure"), StandInRunner("B"))
    assert rows["A"]["error"] == "A broke at measure"
    assert rows["B"]["status"] == "failed"
    assert "partner" in rows["B"]["error"]
    assert threading.active_count() == 1  # no side left waiting


def test_a_blocked_side_does_not_hold_up_the_others() -> None:
    rows = _round(StandInRunner("A", blocked="build failed"), StandInRunner("B"),
                  StandInRunner("C"))
    assert rows["A"] == {"status": "failed", "error": "build failed"}
    assert rows["B"]["status"] == rows["C"]["status"] == "ok"


def test_duet_needs_duration_bound_trials_and_two_sides() -> None:
    by_requests = _trials({"requests": 1000})
    with pytest.raises(UsageError, match="give 'duration'"):
        check_duet(by_requests, "timing", 2)
    by_duration = _trials({"duration": 2})
    check_duet(by_duration, "timing", 2)
    with pytest.raises(UsageError, match="at least two sides"):
        check_duet(by_duration, "timing", 1)
    with pytest.raises(UsageError, match="--measure instructions"):
        check_duet(by_duration, "instructions", 2)
