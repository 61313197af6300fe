"""Cluster key slots: CRC16-CCITT (XModem) of the key or its {hashtag}, modulo 16384.

Source: the Redis Cluster specification, "Keys distribution model" (HASH_SLOT = CRC16(key) mod
16384, with the hashtag rule). Reference value: crc16(b"123456789") == 0x31C3.
"""

from __future__ import annotations


def _table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_TABLE = _table()


def crc16(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _TABLE[((crc >> 8) ^ byte) & 0xFF]
    return crc


def hash_part(key: bytes) -> bytes:
    """The part of the key that is hashed: the first non-empty {…} section, else the key."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            return key[start + 1 : end]
    return key


def key_slot(key: bytes) -> int:
    return crc16(hash_part(key)) % 16384
