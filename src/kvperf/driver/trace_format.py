"""kvload's trace file, version 1 (docs/TRACES.md), read and written in Python (pure): what
``kvperf trace stats`` and ``kvperf trace anonymize`` work on. Every malformed input is a
ConfigError (exit 2) naming the byte offset, as kvload's own reader does."""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kvperf.core.errors import ConfigError

MAGIC = b"KVTRACE\n"
VERSION = 1
HEADER = struct.Struct("<8sHHIQ")  # magic, version, flags, reserved, start µs
FLAG_ANONYMIZED = 1
FLAG_MONITOR = 2
FLAG_REPLIES = 4  # recorded with `kvload record --replies`
FLAG_KEEP_SLOTS = 8  # anonymized with --keep-slots (stand-ins keep their key's cluster slot)
KNOWN_FLAGS = FLAG_ANONYMIZED | FLAG_MONITOR | FLAG_REPLIES | FLAG_KEEP_SLOTS
TAG_CMD, TAG_CMD_REPLY = 1, 2
# A gap: records of one connection `kvload record` dropped (its writer was behind and its
# queue full) — connection id, time of the first dropped, records and bytes dropped.
TAG_GAP = 3
MAX_ARGS = 1 << 20
MAX_ARG_LEN = 512 << 20
MAX_TIME_US = 1 << 42  # the latest time a record may have, µs after the start (50.9 days)


@dataclass(frozen=True)
class Record:
    conn: int
    t_us: int
    args: tuple[bytes, ...]
    reply: tuple[int, int] | None = None  # (reply bytes, latency µs)


@dataclass(frozen=True)
class Gap:
    """Records of connection ``conn`` dropped from the recording from ``t_us`` on."""

    conn: int
    t_us: int
    records: int
    bytes: int


@dataclass
class Trace:
    flags: int
    start_unix_us: int
    records: list[Record] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)  # none: the recording is complete

    @property
    def dropped(self) -> int:
        """Commands the recorder dropped (its gaps'): 0 for a complete trace."""
        return sum(g.records for g in self.gaps)

    @property
    def anonymized(self) -> bool:
        return bool(self.flags & FLAG_ANONYMIZED)

    @property
    def keep_slots(self) -> bool:
        return bool(self.flags & FLAG_KEEP_SLOTS)

    @property
    def has_replies(self) -> bool:
        """Recorded with reply sizes and latencies (a MONITOR capture never is)."""
        return bool(self.flags & FLAG_REPLIES)


class _Cursor:
    def __init__(self, data: bytes, name: str) -> None:
        self.data, self.pos, self.name = data, 0, name

    def fail(self, offset: int, why: str) -> ConfigError:
        return ConfigError(f"bad trace {self.name}: at byte {offset}: {why}")

    def varint(self, record: int, what: str) -> int:
        value, shift, start = 0, 0, self.pos
        while True:
            if self.pos >= len(self.data):
                raise self.fail(record, f"truncated record ({what} cut at byte "
                                        f"{len(self.data)}, end of file)")
            byte = self.data[self.pos]
            self.pos += 1
            if shift >= 63 and byte > 1:
                raise self.fail(start, f"{what}: varint overflows 64 bits")
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7


def parse(data: bytes, name: str = "trace") -> Trace:
    """A whole trace (ConfigError with the byte offset on anything malformed)."""
    c = _Cursor(data, name)
    if not data.startswith(MAGIC[:len(data)]) or len(data) == 0:
        at = next((i for i, (a, b) in enumerate(zip(data, MAGIC, strict=False)) if a != b), 0)
        raise c.fail(at, 'not a kvload trace (bad magic; expected "KVTRACE\\n")')
    if len(data) < HEADER.size:
        raise c.fail(len(data), f"truncated header ({len(data)} of {HEADER.size} bytes)")
    _, version, flags, reserved, start = HEADER.unpack_from(data)
    if version != VERSION:
        raise c.fail(8, f"unsupported trace version {version} (kvperf reads version {VERSION})")
    if flags & ~KNOWN_FLAGS:
        raise c.fail(10, f"unknown header flags 0x{flags:04x}")
    if reserved:
        raise c.fail(12, "reserved header bytes are not zero")
    trace = Trace(flags, start)
    c.pos = HEADER.size
    while c.pos < len(data):
        if data[c.pos] == TAG_GAP:
            trace.gaps.append(_gap(c))
        else:
            trace.records.append(_record(c))
    return trace


