"""Gates that name client series by their labels and bound one series by another
(``pool.rps>=0.8*single.rps``, analysis/gates.py)."""

from __future__ import annotations

import pytest

from kvperf.analysis.gates import judge, parse_gate
from kvperf.core.errors import UsageError
from kvperf.results.row import Row


def _row(model: str, rps: float, client: str = "redis-py", command: str = "SET") -> Row:
    return Row(command=command, data_size=100, pipeline=1, clients=1, status="ok", rps=rps,
               config_set={"client": client, "concurrency": model, "version": "8.1.0"})


def test_labels_name_client_series_and_the_bound_is_the_other_series() -> None:
    gate = parse_gate("pool.rps>=0.8*single.rps")
    assert (gate.command, gate.labels, gate.against, gate.value) == (
        "", (("concurrency", "pool"),), (("concurrency", "single"),), 0.8)
    rows = [_row("single", 10_000), _row("single", 12_000), _row("pool", 9_000),
            _row("single", 5_000, command="GET"), _row("pool", 3_000, command="GET")]
    set_result, get_result = judge([gate], rows)
    assert set_result.series == "SET d=100 P=1 c=1 redis-py:pool"
    assert (set_result.observed, set_result.bound, set_result.passed) == (9_000, 8_800, True)
    assert (get_result.observed, get_result.bound, get_result.passed) == (3_000, 4_000, False)


def test_a_client_label_and_a_command_together() -> None:
    gate = parse_gate("GET redis-py:pool.rps>=1000")
    assert gate.command == "GET" and gate.labels == (("client", "redis-py"),
                                                     ("concurrency", "pool"))
    (result,) = judge([gate], [_row("pool", 3_000, command="GET"), _row("pool", 500)])
    assert result.passed and result.observed == 3_000


def test_commands_stay_commands_and_a_bad_metric_is_named() -> None:
    assert parse_gate("set.rps>=1").command == "set" and not parse_gate("set.rps>=1").labels
    with pytest.raises(UsageError, match="'nope' is not a metric"):
        parse_gate("pool.rps>=0.8*single.nope")
