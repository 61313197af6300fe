"""The A/B order is random per trial, reproducible from its seed."""

from __future__ import annotations

from kvperf.pipeline.sides.ab import side_order


def test_order_is_reproducible_and_uses_both_orders() -> None:
    first = side_order(42, 40)
    assert first == side_order(42, 40)
    assert first != side_order(43, 40)
    assert {("A", "B"), ("B", "A")} == set(first)
    assert all(sorted(pair) == ["A", "B"] for pair in first)