def _conn_and_time(c: _Cursor, start: int) -> tuple[int, int]:
    conn = c.varint(start, "connection id")
    if conn > 0xFFFFFFFF:
        raise c.fail(start, f"connection id {conn} out of range")
    t_us = c.varint(start, "time")
    if t_us >= MAX_TIME_US:
        raise c.fail(start, f"time {t_us} µs is past the {MAX_TIME_US // 86_400_000_000} days "
                            "a trace may span")
    return conn, t_us


def _gap(c: _Cursor) -> Gap:
    start = c.pos
    c.pos += 1
    conn, t_us = _conn_and_time(c, start)
    return Gap(conn, t_us, c.varint(start, "records dropped"), c.varint(start, "bytes dropped"))


def _record(c: _Cursor) -> Record:
    start, tag = c.pos, c.data[c.pos]
    if tag not in (TAG_CMD, TAG_CMD_REPLY):
        raise c.fail(start, f"bad record tag 0x{tag:02x} (garbage or a newer format)")
    c.pos += 1
    conn, t_us = _conn_and_time(c, start)
    at = c.pos
    argc = c.varint(start, "argument count")
    if not 0 < argc <= MAX_ARGS:
        raise c.fail(at, f"bad argument count {argc}")
    args = []
    for i in range(argc):
        at = c.pos
        length = c.varint(start, "argument length")
        if length > MAX_ARG_LEN:
            raise c.fail(at, f"argument {i} length {length} over 512 MiB")
        end = c.pos + length
        if end > len(c.data):
            raise c.fail(start, f"truncated record (argument {i} needs {length} bytes, the "
                                f"file ends at byte {len(c.data)})")
        args.append(c.data[c.pos:end])
        c.pos = end
    reply = None
    if tag == TAG_CMD_REPLY:
        reply = (c.varint(start, "reply size"), c.varint(start, "reply latency"))
    return Record(conn, t_us, tuple(args), reply)


def _varint(value: int) -> Iterator[int]:
    while value >= 0x80:
        yield (value & 0x7F) | 0x80
        value >>= 7
    yield value


def encode(trace: Trace) -> bytes:
    """The file's bytes (the inverse of ``parse``)."""
    out = bytearray(HEADER.pack(MAGIC, VERSION, trace.flags, 0, trace.start_unix_us))
    for r in trace.records:
        out.append(TAG_CMD if r.reply is None else TAG_CMD_REPLY)
        for v in (r.conn, r.t_us, len(r.args)):
            out.extend(_varint(v))
        for a in r.args:
            out.extend(_varint(len(a)))
            out.extend(a)
        if r.reply is not None:
            out.extend(_varint(r.reply[0]))
            out.extend(_varint(r.reply[1]))
    for g in trace.gaps:  # after the records (readers take them apart from the records)
        out.append(TAG_GAP)
        for v in (g.conn, g.t_us, g.records, g.bytes):
            out.extend(_varint(v))
    return bytes(out)


# Commands without a key (their first argument is not one).
KEYLESS = frozenset({
    "PING", "ECHO", "SELECT", "AUTH", "HELLO", "INFO", "CONFIG", "CLIENT", "COMMAND", "MULTI",
    "EXEC", "DISCARD", "DBSIZE", "FLUSHALL", "FLUSHDB", "SCAN", "KEYS", "PUBLISH", "SUBSCRIBE",
    "PSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE", "SCRIPT", "FUNCTION", "DEBUG", "SLOWLOG",
    "TIME", "LASTSAVE", "SAVE", "BGSAVE", "MONITOR", "QUIT", "RESET", "CLUSTER", "READONLY",
    "READWRITE", "WAIT", "LATENCY", "MEMORY", "MODULE", "OBJECT", "SWAPDB", "ROLE", "SHUTDOWN",
    "ACL", "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO", "XREAD",
    "XREADGROUP",
})
ALL_KEYS = frozenset({"MGET", "DEL", "EXISTS", "UNLINK", "TOUCH", "WATCH", "SINTER", "SUNION",
                      "SDIFF", "PFCOUNT"})
PAIRS = frozenset({"MSET", "MSETNX"})
# The value of a SET-like command: argument index.
VALUE_AT = {"SET": 2, "SETNX": 2, "GETSET": 2, "APPEND": 2, "SETEX": 3, "PSETEX": 3}


def command_name(r: Record) -> str:
    return r.args[0].decode("latin-1").upper()


def key_positions(r: Record) -> list[int]:
    """Indexes of ``r.args`` that are keys (a table of common commands; others: argv[1])."""
    name, n = command_name(r), len(r.args)
    if name in KEYLESS or n < 2:
        return []
    if name in ALL_KEYS:
        return list(range(1, n))
    if name in PAIRS:
        return list(range(1, n, 2))
    return [1]


