"""A rate sweep through the one Runner, without any server (tests/unit/pipeline/run/
test_lifecycle.py's recording fakes): per series and round the closed-loop trial first, its
rps placing the points' open-loop rates; each point a row of its own series; a failed
closed-loop trial fails its round's points with the reason and keeps every row; the
progress line says how long the sweep takes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from rich.console import Console

from kvperf.config.rate_sweep import RateSweep
from kvperf.core.errors import DriverError
from kvperf.driver.base import Measurement, Target
from kvperf.pipeline.run.rate_sweep import PointWork, SaturationWork, SweepBatch
from kvperf.pipeline.run.runner import Runner
from kvperf.plan.trial import Load
from kvperf.report.table import results_table
from tests.unit.pipeline.run.test_lifecycle import (
    Events,
    FakeDriver,
    FakeLauncher,
    FakeProbe,
    RecordingObserver,
    _prepared,
)


@dataclass
class RateDriver(FakeDriver):
    """A load tool that records each measured load's rate; the closed loop does 100,000
    rps (or fails, ``fail_closed``: its first closed-loop run)."""

    rates: list[float | None] = field(default_factory=list)
    fail_closed: bool = False

    def measure(self, load: Load, target: Target, log: Path) -> Measurement:
        self.rates.append(load.rps)
        if load.rps is None and self.fail_closed:
            self.fail_closed = False
            raise DriverError("closed loop refused")
        rps = load.rps or 100_000.0
        return Measurement(rps, 0.5, 0.1, 0.5, 0.8, 0.9, 1.2, requests=int(rps))


def _sweep_runner(tmp_path: Path, driver: RateDriver, runs: int = 1,
                  sweep: RateSweep | None = None) -> tuple[Runner, SweepBatch]:
    prepared = _prepared(tmp_path, driver, runs)
    prepared = replace(prepared, options=replace(
        prepared.options, rate_sweep=sweep or RateSweep(percents=(10, 50, 90))))
    batch = SweepBatch(prepared)
    events: Events = []
    return Runner(batch, RecordingObserver(events), launcher=FakeLauncher(events),
                  probe=FakeProbe(events, cpu=[])), batch


def test_the_closed_loop_places_each_rounds_points(tmp_path: Path) -> None:
    driver = RateDriver([])
    runner, batch = _sweep_runner(tmp_path, driver, runs=2)
    works = batch.works()
    assert [type(w) for w in works] == [SaturationWork, PointWork, PointWork, PointWork] * 2
    summary = runner.execute()
    assert driver.rates == [None, 10_000.0, 50_000.0, 90_000.0] * 2
    rows = summary.rows
    assert all(r["status"] == "ok" for r in rows)
    sat, point = rows[0], rows[2]
    assert sat["sweep"]["role"] == "saturation" and sat["config_set"] is None
    assert point["sweep"] == {
        "id": sat["trial_id"], "role": "point", "points": 3, "arrivals": "poisson",
        "point_seconds": 5, "rule": {"slo": None, "factor": 2.0}, "index": 1,
        "point": "50%", "percent": 50, "target_rps": 50_000.0, "saturation_rps": 100_000.0}
    assert point["config_set"] == {"rate": "50%"} and point["duration"] == 5
    # the same point in round 2 is the same series and trial id
    assert rows[6]["trial_id"] == point["trial_id"] and rows[6]["run"] == 2
    assert len({r["trial_id"] for r in rows}) == 4
    assert len(json.loads(runner.metrics.path.read_text())) == 8
    table = Console(width=200, record=True)
    table.print(results_table(rows, "sweep"))
    text = table.export_text()
    assert "│ GET @50% " in text and "│ GET      " in text  # the closed loop: its command


def test_a_failed_closed_loop_fails_its_rounds_points_with_the_reason(tmp_path: Path) -> None:
    driver = RateDriver([], fail_closed=True)
    runner, _ = _sweep_runner(tmp_path, driver, runs=2)
    rows = runner.execute().rows
    assert [r["status"] for r in rows] == ["failed"] * 4 + ["ok"] * 4
    assert "closed loop refused" in rows[0]["error"]
    assert all("no rate for" in r["error"] and "closed loop refused" in r["error"]
               for r in rows[1:4])
    assert driver.rates == [None, None, 10_000.0, 50_000.0, 90_000.0]  # none sent unplaced


def test_explicit_rates_need_no_saturation(tmp_path: Path) -> None:
    driver = RateDriver([], fail_closed=True)
    runner, _ = _sweep_runner(tmp_path, driver, sweep=RateSweep(rates=(1000.0, 2000.0)))
    rows = runner.execute().rows
    assert [r["status"] for r in rows] == ["failed", "ok", "ok"]
    assert [r["sweep"].get("target_rps") for r in rows[1:]] == [1000.0, 2000.0]


def test_the_progress_line_says_how_long_the_sweep_takes(tmp_path: Path) -> None:
    _, batch = _sweep_runner(tmp_path, RateDriver([]), sweep=RateSweep())
    first, point = batch.works()[0], batch.works()[1]
    # the fake config: 1 s + 1 s warmup closed loop, then 10 points of 1 s warmup + 0.5 s
    # settle + 5 s (+ 1 s overhead each, and seeding 10 keys)
    assert "then 10 rate points · sweep ≈ 1 min 18 s" in first.describe()
    assert "point 1/10, sweep ≈ 1 min 15 s left" in point.describe()


@pytest.mark.parametrize("quick", [True, False])
def test_quick_mode_shortens_the_points(tmp_path: Path, quick: bool) -> None:
    _, batch = _sweep_runner(tmp_path, RateDriver([]))
    batch.prepared = replace(batch.prepared,
                             options=replace(batch.prepared.options, quick=quick))
    point = batch.works()[1]
    assert isinstance(point, PointWork)
    assert point.sweep.point_seconds == (1 if quick else 5)
