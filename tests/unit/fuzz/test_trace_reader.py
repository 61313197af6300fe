"""kvperf's reader of kvload traces (driver/trace_format.py) under hostile input (issue 41,
hypothesis): a trace — commands, commands with replies, gap records anywhere among them —
reads back exactly; every cut is a shorter trace or an error at the cut record's offset;
bytes changed, any bytes after the header, another version, magic or flags, huge declared
lengths and counts: the trace, or kvperf's error naming the byte offset (exit 2) — never
another exception, never an allocation of what a length claims. What is read goes on
through what `kvperf trace stats` (its view, JSON and emitted workloads) and `trace
anonymize` do with it. MONITOR captures, which `kvperf trace stats` reads too: a capture
reads back; numbers of any size and any bytes in a line: a trace or an error at the line.

The budget is ``HYPOTHESIS_PROFILE``'s (conftest.py): ``ci`` 200 examples a property,
``long`` 10,000 (``scripts/fuzz``)."""

from __future__ import annotations

import io
import re
import tracemalloc
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from rich.console import Console

from kvperf.analysis.trace_workload import TOOLS
from kvperf.core.errors import ConfigError, UsageError
from kvperf.driver import trace_format
from kvperf.driver.trace_format import HEADER, MAGIC, MAX_TIME_US, VERSION, Trace, parse
from kvperf.pipeline.commands.trace import trace_anonymize, trace_stats
from kvperf.report.trace import stats_view
from tests.unit.fuzz.traces import (
    Encoded,
    MonitorLine,
    edges,
    encoded,
    hostile_monitor_line,
    monitor_lines,
    small,
    varint,
)

AT = re.compile(r"bad trace (?P<name>.+): at byte (?P<at>\d+): (?P<why>.+)", re.S)


def _offset(exc: ConfigError, name: str) -> int:
    """The byte offset kvperf's error names (it names the file too)."""
    m = AT.fullmatch(str(exc))
    assert m is not None and m["name"] == name, exc
    return int(m["at"])


def _used(path: Path) -> Trace | None:
    """What `kvperf trace stats` (view, --json, --emit-workload of each tool) and `kvperf
    trace anonymize` do with the file: the trace read, or None when it was refused with
    the byte offset (exit 2) — any other exception fails the property."""
    try:
        trace = trace_format.read(path)
    except ConfigError as exc:
        assert 0 <= _offset(exc, str(path)) <= path.stat().st_size, exc
        return None
    found = trace_stats(path, json_file=path.with_suffix(".json"))
    Console(file=io.StringIO(), width=220).print(*stats_view(found.stats, str(path)))
    assert found.stats.commands == len(trace.records)
    assert found.stats.dropped == sum(g.records for g in trace.gaps)
    for tool in TOOLS:
        try:
            trace_stats(path, emit_workload=tool)
        except UsageError as exc:
            # no commands, or none whose name a workload can hold (an empty name, a ';'…)
            why = "a name a workload can hold" if trace.records else "holds no commands"
            assert why in str(exc), exc
    out = path.with_name("anon.kvt")
    made = trace_anonymize(path, out, salt="fuzz", keep_slots=False)
    again = trace_format.read(out)
    assert made.commands == len(again.records) == len(trace.records)
    assert again.gaps == trace.gaps and again.anonymized
    return trace


def _file(tmp: Any, data: bytes, name: str = "fuzz.kvt") -> Path:
    path: Path = tmp.mktemp("trace") / name
    path.write_bytes(data)
    return path


@given(encoded())
def test_a_trace_with_gaps_reads_back_exactly(e: Encoded) -> None:
    found = parse(e.data, "fuzz.kvt")
    assert found == e.trace
    assert found.dropped == sum(g.records for g in e.trace.gaps)


@given(encoded())
def test_every_cut_is_a_shorter_trace_or_an_error_at_the_cut_record(e: Encoded) -> None:
    for cut in range(len(e.data)):
        if cut in e.starts:  # a record boundary: the records and gaps before it
            items = e.starts.index(cut)
            shorter = parse(e.data[:cut])
            assert len(shorter.records) + len(shorter.gaps) == items
            continue
        try:
            parse(e.data[:cut], "cut.kvt")
        except ConfigError as exc:
            at, why = _offset(exc, "cut.kvt"), str(exc)
        else:
            raise AssertionError(f"a cut inside a record ({cut}) was read as a trace")
        if cut < HEADER.size:
            assert at <= cut, why
        else:
            assert at == max(s for s in e.starts if s <= cut), (cut, why)
            assert "truncated record" in why, why


changes = st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                   min_size=1, max_size=3)


@given(encoded(times_of=small), changes)
def test_a_corrupted_trace_is_read_or_refused_at_an_offset(tmp_path_factory: Any, e: Encoded,
                                                           changed: list[Any]) -> None:
    data = bytearray(e.data)
    for where, byte in changed:
        data[int(where * len(data))] = byte
    _used(_file(tmp_path_factory, bytes(data)))


