"""results/failover.py: faults lined up with kvload's timeline (pure)."""

from __future__ import annotations

from typing import Any

from kvperf.results.failover import failover_record

START = 1000.0  # unix seconds of the measure start


def _timeline() -> dict[str, Any]:
    seconds = [{"t_s": 0, "ok": 900, "errors": {}, "p99_ms": 1.0},
               {"t_s": 1, "ok": 400, "errors": {"connection": 4}, "p99_ms": 2.0},
               {"t_s": 2, "ok": 0, "errors": {"READONLY": 30}, "p99_ms": 0.0},
               {"t_s": 3, "ok": 500, "errors": {"READONLY": 2}, "p99_ms": 9.0},
               {"t_s": 4, "ok": 900, "errors": {}, "p99_ms": 1.5}]
    outages = [{"from_ms": 1500, "first_error_ms": 1502, "to_ms": 3200}]
    return {"start_unix_ms": int(START * 1000), "seconds": seconds, "outages": outages}


def _done(at: float, action: str, target: str) -> dict[str, Any]:
    return {"at_s": at, "action": action, "target": target, "seconds": None,
            "started_unix": START + at, "ended_unix": START + at + 0.01, "error": None}


def test_the_kill_owns_the_window_and_phases_split_at_it() -> None:
    record = failover_record([_done(1.49, "kill", "primary"), _done(3.0, "promote", "replica")],
                             _timeline())
    kill, promote = record["faults"]
    assert kill["window"]["time_to_first_error_s"] == 0.012
    assert kill["window"]["unavailable_s"] == 1.7
    assert promote["window"] is None
    assert record["errors_by_kind"] == {"READONLY": 32, "connection": 4}
    # before: second 0; during: seconds 1 and 3 (2 had no success); after: second 4
    assert record["p99_ms"] == {"before": 1.0, "during": 9.0, "after": 1.5}


def test_a_load_that_never_came_back_has_an_open_window() -> None:
    timeline = _timeline()
    timeline["outages"] = [{"from_ms": 1500, "first_error_ms": 1502, "to_ms": None}]
    record = failover_record([_done(1.49, "kill", "primary")], timeline)
    assert record["faults"][0]["window"]["unavailable_s"] is None
    assert record["p99_ms"]["after"] is None


def test_an_outage_belongs_to_the_latest_fault_before_it() -> None:
    # a pause at 0.5 s caused no errors; the kill at 1.49 s did
    record = failover_record([_done(0.5, "pause", "primary"), _done(1.49, "kill", "primary")],
                             _timeline())
    assert record["faults"][0]["window"] is None
    assert record["faults"][1]["window"]["unavailable_s"] == 1.7


def test_the_record_keeps_the_timeline_per_second() -> None:
    record = failover_record([_done(1.49, "kill", "primary")], _timeline())
    assert record["start_unix"] == START
    assert [(s["t_s"], s["ok"], s["errors"]) for s in record["seconds"]] == [
        (0, 900, 0), (1, 400, 4), (2, 0, 30), (3, 500, 2), (4, 900, 0)]
