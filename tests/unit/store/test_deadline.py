"""--db-timeout parsing and resolution (the deadline itself is tested against a SIGSTOPped
PostgreSQL in tests/integration/test_store_postgres.py)."""

from __future__ import annotations

import pytest

from kvperf.core.errors import UsageError
from kvperf.store import deadline


def test_seconds_from_flag_env_or_default() -> None:
    assert deadline.resolve_seconds(3.5, {deadline.ENV_VAR: "7"}) == 3.5
    assert deadline.resolve_seconds(None, {deadline.ENV_VAR: "7"}) == 7.0
    assert deadline.resolve_seconds(None, {}) == deadline.DEFAULT_SECONDS


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "soon"])
def test_bad_seconds_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="KVPERF_DB_TIMEOUT"):
        deadline.resolve_seconds(None, {deadline.ENV_VAR: text})


def test_connect_timeout_is_whole_seconds_between_2_and_5() -> None:
    assert [deadline.connect_timeout(s) for s in (0.5, 2.5, 10)] == [2, 3, 5]
