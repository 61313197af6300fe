"""Percentiles across runs come from merged histograms, not averages of percentiles."""

from __future__ import annotations

import pytest
from hdrh.histogram import HdrHistogram

from kvperf.analysis.series import summarize
from kvperf.results.histogram import decode, merge, summary_ms


def encoded(values_us: list[int]) -> str:
    h = HdrHistogram(1, 60_000_000, 3)
    for v in values_us:
        h.record_value(v)
    return h.encode().decode()


def test_merge_is_not_an_average_of_percentiles() -> None:
    fast = encoded([100] * 100)  # p99 = 100 us
    slow = encoded([10_000] * 100)  # p99 = 10 ms
    merged = summary_ms(merge([fast, slow]))
    assert merged["count"] == 200
    assert merged["p50"] == pytest.approx(0.1, rel=0.01)  # half the requests took 100 us
    averaged_p50 = (0.1 + 10.0) / 2
    assert merged["p50"] != pytest.approx(averaged_p50, rel=0.1)
    assert merged["p99"] == pytest.approx(10.0, rel=0.01)
    assert merged["max"] == pytest.approx(10.0, rel=0.01)


def test_bad_encoding_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not an HDR histogram"):
        decode("not-base64!")


def row(trial: str, rps: float, p50: float, hist: str | None) -> dict[str, object]:
    return {"trial_id": trial, "status": "ok", "rps": rps, "command": "GET", "data_size": 3,
            "pipeline": 1, "clients": 50, "p50_latency_ms": p50, "p99_latency_ms": p50,
            "hist": hist}


def test_series_summary_merges_histograms_when_every_run_has_one() -> None:
    rows = [row("a", 100.0, 0.1, encoded([100] * 10)), row("a", 300.0, 9.0, encoded([9000] * 30)),
            row("b", 50.0, 1.0, None), row("b", 70.0, 3.0, None),
            {**row("b", 1.0, 1.0, None), "status": "failed"}]
    lookup = {id(r): r for r in rows}
    (a, b) = summarize(rows, lambda r: {"corrected": lookup[id(r)]["hist"], "unit": "us"}
                       if lookup[id(r)]["hist"] else None)
    assert a.runs == 2 and a.rps_median == 200.0 and a.latency_source == "merged histograms"
    assert a.p50_ms == pytest.approx(9.0, rel=0.01)  # 30 of 40 requests took 9 ms
    assert b.runs == 2 and b.p50_ms == 2.0 and b.latency_source == "median of runs"
    assert b.rps_cv == pytest.approx(14.142 / 60, rel=1e-3)
