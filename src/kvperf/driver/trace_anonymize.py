"""``kvperf trace anonymize`` (pure): keys and values of a trace replaced by deterministic
stand-ins. A key keeps its length and its prefix up to the first ``:`` (``user:1234`` →
``user:q7x0``); the same key always gets the same stand-in and two keys never share one, so
per-key access frequency (and the key count) is kept. Values keep their length (``x``
bytes); the other arguments of a command are kept when they are numbers or option words of
up to 10 letters (``EX``, ``NX``, ``WITHSCORES``…), else replaced like values. The header
says the trace is anonymized. Command names, connections and times are unchanged."""

from __future__ import annotations

import hashlib
import hmac
import re

from kvperf.driver.trace_format import (
    FLAG_ANONYMIZED,
    Record,
    Trace,
    command_name,
    key_positions,
    value_sizes,
)

ALPHABET = b"abcdefghijklmnopqrstuvwxyz0123456789"
KEEP = re.compile(rb"-?[0-9]+(\.[0-9]+)?|[A-Za-z]{1,10}")


class Anonymizer:
    def __init__(self, salt: bytes) -> None:
        self.salt = salt
        self.keys: dict[bytes, bytes] = {}
        self.used: set[bytes] = set()

    def key(self, key: bytes) -> bytes:
        known = self.keys.get(key)
        if known is not None:
            return known
        prefix, sep, rest = key.partition(b":")
        head, body = (prefix + sep, rest) if sep else (b"", key)
        attempt = 0
        while True:
            made = head + self._standin(key, len(body), attempt)
            if made not in self.used or attempt > 1000:  # 1000: a space too small to hold them
                break
            attempt += 1
        self.keys[key] = made
        self.used.add(made)
        return made

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


def anonymize(trace: Trace, salt: bytes = b"kvperf") -> Trace:
    a = Anonymizer(salt)
    return Trace(trace.flags | FLAG_ANONYMIZED, trace.start_unix_us,
                 [a.record(r) for r in trace.records])
