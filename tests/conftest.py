"""Fixtures shared by unit and integration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers import server_pids


@pytest.fixture
def no_strays() -> Iterator[None]:
    """Fail the test if it leaves a valkey-server/redis-server behind."""
    before = server_pids()
    yield
    leftover = server_pids() - before
    assert not leftover, f"server processes left behind: {sorted(leftover)}"