def value_sizes(r: Record) -> list[int]:
    """Sizes of the string values a SET-like command writes."""
    name = command_name(r)
    if name in PAIRS:
        return [len(v) for v in r.args[2::2]]
    at = VALUE_AT.get(name)
    return [len(r.args[at])] if at is not None and at < len(r.args) else []


def read(path: Path) -> Trace:
    """A trace file, or a MONITOR capture (ConfigError, exit 2: missing, or malformed with
    the byte offset)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read trace {path}: {exc.strerror or exc}") from None
    if not data.startswith(MAGIC) and _looks_like_monitor(data):
        return parse_monitor(data, str(path))
    return parse(data, str(path))


# `1700000000.123456 [0 127.0.0.1:5555] "SET" "k" "v"` (memtier's --monitor-input format)
_MONITOR_LINE = re.compile(rb'(\d+)\.(\d+) \[(\d+) ([^\]]*)\](.*)')
_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"a": b"\a", b"b": b"\b"}


def _monitor_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    offset = 0
    for raw in data.split(b"\n"):
        line = raw.removesuffix(b"\r")
        if line and line not in (b"OK", b"+OK"):
            yield offset, line
        offset += len(raw) + 1


def _monitor_head(line: bytes) -> tuple[int, int, bytes, bytes] | None:
    """(µs since the epoch, database, client address, the arguments' text) of a MONITOR
    line; None when it is not one, or its time or database do not fit kvload's (64 and 32
    bits: kvload reads such a line as no MONITOR line either)."""
    m = _MONITOR_LINE.fullmatch(line)
    if m is None or len(m.group(1).lstrip(b"0")) > 20 or len(m.group(3).lstrip(b"0")) > 10:
        return None  # (and no int() of thousands of digits, which Python refuses)
    us = int(m.group(1)) * 1_000_000 + int(m.group(2)[:6].ljust(6, b"0"))
    db = int(m.group(3))
    if us >= 1 << 64 or db > 0xFFFFFFFF:
        return None
    return us, db, m.group(4), m.group(5)


def _looks_like_monitor(data: bytes) -> bool:
    first = next(_monitor_lines(data[:4096]), None)
    return first is not None and _monitor_head(first[1]) is not None


def _monitor_args(text: bytes) -> list[bytes] | None:
    args, i = [], 0
    while i < len(text):
        if text[i:i + 1] == b" ":
            i += 1
            continue
        if text[i:i + 1] != b'"':
            return None
        arg, i = bytearray(), i + 1
        while True:
            c = text[i:i + 1]
            if not c:
                return None
            if c == b'"':
                break
            if c == b"\\":
                e = text[i + 1:i + 2]
                if e == b"x":
                    arg.append(int(text[i + 2:i + 4], 16))
                    i += 4
                    continue
                arg += _ESCAPES.get(e, e)
                i += 2
                continue
            arg += c
            i += 1
        args.append(bytes(arg))
        i += 1
    return args


def parse_monitor(data: bytes, name: str = "capture") -> Trace:
    """A MONITOR capture as a trace (flag FLAG_MONITOR): each client address a connection,
    times from the first command, a changed database number a SELECT (as kvload reads it)."""
    conns: dict[bytes, list[int]] = {}
    records: list[Record] = []
    first: int | None = None
    for offset, line in _monitor_lines(data):
        head = _monitor_head(line)
        try:
            args = _monitor_args(head[3]) if head else None
        except ValueError:
            args = None
        if head is None or not args:
            raise ConfigError(f"bad trace {name}: at byte {offset}: not a MONITOR line "
                              '(expected `SECONDS.MICROS [DB ADDR] "ARG" ...`)')
        us, db, client, _ = head
        first = us if first is None else first
        t_us = max(0, us - first)  # a line before the first one: at the start (as kvload)
        if t_us >= MAX_TIME_US:
            raise ConfigError(f"bad trace {name}: at byte {offset}: time {t_us} µs after "
                              f"the first line is past the {MAX_TIME_US // 86_400_000_000} "
                              "days a trace may span")
        state = conns.setdefault(client, [len(conns), 0])
        if state[1] != db and args[0].upper() != b"SELECT":
            records.append(Record(state[0], t_us, (b"SELECT", str(db).encode())))
        state[1] = db
        records.append(Record(state[0], t_us, tuple(args)))
    return Trace(FLAG_MONITOR, first or 0, records)


def write(path: Path, trace: Trace) -> None:
    """Written whole to a temporary file beside ``path``, then renamed over it."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(encode(trace))
    os.replace(tmp, path)
