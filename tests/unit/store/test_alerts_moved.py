"""Alerts whose change point moved (store/alerts.py ``record``), on a real SQLite store:
detection places a series' step in another commit range as history grows; the old
summary's alert is superseded — a note names where the step went, and a summary still
``new`` whose every alert moved is resolved invalid — while acknowledged summaries keep
their state and a (series, metric) outside the recorded points is left alone."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from kvperf.store.alerts import ACKNOWLEDGED, INVALID, NEW, change, record, summary
from kvperf.store.changepoints import StoredChangePoint
from kvperf.store.db import open_store

B, C, D = "b" * 40, "c" * 40, "d" * 40  # commits in order: the step lies after b, c or d


def _point(series: str, before: str, after: str) -> StoredChangePoint:
    return StoredChangePoint(series, "rps", {"command": series.upper()}, "regression", -0.1,
                             1e-6, 100.0, 90.0, before, after, None)


def _store(tmp_path: Path) -> Engine:
    return open_store(make_url(f"sqlite:///{tmp_path / 'alerts.db'}"))


def test_a_new_summary_whose_every_step_moved_is_resolved_invalid(tmp_path: Path) -> None:
    engine = _store(tmp_path)
    (first,) = record(engine, [_point("set", B, C), _point("get", B, C)]).summaries
    # one more commit of history: SET's step is now placed after c; GET's stays after b
    partly = record(engine, [_point("set", C, D), _point("get", B, C)])
    assert partly.moved == [first] and partly.superseded == []
    kept = summary(engine, first)
    assert kept.state == NEW
    assert kept.notes[-1].text == f"the change point moved: SET rps → {C[:12]}..{D[:12]}"
    again = record(engine, [_point("set", C, D), _point("get", B, C)])
    assert again.moved == [] and len(summary(engine, first).notes) == 1  # noted once
    whole = record(engine, [_point("set", C, D), _point("get", C, D)])
    assert whole.moved == whole.superseded == [first]
    resolved = summary(engine, first)
    assert resolved.state == INVALID and resolved.resolved_at is not None
    assert "GET rps" in resolved.notes[-1].text and "SET rps" in resolved.notes[-1].text
    (later,) = partly.summaries
    assert summary(engine, later).state == NEW  # where the steps are now


def test_a_triaged_summary_keeps_its_state_and_other_series_are_left(tmp_path: Path) -> None:
    engine = _store(tmp_path)
    (first,) = record(engine, [_point("set", B, C), _point("get", B, C)]).summaries
    change(engine, first, "ack", by="dev")
    only_set = record(engine, [_point("set", C, D)])  # GET not in this selection
    assert only_set.moved == [first] and only_set.superseded == []
    kept = summary(engine, first)
    assert kept.state == ACKNOWLEDGED and "GET" not in kept.notes[-1].text
    whole = record(engine, [_point("set", C, D), _point("get", C, D)])
    assert whole.superseded == [] and summary(engine, first).state == ACKNOWLEDGED
