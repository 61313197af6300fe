"""What a dataset snapshot is checked by, read over RESP: a sample of keys chosen once (the
first of a SCAN's keys in sorted order) and, per key, its type, ``OBJECT ENCODING`` and a
digest of its value read as the server returns it (members of sets and hashes sorted, so
two servers holding equal data give equal digests whatever their hash tables' order);
``SAVE`` and where the server wrote its RDB.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from kvperf.server.resp import Endpoint, Reply, RespClient, RespError

SAMPLE = 32  # keys per snapshot
SCAN_LIMIT = 256  # keys scanned to choose them from
LARGE = 10_000  # elements beyond which a value's digest is its length alone
SAVE_TIMEOUT = 600.0

_LENGTH = {"hash": "HLEN", "list": "LLEN", "set": "SCARD", "zset": "ZCARD",
           "stream": "XLEN"}
_READ = {"string": ("GET",), "hash": ("HGETALL",), "list": ("LRANGE", "0", "-1"),
         "set": ("SMEMBERS",), "zset": ("ZRANGE", "0", "-1", "WITHSCORES"),
         "stream": ("XRANGE", "-", "+")}


@dataclass(frozen=True)
class KeyFacts:
    """One sampled key as the server holds it."""

    type: str
    encoding: str
    digest: str  # 16 hex of its value (or of its length when large)

    def describe(self) -> str:
        return f"{self.type} {self.encoding} {self.digest}"


def _text(reply: Reply) -> str:
    if isinstance(reply, bytes):
        return reply.decode(errors="replace")
    return "" if reply is None or isinstance(reply, RespError) else str(reply)


def _flatten(reply: Reply) -> list[bytes]:
    if isinstance(reply, list):
        return [part for item in reply for part in _flatten(item)]
    return [reply if isinstance(reply, bytes) else str(reply).encode()]


def _value_digest(client: RespClient, key: bytes, kind: str) -> str:
    hasher = hashlib.sha256(kind.encode())
    length = client.call(_LENGTH[kind], key) if kind in _LENGTH else None
    if isinstance(length, int) and length > LARGE:
        hasher.update(f"length {length}".encode())
        return hasher.hexdigest()[:16]
    command = _READ.get(kind)
    if command is None:  # a module's type: its type and encoding only
        return hasher.hexdigest()[:16]
    reply = client.call(command[0], key, *command[1:])
    parts = _flatten(reply)
    if kind in ("hash", "zset"):  # pairs, order-free
        pairs = sorted(zip(parts[::2], parts[1::2], strict=True))
        parts = [part for pair in pairs for part in pair]
    elif kind == "set":
        parts = sorted(parts)
    for part in parts:
        hasher.update(len(part).to_bytes(8, "little") + part)
    return hasher.hexdigest()[:16]


def sample_keys(endpoint: Endpoint, count: int = SAMPLE) -> list[bytes]:
    """Up to ``count`` keys of the first SCAN_LIMIT keys SCAN returns, stratified: taken in
    turn from each (type, encoding) found, smallest names first, so every kind of value the
    dataset holds is checked."""
    seen: set[bytes] = set()
    cursor = b"0"
    with RespClient(endpoint, timeout=60) as client:
        while True:
            reply = client.call("SCAN", cursor, "COUNT", "100")
            if not isinstance(reply, list) or len(reply) != 2:
                break
            cursor = reply[0] if isinstance(reply[0], bytes) else b"0"
            seen.update(k for k in _flatten(reply[1]) if k)
            if cursor == b"0" or len(seen) >= SCAN_LIMIT:
                break
        keys = sorted(seen)  # SCAN_LIMIT and the last batch: cut none (z… would go)
        kinds = client.pipeline([("TYPE", k) for k in keys])
        encodings = client.pipeline([("OBJECT", "ENCODING", k) for k in keys])
    strata: dict[tuple[str, str], list[bytes]] = {}
    for key, kind, encoding in zip(keys, kinds, encodings, strict=True):
        strata.setdefault((_text(kind), _text(encoding)), []).append(key)
    return _in_turn(list(strata.values()), count)


def _in_turn(groups: list[list[bytes]], count: int) -> list[bytes]:
    """The first of each group, then the second of each … up to ``count`` (sorted)."""
    chosen: list[bytes] = []
    for i in range(max((len(g) for g in groups), default=0)):
        chosen += [g[i] for g in groups if i < len(g)]
    return sorted(chosen[:count])


def key_facts(endpoint: Endpoint, keys: list[bytes]) -> dict[bytes, KeyFacts | None]:
    """Each key's type, encoding and value digest (None: the server does not hold it)."""
    found: dict[bytes, KeyFacts | None] = {}
    with RespClient(endpoint, timeout=120) as client:
        for key in keys:
            kind = _text(client.call("TYPE", key))
            if kind in ("none", ""):
                found[key] = None
                continue
            encoding = _text(client.call("OBJECT", "ENCODING", key))
            found[key] = KeyFacts(kind, encoding, _value_digest(client, key, kind))
    return found


def save_rdb(endpoint: Endpoint) -> Path:
    """``SAVE`` on the server, then the path of the RDB it wrote (CONFIG GET dir and
    dbfilename); RespError when it refuses."""
    with RespClient(endpoint, timeout=SAVE_TIMEOUT) as client:
        client.call("SAVE")
        directory = client.call("CONFIG", "GET", "dir")
        name = client.call("CONFIG", "GET", "dbfilename")
    return Path(_text(_flatten(directory)[-1])) / _text(_flatten(name)[-1])
