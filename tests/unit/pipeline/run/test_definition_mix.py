"""The command mix a definition's clients ask for, the check its test's executed mix is
held to (pipeline/run/definition_work.py)."""

from __future__ import annotations

import pytest

from kvperf.definitions.client import MEMTIER, ClientPlan
from kvperf.pipeline.run.definition_work import _expected_mix


def _memtier(*argv: str) -> ClientPlan:
    return ClientPlan(MEMTIER, argv)


def test_paced_clients_are_weighed_by_their_rates() -> None:
    """The corpus' 2000conns-client-list: 250 × 8 connections PING once a second beside one
    CLIENT LIST prober at 10/s."""
    mix = _expected_mix((
        _memtier("--command", "PING", "-c", "250", "-t", "8", "--rate-limiting=1"),
        _memtier("--command", "CLIENT LIST", "-c", "1", "-t", "1", "--rate-limiting=10")))
    assert mix == pytest.approx({"ping": 2000 / 2010, "client": 10 / 2010})


def test_closed_loop_clients_are_weighed_equally() -> None:
    mix = _expected_mix((_memtier("--command", "PING", "-c", "250", "-t", "8",
                                  "--rate-limiting=1"),
                         _memtier("--command", "SET __key__ x", "-c", "1", "-t", "1")))
    assert mix == pytest.approx({"ping": 0.5, "set": 0.5})
