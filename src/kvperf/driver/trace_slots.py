"""Stand-in keys that hash to their key's cluster slot (``kvperf trace anonymize
--keep-slots``; pure).

The slot is CRC16 (XModem) of the key's hashed part (its ``{hash tag}``, else the whole key)
mod 16384. That CRC has no initial value and no final xor, so for messages of one length it
is linear: crc(a ^ b) = crc(a) ^ crc(b). With every other byte of the hashed part fixed, the
CRC is then ``base ^ contribution(byte 1) ^ … ^ contribution(byte k)`` over k free bytes,
where a byte's contribution depends only on the byte and its distance from the end. Four free
bytes from 62 letters give 14.8 M stand-ins; splitting them in two halves of 3,844 values (a
meet in the middle) finds one of the ~900 that land on the wanted slot in a few dozen steps.
With three free bytes (238,328 stand-ins) a solution almost always exists; with two or fewer
there are fewer stand-ins than slots, and ``solve`` may return None.
"""

from __future__ import annotations

import itertools
from functools import cache

from kvperf.core.keyslot import crc16, key_slot

SLOTS = 16384
LETTERS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
MAX_FREE = 4


def hashed_span(key: bytes) -> tuple[int, int]:
    """[start, end) of the bytes the slot is computed from (keyslot.hash_part's rule)."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            return start + 1, end
    return 0, len(key)


@cache
def _contribution(byte: int, distance: int) -> int:
    """The CRC of ``byte`` followed by ``distance`` zero bytes (its share of any message
    where it stands ``distance`` bytes before the end)."""
    return crc16(bytes([byte]) + bytes(distance))


@cache
def _half(distances: tuple[int, ...]) -> dict[int, bytes]:
    """Every choice of letters at these distances, by the low 14 bits of its contribution
    (the first choice for each value)."""
    found: dict[int, bytes] = {}
    for letters in itertools.product(LETTERS, repeat=len(distances)):
        value = 0
        for byte, d in zip(letters, distances, strict=True):
            value ^= _contribution(byte, d)
        found.setdefault(value % SLOTS, bytes(letters))
    return found


@cache
def _choices(n: int) -> list[tuple[int, ...]]:
    return list(itertools.product(LETTERS, repeat=n))


def solve(candidate: bytearray, free: list[int], slot: int, start_at: int) -> bytes | None:
    """``candidate`` (a whole key) with letters at the ``free`` positions (inside the hashed
    span, at most MAX_FREE) chosen so that the key hashes to ``slot``; the search starts at
    choice ``start_at`` of the first half (a salted start, so stand-ins differ). None: no
    choice reaches the slot."""
    lo, hi = hashed_span(bytes(candidate))
    free = sorted(free)[-MAX_FREE:]
    for p in free:
        candidate[p] = 0
    base = crc16(bytes(candidate[lo:hi]))
    distances = [hi - 1 - p for p in free]
    split = len(free) // 2
    first, second = distances[:split], tuple(distances[split:])
    seconds = _half(second)
    choices = _choices(len(first))
    for i in range(len(choices)):
        letters = choices[(start_at + i) % len(choices)]
        value = base
        for byte, d in zip(letters, first, strict=True):
            value ^= _contribution(byte, d)
        rest = seconds.get((value ^ slot) % SLOTS)
        if rest is None:
            continue
        for p, byte in zip(free, bytes(letters) + rest, strict=True):
            candidate[p] = byte
        made = bytes(candidate)
        assert key_slot(made) == slot  # the algebra above; cheap to check
        return made
    return None
