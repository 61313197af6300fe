"""Unit tests check the defaults a user's environment gives: scripts/test's parallel lane sets
KVPERF_RETRY_DISTURBED=0 (docs/TESTING.md), which would change compare's."""

from __future__ import annotations

import pytest

from kvperf.pipeline.commands.checks import RETRY_ENV


@pytest.fixture(autouse=True)
def _defaults_as_users_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RETRY_ENV, raising=False)
