"""CPU lists and cluster key slots."""

from __future__ import annotations

import pytest

from kvperf.core.cpus import format_cpu_list, parse_cpu_list
from kvperf.core.keyslot import crc16, key_slot


def test_cpu_lists_round_trip() -> None:
    assert parse_cpu_list("144-146,0,2") == (0, 2, 144, 145, 146)
    assert format_cpu_list((0, 1, 2, 5, 7, 8)) == "0-2,5,7-8"
    assert format_cpu_list(parse_cpu_list("3")) == "3"
    for bad in ("", "1,,2", "x", "3-1", "1-"):
        with pytest.raises(ValueError):
            parse_cpu_list(bad)


def test_crc16_and_slots_match_the_cluster_spec() -> None:
    assert crc16(b"123456789") == 0x31C3
    assert key_slot(b"foo") == 12182
    assert key_slot(b"{user1000}.following") == key_slot(b"{user1000}.followers")
    assert key_slot(b"foo{}{bar}") == crc16(b"foo{}{bar}") % 16384