EMPTY = Encoded(Trace(0, 0), HEADER.pack(MAGIC, VERSION, 0, 0, 0), [HEADER.size])


@given(encoded(times_of=small), st.binary(max_size=200))
@example(EMPTY, b"\x01\x00\x00\x02\x03GET\x03[/]")  # a key that is rich markup
def test_any_bytes_after_the_header_are_read_or_refused_at_an_offset(
        tmp_path_factory: Any, e: Encoded, tail: bytes) -> None:
    _used(_file(tmp_path_factory, e.data[:HEADER.size] + tail))


@given(st.integers(0, 0xFFFF).filter(lambda v: v != VERSION),
       st.binary(min_size=HEADER.size - 10, max_size=40))
def test_another_version_is_refused_at_byte_8(version: int, rest: bytes) -> None:
    data = MAGIC + version.to_bytes(2, "little") + rest
    try:
        parse(data, "v.kvt")
    except ConfigError as exc:
        assert _offset(exc, "v.kvt") == 8 and f"version {version}" in str(exc), exc
    else:
        raise AssertionError("another version was read")


@given(st.binary(min_size=1, max_size=30).filter(lambda b: not b.startswith(MAGIC)))
def test_another_magic_is_refused_at_its_first_wrong_byte(data: bytes) -> None:
    wrong = next((i for i, (a, b) in enumerate(zip(data, MAGIC, strict=False)) if a != b),
                 None)
    try:
        parse(data, "m.kvt")
    except ConfigError as exc:
        at = _offset(exc, "m.kvt")
        assert at == (len(data) if wrong is None else wrong), exc
    else:
        raise AssertionError("a file without the magic was read")


@given(st.lists(st.one_of(edges, st.integers(2**64, 2**80)), min_size=1, max_size=6),
       st.sampled_from([1, 2, 3]), st.binary(max_size=20))
@example([2**64 - 1], 1, b"")
@example([0, 0, 1, 2**29 + 1], 1, b"x")
def test_huge_declared_lengths_are_refused_without_allocating_them(
        numbers: list[int], tag: int, tail: bytes) -> None:
    """A record (or gap) whose varints claim huge counts, lengths, times or reply sizes
    (past 64 bits too), followed by a few bytes: read or refused, with at most a few
    hundred KiB allocated on the way."""
    data = HEADER.pack(MAGIC, VERSION, 0, 0, 0) + bytes([tag])
    data += b"".join(map(varint, numbers)) + tail
    tracemalloc.start()
    try:
        parse(data, "huge.kvt")
    except ConfigError as exc:
        assert 0 <= _offset(exc, "huge.kvt") <= len(data), exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 256 << 10, f"{peak} bytes allocated to read {len(data)}"


def _capture(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


@given(st.lists(monitor_lines, min_size=1, max_size=6))
@example([MonitorLine(1_700_000_000, 1, 0, b"a:1", (b"SET",)),
          MonitorLine(1_700_000_000, 0, 0, b"a:1", (b"SET",))])
def test_a_monitor_capture_reads_back(lines: list[MonitorLine]) -> None:
    found = trace_format.parse_monitor(_capture([b"OK", *(line.text for line in lines)]))
    commands = [r.args for r in found.records if r.args[0] != b"SELECT"]
    assert commands == [line.args for line in lines if line.args[0] != b"SELECT"]
    first = lines[0].seconds * 1_000_000 + lines[0].micros
    assert found.start_unix_us == first
    for r in found.records:
        assert 0 <= r.t_us < MAX_TIME_US


@given(st.lists(st.one_of(monitor_lines.map(lambda line: line.text), hostile_monitor_line()),
                min_size=1, max_size=5))
@example([b'1.0 [0 a:1] "GET"', b"9" * 4301 + b'.0 [0 a:1] "GET"'])
@example([b'1700000000.5 [0 a:1] "GET" "k"', b'1.0 [0 a:1] "SET" "k" "v"'])
@example([b'18446744073710.0 [0 a:1] "PING"'])
@example([b'1.0 [0 a:1] "PING"', b'1.0 [' + b"9" * 5000 + b' a:1] "PING"'])
def test_a_hostile_monitor_capture_is_read_or_refused_at_a_line(tmp_path_factory: Any,
                                                                lines: list[bytes]) -> None:
    data = _capture(lines)
    starts = {0} | {i + 1 for i, b in enumerate(data) if b == ord("\n")}
    path = _file(tmp_path_factory, data, "monitor.txt")
    try:
        trace_format.read(path)
    except ConfigError as exc:
        assert _offset(exc, str(path)) in starts, exc
    else:
        _used(path)
