"""Strategies of the trace reader's properties (test_trace_reader.py): kvload traces —
command records with and without replies and gap records, interleaved, encoded with their
item boundaries — and MONITOR captures (memtier's --monitor-input format) with MONITOR's
escapes."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from kvperf.driver.trace_format import (
    HEADER,
    KNOWN_FLAGS,
    MAX_TIME_US,
    Gap,
    Record,
    Trace,
    encode,
)

U64 = 2**64 - 1
# Values at the edges of the varints' 7-bit groups and of 64 bits, and anything.
edges = st.one_of(st.sampled_from([0, 1, 127, 128, 2**14, 2**32 - 1, 2**32, 2**42 - 1, 2**42,
                                   2**63, U64]), st.integers(0, U64))
small = st.integers(0, 5_000_000)  # times within seconds: stats over a short span
conns = st.one_of(st.integers(0, 4), st.integers(0, 2**32 - 1))
times = st.one_of(small, st.integers(0, MAX_TIME_US - 1))
# Command names and keys kvperf's tables know, and any bytes (markup-like brackets too).
words = st.one_of(
    st.sampled_from([b"SET", b"GET", b"MSET", b"DEL", b"PING", b"SETEX", b"set", b"EX", b"1",
                     b"[/]", b"[b]k", b"k:[/x]"]),
    st.binary(max_size=12),
    st.text(alphabet="[]/:{}ab x=\\", max_size=10).map(str.encode))
argvs = st.lists(words, min_size=1, max_size=5).map(tuple)
replies = st.one_of(st.none(), st.tuples(edges, edges))
records = st.builds(Record, conns, times, argvs, replies)
gaps = st.builds(Gap, conns, times, edges, edges)
items = st.lists(st.one_of(records, gaps), max_size=8)


@dataclass(frozen=True)
class Encoded:
    """A trace's bytes; ``starts``: each item's offset, then the end."""

    trace: Trace  # records and gaps each in their order in the file
    data: bytes
    starts: list[int]


@st.composite
def encoded(draw: st.DrawFn, times_of: st.SearchStrategy[int] = times) -> Encoded:
    """A valid trace whose gap records lie anywhere among its commands (as `kvload record`
    writes them: before a connection's next kept record, or at the end)."""
    flags = draw(st.integers(0, KNOWN_FLAGS))
    start = draw(edges)
    found = draw(st.lists(st.one_of(st.builds(Record, conns, times_of, argvs, replies),
                                    st.builds(Gap, conns, times_of, edges, edges)),
                          max_size=8))
    data, starts = bytearray(encode(Trace(flags, start))), [HEADER.size]
    for item in found:
        one = (Trace(flags, start, [item]) if isinstance(item, Record)
               else Trace(flags, start, [], [item]))
        data += encode(one)[HEADER.size:]
        starts.append(len(data))
    trace = Trace(flags, start, [i for i in found if isinstance(i, Record)],
                  [i for i in found if isinstance(i, Gap)])
    return Encoded(trace, bytes(data), starts)


def varint(value: int) -> bytes:
    """LEB128 of any value, past 64 bits too (what a hostile file may hold)."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# MONITOR's quoting: \" \\ \n \r \t \a \b, \xHH for other unprintable bytes.
_QUOTED = {ord('"'): b'\\"', ord("\\"): b"\\\\", 10: b"\\n", 13: b"\\r", 9: b"\\t", 7: b"\\a",
           8: b"\\b"}


def monitor_quoted(arg: bytes) -> bytes:
    out = bytearray(b'"')
    for b in arg:
        out += _QUOTED.get(b) or (bytes([b]) if 32 <= b < 127 else b"\\x%02x" % b)
    return bytes(out + b'"')


@dataclass(frozen=True)
class MonitorLine:
    seconds: int
    micros: int
    db: int
    client: bytes
    args: tuple[bytes, ...]

    @property
    def text(self) -> bytes:
        quoted = b" ".join(map(monitor_quoted, self.args))
        return b"%d.%06d [%d %s] %s" % (self.seconds, self.micros, self.db, self.client, quoted)


clients = st.sampled_from([b"127.0.0.1:5000", b"127.0.0.1:5001", b"10.0.0.2:6000",
                           b"unix:/tmp/s"])
monitor_lines = st.builds(MonitorLine, st.integers(1_700_000_000, 1_700_000_100),
                          st.integers(0, 999_999), st.integers(0, 3), clients, argvs)
# Numbers of any length where a MONITOR line has digits: seconds, micros, database.
any_digits = st.one_of(st.integers(0, 2**70).map(str),
                       st.integers(1, 6000).map(lambda n: "9" * n))


@st.composite
def hostile_monitor_line(draw: st.DrawFn) -> bytes:
    """A MONITOR line with its numbers of any size, or any bytes in its arguments."""
    line = draw(monitor_lines)
    seconds, micros, db = draw(any_digits), draw(any_digits), draw(any_digits)
    rest = draw(st.one_of(st.just(b" ".join(map(monitor_quoted, line.args))),
                          st.binary(max_size=30),
                          st.text(alphabet='"\\x0aZ ', max_size=12).map(str.encode)))
    return b"%s.%s [%s %s] %s" % (seconds.encode(), micros.encode(), db.encode(),
                                  line.client, rest)
