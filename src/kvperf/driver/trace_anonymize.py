"""``kvperf trace anonymize`` (pure): keys and values of a trace replaced by deterministic
stand-ins. A key keeps its length and its prefix up to the first ``:`` (``user:1234`` →
``user:q7x0``); the same key always gets the same stand-in and two keys never share one, so
per-key access frequency (and the key count) is kept. Values keep their length (``x``
bytes); the other arguments of a command are kept when they are numbers or option words of
up to 10 letters (``EX``, ``NX``, ``WITHSCORES``…), else replaced like values. The header
says the trace is anonymized. Command names, connections and times are unchanged.

With ``keep_slots`` every stand-in also hashes to its key's cluster slot (driver/trace_slots.py
chooses the last letters of its hashed part; ``{`` and ``}`` stay where they were, so a hash
tag stays a hash tag) and the header says so too. A key with two or fewer characters to
change in its hashed part (``k:1``) has no stand-in of its length in its slot for most slots:
such keys are kept as they are and counted in ``Anonymizer.kept``."""

from __future__ import annotations

import hashlib
import hmac
import re

from kvperf.core.keyslot import key_slot
from kvperf.driver.trace_format import (
    FLAG_ANONYMIZED,
    FLAG_KEEP_SLOTS,
    Record,
    Trace,
    command_name,
    key_positions,
    value_sizes,
)
from kvperf.driver.trace_slots import hashed_span, solve

ALPHABET = b"abcdefghijklmnopqrstuvwxyz0123456789"
KEEP = re.compile(rb"-?[0-9]+(\.[0-9]+)?|[A-Za-z]{1,10}")


class Anonymizer:
    def __init__(self, salt: bytes, keep_slots: bool = False) -> None:
        self.salt = salt
        self.keep_slots = keep_slots
        self.keys: dict[bytes, bytes] = {}
        self.used: set[bytes] = set()
        self.kept: list[bytes] = []  # keep_slots: keys too short to replace (kept as they are)

    def key(self, key: bytes) -> bytes:
        known = self.keys.get(key)
        if known is not None:
            return known
        prefix, sep, rest = key.partition(b":")
        head, body = (prefix + sep, rest) if sep else (b"", key)
        attempt = 0
        while True:
            if self.keep_slots:
                made = self._in_slot(key, len(head), attempt)
            else:
                made = head + self._standin(key, len(body), attempt)
            # 1000: a space too small to hold them; a key kept as it is is its own stand-in.
            if made not in self.used or made == key or attempt > 1000:
                break
            attempt += 1
        if made == key and self.keep_slots:
            self.kept.append(key)
        self.keys[key] = made
        self.used.add(made)
        return made

    def _in_slot(self, key: bytes, head: int, attempt: int) -> bytes:
        """A stand-in after the ``head`` (the prefix kept) whose slot is the key's: salted
        letters, then the last free ones of the hashed part solved for the slot (the key
        itself when its hashed part has too few characters to change)."""
        changeable = [i for i in range(head, len(key)) if key[i] not in b"{}"]
        fill = self._standin(key, len(changeable) + 4, attempt)
        made = bytearray(key)
        for i, byte in zip(changeable, fill, strict=False):
            made[i] = byte
        lo, hi = hashed_span(key)
        free = [i for i in changeable if lo <= i < hi]
        start_at = int.from_bytes(fill[-4:], "big")
        solved = solve(made, free, key_slot(key), start_at)
        return key if solved is None else solved

    def _standin(self, key: bytes, length: int, attempt: int) -> bytes:
        out = bytearray()
        block = 0
        while len(out) < length:
            digest = hmac.new(self.salt, key + b"\0" + str((attempt, block)).encode(),
                              hashlib.sha256).digest()
            out.extend(ALPHABET[b % len(ALPHABET)] for b in digest)
            block += 1
        return bytes(out[:length])

    def record(self, r: Record) -> Record:
        keys = set(key_positions(r))
        values = _value_positions(r)
        args = [r.args[0]]
        for i, a in enumerate(r.args[1:], 1):
            if i in keys:
                args.append(self.key(a))
            elif i not in values and KEEP.fullmatch(a):
                args.append(a)
            else:
                args.append(b"x" * len(a))
        return Record(r.conn, r.t_us, tuple(args), r.reply)


def _value_positions(r: Record) -> set[int]:
    name = command_name(r)
    if name in ("MSET", "MSETNX"):
        return set(range(2, len(r.args), 2))
    if value_sizes(r):
        return {3 if name in ("SETEX", "PSETEX") else 2}
    return set()


def anonymize(trace: Trace, salt: bytes = b"kvperf", keep_slots: bool = False) -> Trace:
    made, _ = anonymize_counting(trace, salt, keep_slots)
    return made


def anonymize_counting(trace: Trace, salt: bytes = b"kvperf",
                       keep_slots: bool = False) -> tuple[Trace, list[bytes]]:
    """The anonymized trace, and (keep_slots) the keys too short to replace."""
    a = Anonymizer(salt, keep_slots)
    flags = trace.flags | FLAG_ANONYMIZED | (FLAG_KEEP_SLOTS if keep_slots else 0)
    records = [a.record(r) for r in trace.records]
    return Trace(flags, trace.start_unix_us, records, trace.gaps), a.kept
