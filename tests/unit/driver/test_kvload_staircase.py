"""A staircase trial through kvperf (pure): kvload's argv gets the ramp, its per-step
results reach the row's ``client.staircase`` and the terminal table shows one line a step."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from rich.console import Console

from kvperf.config.loader import parse_config
from kvperf.driver.base import Target
from kvperf.driver.kvload import Kvload, measurement_from
from kvperf.plan.matrix import expand
from kvperf.report.staircase import staircase_tables
from kvperf.results.row import Row, client_record
from kvperf.server.resp import Endpoint
from tests.unit.driver.test_kvload_report import make_report

STEPS = [{"step": k, "connections": c, "from_s": k, "to_s": k + 1, "requests": 100 * c,
          "duration_s": 1.0, "ops_sec": 100.0 * c, "p50_ms": 0.1 * c, "p99_ms": 0.2 * c,
          "p99_9_ms": None, "errors": 0} for k, c in enumerate((2, 4, 6))]


def test_kvload_runs_the_ramp() -> None:
    [spec] = parse_config([{"commands": ["SET"], "clients": [6], "duration": [3],
                            "staircase": {"start": 2, "step": 2, "step_seconds": 1}}], {0})
    [trial] = expand([spec])
    target = Target((Endpoint("127.0.0.1", 1),), False)
    argv = Kvload(Path("kvload"), "0").argv(trial.load, target, ["--duration", "3"],
                                             Path("r.json"))
    at = argv.index("--clients-start")
    assert argv[at:at + 6] == ["--clients-start", "2", "--clients-step", "2",
                               "--step-duration", "1"]


def test_steps_reach_the_row_and_the_table() -> None:
    measured = measurement_from({**make_report(), "staircase": STEPS})
    record = client_record(measured)
    assert [s["connections"] for s in cast(Any, record)["staircase"]] == [2, 4, 6]
    row = cast(Row, {"command": "SET", "run": 1, "clients": 6, "client": record})
    [table] = staircase_tables([row, cast(Row, {"command": "GET", "client": {}})])
    console = Console(width=120, record=True)
    console.print(table)
    text = console.export_text()
    assert "staircase · SET run 1 (up to 6 connections)" in text
    assert "│    2 │           6 │     2–3 │ 600 │  0.600 │  1.200 │      nan │" in text
    assert measurement_from(make_report()).extra.get("staircase") is None
