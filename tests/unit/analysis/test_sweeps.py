"""Sweeps (analysis/sweeps.py): swept keys, lines, speed-ups."""

from __future__ import annotations

from typing import Any

import pytest

from kvperf.analysis.sweeps import sweep, sweeps, swept_keys


def _row(command: str, size: int, pipeline: int, rps: float, p99: float, run: int = 1,
         status: str = "ok") -> dict[str, Any]:
    return {"command": command, "data_size": size, "pipeline": pipeline, "clients": 50,
            "duration": 1, "run": run, "status": status, "rps": rps, "p99_latency_ms": p99}


def test_swept_keys_are_series_fields_with_several_values() -> None:
    rows = [_row("SET", 64, 1, 1, 1), _row("SET", 64, 16, 1, 1), _row("GET", 64, 1, 1, 1)]
    assert swept_keys(rows) == ["pipeline"]  # several commands are not a sweep
    rows.append(_row("SET", 1024, 1, 1, 1))
    assert swept_keys(rows) == ["data_size", "pipeline"]
    assert swept_keys([_row("SET", 64, 1, 1, 1), _row("GET", 64, 1, 1, 1)]) == []
    # a value only failed rows have is not part of the run's sweep
    assert swept_keys([_row("SET", 64, 1, 1, 1), _row("SET", 64, 16, 0, 0, status="x")]) == []


def test_speed_up_over_the_first_value_per_line() -> None:
    rows = [_row("SET", 64, 16, 380_000, 2.0), _row("SET", 64, 16, 420_000, 4.0, run=2),
            _row("SET", 64, 1, 100_000, 0.5), _row("GET", 64, 1, 120_000, 0.4),
            _row("GET", 64, 16, 600_000, 1.0), _row("INCR", 64, 1, 90_000, 0.5)]
    found = sweep(rows, "pipeline")
    assert found.label == "P" and found.values == ["1", "16"]
    lines = {line.series: line for line in found.lines}
    assert set(lines) == {"SET d=64 c=50", "GET d=64 c=50"}  # INCR has one value: no line
    first, last = lines["SET d=64 c=50"].points
    assert (first.value, first.rps, first.speedup) == ("1", 100_000, 1.0)
    assert (last.value, last.runs, last.rps) == ("16", 2, 400_000)
    assert last.speedup == pytest.approx(4.0) and last.p99_ms == pytest.approx(3.0)
    assert lines["GET d=64 c=50"].points[1].speedup == pytest.approx(5.0)


def test_sweeps_of_two_keys_each_hold_the_other_fixed() -> None:
    rows = [_row("SET", size, p, 1000.0 * p / size, 1.0) for size in (100, 1000)
            for p in (1, 10)]
    found = {s.key: s for s in sweeps(rows)}
    assert set(found) == {"data_size", "pipeline"}
    assert [ln.series for ln in found["pipeline"].lines] == ["SET d=100 c=50",
                                                            "SET d=1000 c=50"]
    assert [ln.series for ln in found["data_size"].lines] == ["SET P=1 c=50", "SET P=10 c=50"]
    assert found["data_size"].lines[0].points[1].speedup == pytest.approx(0.1)
