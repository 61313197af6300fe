"""Calls per read judged (clients/wire.py): a pipeline the server saw, a batch written
command by command, round trips that fail, what cannot be told apart (P=2, values of many
KiB) and implicit batching."""

from __future__ import annotations

import pytest

from kvperf.clients.wire import expected_calls_per_read, judge


def test_a_pipeline_seen_on_the_wire_passes_and_round_trips_fail_naming_calls_per_read(
        ) -> None:
    record, problem = judge(10_000, 1_010, 10, False, ["SET"], 100)
    assert problem is None and record["batching"] == "pipelined" and record["bar"] == 1.25
    record, problem = judge(10_000, 9_100, 10, False, ["SET", "GET"], 100)
    assert record["batching"] == "not pipelined" and record["calls_per_read"] == 1.099
    assert problem is not None and "1.10 calls per read" in problem, problem
    assert "below 1.25 for P=10" in problem


def test_a_batch_written_command_by_command_is_labelled_not_failed() -> None:
    """redis-rb's Ruby driver writes each command of its pipeline on its own: one
    connection showed 1.88 calls per read at P=10, 2.1 at P=100; 50 connections 3.4."""
    record, problem = judge(18_800, 10_000, 10, False, ["SET"], 100)
    assert problem is None and record["batching"] == "written per command"
    assert judge(34_000, 10_000, 10, False, ["SET"], 100)[0]["batching"] == "pipelined"


@pytest.mark.parametrize(("pipeline", "value", "expected", "judged"), [
    (2, 100, 2.0, False),  # a round trip per command shows 1.0: P=2 shows at most 2
    (3, 100, 3.0, True),
    (100, 100, 50.0, True),  # 100 × 164 bytes: two reads of 16 KiB
    (10, 16_384, 10 / 11, False),  # each SET fills a read on its own
])
def test_what_a_true_pipeline_shows_decides_whether_it_is_judged(
        pipeline: int, value: int, expected: float, judged: bool) -> None:
    record, problem = judge(1000, 999, pipeline, False, ["SET"], value)
    assert record["expected"] == pytest.approx(expected, rel=0.01)
    assert (record["bar"] is not None) == judged and (problem is not None) == judged
    if not judged:
        assert record["batching"] == "not judged"


def test_implicit_batching_at_p1_and_one_call_per_read_for_a_pool() -> None:
    assert judge(50_000, 10_000, 1, False, ["GET"], 100)[0]["batching"] == "implicit"
    record, problem = judge(50_000, 49_800, 1, False, ["GET"], 100)
    assert record["batching"] == "one call per read" and problem is None


def test_a_transaction_counts_multi_and_exec_in_its_batch() -> None:
    assert expected_calls_per_read(5, True, 164) == 7.0
    record, problem = judge(7_000, 7_000, 5, True, ["SET"], 100)
    assert problem is not None and record["bar"] == 1.25
    assert judge(7_000, 1_000, 5, True, ["SET"], 100)[0]["batching"] == "pipelined"
