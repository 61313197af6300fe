"""kvload's trace format in Python (driver/trace_format.py) and the anonymizer: round trip,
every truncation an error at the cut record's offset, wrong version / garbage, stand-ins
that keep lengths, prefixes and per-key frequency — and, with keep_slots, cluster slots."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kvperf.analysis.trace_stats import stats
from kvperf.core.errors import ConfigError
from kvperf.core.keyslot import key_slot
from kvperf.driver.trace_anonymize import anonymize, anonymize_counting
from kvperf.driver.trace_format import (
    FLAG_ANONYMIZED,
    FLAG_KEEP_SLOTS,
    FLAG_MONITOR,
    FLAG_REPLIES,
    HEADER,
    Gap,
    Record,
    Trace,
    encode,
    parse,
    read,
)
from kvperf.driver.trace_slots import hashed_span, solve
from kvperf.report.trace import stats_view


def _trace() -> Trace:
    return Trace(0, 1_700_000_000_000_000, [
        Record(0, 0, (b"SET", b"user:1234", b"secret", b"EX", b"10")),
        Record(3, 250, (b"GET", b"user:1234")),
        Record(3, 250, (b"MSET", b"a", b"1", b"order:77", b"zz")),
        Record(70000, 1 << 40, (b"PING",), (5, 42)),
    ])


def test_round_trip() -> None:
    t = _trace()
    assert parse(encode(t)) == t


def test_every_truncation_is_an_error_at_the_cut_record() -> None:
    data = encode(_trace())
    starts = [HEADER.size]
    for r in _trace().records:
        starts.append(starts[-1] + len(encode(Trace(0, 0, [r]))) - HEADER.size)
    for cut in range(len(data)):
        if cut in starts:
            assert len(parse(data[:cut]).records) == starts.index(cut)
            continue
        with pytest.raises(ConfigError) as e:
            parse(data[:cut], "t")
        if cut >= HEADER.size:
            record = max(s for s in starts if s <= cut)
            assert f"at byte {record}: truncated record" in str(e.value), (cut, e.value)


def test_wrong_version_and_garbage() -> None:
    data = bytearray(encode(_trace()))
    data[8] = 7
    with pytest.raises(ConfigError, match="at byte 8: unsupported trace version 7"):
        parse(bytes(data))
    with pytest.raises(ConfigError, match="at byte 0: not a kvload trace"):
        parse(b"*1\r\n$4\r\nPING\r\n")
    good = encode(_trace())
    with pytest.raises(ConfigError, match=f"at byte {len(good)}: bad record tag 0x09"):
        parse(good + b"\x09")


def test_anonymize_keeps_lengths_prefixes_and_frequency() -> None:
    t = _trace()
    a = anonymize(t, b"salt")
    assert a.anonymized and not t.anonymized
    set_, get, mset, ping = a.records
    assert set_.args[1].startswith(b"user:") and len(set_.args[1]) == len(b"user:1234")
    assert set_.args[1] != b"user:1234" and set_.args[1] == get.args[1]  # same key, same stand-in
    assert set_.args[2] == b"xxxxxx" and set_.args[3:] == (b"EX", b"10")  # options kept
    assert mset.args[3].startswith(b"order:") and mset.args[2] == b"x" and len(mset.args[1]) == 1
    assert ping == t.records[3]
    assert anonymize(t, b"salt") == a and anonymize(t, b"other") != a  # deterministic, salted
    # Many short keys: distinct keys keep distinct stand-ins (per-key frequency kept).
    many = Trace(0, 0, [Record(0, i, (b"GET", f"k:{i % 500}".encode())) for i in range(2000)])
    keys = Counter(r.args[1] for r in anonymize(many).records)
    assert sorted(keys.values()) == sorted(Counter(r.args[1] for r in many.records).values())


def test_monitor_captures_read_as_kvload_reads_them(tmp_path: Path) -> None:
    capture = tmp_path / "monitor.txt"
    capture.write_bytes(b'OK\n1700000000.123456 [0 127.0.0.1:5555] "SET" "k\\"1" "a\\x41\\n"\r\n'
                        b'1700000000.223456 [1 127.0.0.1:6666] "GET" "k"\n'
                        b'1700000001.5 [0 127.0.0.1:5555] "PING"\n')
    t = read(capture)
    assert t.flags == FLAG_MONITOR and t.start_unix_us == 1_700_000_000_123_456
    assert [(r.conn, r.t_us, r.args) for r in t.records] == [
        (0, 0, (b"SET", b'k"1', b"aA\n")), (1, 100_000, (b"SELECT", b"1")),
        (1, 100_000, (b"GET", b"k")), (0, 1_376_544, (b"PING",))]
    capture.write_bytes(b'1700000000.1 [0 a:1] "PING"\nhello\n')
    with pytest.raises(ConfigError, match="at byte 28: not a MONITOR line"):
        read(capture)
    assert anonymize(t).flags == FLAG_MONITOR | FLAG_ANONYMIZED


def _slot_trace() -> Trace:
    keys = [f"user:{i:08d}".encode() for i in range(300)] + [
        b"order:{cust42}:1", b"order:{cust42}:2", b"{tag}rest", b"a{b}c:def", b"{}empty:tag",
        b"nocolonkey123", b"k:333"]
    return Trace(0, 0, [Record(i % 3, i, (b"GET", keys[(i * 7919) % len(keys)]))
                        for i in range(1500)])


def test_anonymize_keep_slots_keeps_each_keys_slot_length_prefix_and_frequency() -> None:
    t = _slot_trace()
    a, kept = anonymize_counting(t, b"salt", keep_slots=True)
    assert a.flags == FLAG_ANONYMIZED | FLAG_KEEP_SLOTS and a.keep_slots and a.anonymized
    assert not kept, "every key here has at least 3 characters to change"
    pairs = {r.args[1]: s.args[1] for r, s in zip(t.records, a.records, strict=True)}
    assert all(k != s for k, s in pairs.items()), "every key replaced"
    assert len(set(pairs.values())) == len(pairs), "two keys never share a stand-in"
    for key, standin in pairs.items():
        assert key_slot(standin) == key_slot(key), (key, standin)
        assert len(standin) == len(key)
        if b":" in key:
            assert standin.partition(b":")[0] == key.partition(b":")[0], "prefix kept"
    slots = Counter(key_slot(r.args[1]) for r in t.records)
    assert Counter(key_slot(r.args[1]) for r in a.records) == slots, "slot histogram kept"
    assert sorted(Counter(r.args[1] for r in a.records).values()) == sorted(
        Counter(r.args[1] for r in t.records).values()), "per-key frequency kept"
    assert anonymize(t, b"salt", keep_slots=True) == a, "deterministic"
    assert anonymize(t, b"other", keep_slots=True) != a, "salted"
    # Without --keep-slots the slots are not kept (what the option is for).
    plain = anonymize(t, b"salt")
    assert Counter(key_slot(r.args[1]) for r in plain.records) != slots
    assert plain.flags == FLAG_ANONYMIZED


def test_keep_slots_keeps_keys_too_short_to_replace_and_says_so() -> None:
    t = Trace(0, 0, [Record(0, 0, (b"GET", b"k:1")), Record(0, 1, (b"GET", b"user:abcd"))])
    a, kept = anonymize_counting(t, b"salt", keep_slots=True)
    assert kept == [b"k:1"] and a.records[0].args[1] == b"k:1"
    assert a.records[1].args[1] != b"user:abcd"
    assert key_slot(a.records[1].args[1]) == key_slot(b"user:abcd")


def test_solve_reaches_any_slot_with_four_free_letters() -> None:
    for slot in (0, 1, 8191, 16383, 12345):
        key = bytearray(b"prefix:00000000")
        made = solve(key, [11, 12, 13, 14], slot, start_at=slot)
        assert made is not None and key_slot(made) == slot and made[:11] == b"prefix:0000"
    assert hashed_span(b"a{bc}d") == (2, 4) and hashed_span(b"a{}d") == (0, 4)


def test_reply_and_keep_slots_flags_round_trip() -> None:
    t = Trace(FLAG_REPLIES, 5, [Record(0, 1, (b"GET", b"k"), (9, 120))])
    back = parse(encode(t))
    assert back == t and back.has_replies and not back.keep_slots
    data = bytearray(encode(t))
    data[10] = 0x10
    with pytest.raises(ConfigError, match="at byte 10: unknown header flags 0x0010"):
        parse(bytes(data))


def test_a_time_past_the_span_limit_is_an_error_at_its_record_or_line(tmp_path: Path) -> None:
    """As kvload's reader: a record 2^42 µs (50 days) or more after the start is an error
    at its offset (trace stats once sized a count per second by it: a MemoryError)."""
    from kvperf.driver.trace_format import MAX_TIME_US
    ok = Trace(0, 0, [Record(0, MAX_TIME_US - 1, (b"PING",))])
    assert parse(encode(ok)) == ok
    with pytest.raises(ConfigError, match=f"at byte {HEADER.size}: time {MAX_TIME_US} µs"):
        parse(encode(Trace(0, 0, [Record(0, MAX_TIME_US, (b"PING",))])), "t")
    capture = tmp_path / "monitor.txt"
    first = b'1700000000.1 [0 a:1] "PING"\n'
    capture.write_bytes(first + b'1800000000.1 [0 a:1] "PING"\n')
    with pytest.raises(ConfigError, match=f"at byte {len(first)}: time .* past the 50 days"):
        read(capture)


def test_gap_records_read_apart_from_the_commands_and_survive_anonymizing() -> None:
    # kvload record's gap (format.rs encode_gap): tag 3, connection 1, time 5 µs, 2 records
    # of 300 bytes dropped — before the connection's next command, and one left at the end.
    ping = encode(Trace(0, 0, [Record(1, 9, (b"PING",))]))[HEADER.size:]
    data = encode(_trace()) + b"\x03\x01\x05\x02\xac\x02" + ping + b"\x03\x07\x09\x01\x01"
    t = parse(data)
    assert [r.args for r in t.records[-2:]] == [(b"PING",), (b"PING",)]
    assert t.gaps == [Gap(1, 5, 2, 300), Gap(7, 9, 1, 1)]
    assert t.dropped == 3
    assert parse(encode(t)) == t, "gaps are written back (after the records)"
    assert anonymize(t, b"salt").gaps == t.gaps
    s = stats(t)
    assert (s.dropped, s.dropped_connections) == (3, 2)
    assert s.as_json()["dropped"] == 3
    assert "incomplete: 3 commands of 2 connections" in str(stats_view(s, "t")[1])
    complete = stats(_trace())
    assert complete.dropped == 0 and "incomplete" not in str(stats_view(complete, "t"))
    with pytest.raises(ConfigError, match=f"at byte {len(data) - 5}: truncated record"):
        parse(data[:-1], "t")


def test_a_monitor_line_before_the_first_is_at_the_start_and_the_copy_writes(
        tmp_path: Path) -> None:
    """Found by tests/unit/fuzz (a capture's lines out of order): a line earlier than the
    first got a negative time, and `trace anonymize` failed writing it (ValueError: byte must
    be in range(0, 256)). As kvload reads it: at the start (time 0)."""
    capture = tmp_path / "monitor.txt"
    capture.write_bytes(b'1700000005.5 [0 a:1] "GET" "k"\n1700000001.0 [0 b:2] "SET" "k" "v"\n')
    t = read(capture)
    assert [r.t_us for r in t.records] == [0, 0]
    assert t.start_unix_us == 1_700_000_005_500_000
    assert parse(encode(anonymize(t))).records[1].args[0] == b"SET"


def test_monitor_numbers_past_kvloads_bits_are_not_monitor_lines(tmp_path: Path) -> None:
    """Found by tests/unit/fuzz: seconds of 5,000 digits raised Python's ValueError
    (integer string conversion past 4,300 digits) out of `kvperf trace stats`; a time past
    64 bits made `trace anonymize` fail packing the header (struct.error). As kvload: such a
    line (and a database past 32 bits) is not a MONITOR line, at its offset."""
    first = b'1700000000.1 [0 a:1] "PING"\n'
    for bad in (b"9" * 5000 + b".1 [0 a:1]", b"18446744073710.1 [0 a:1]",
                b"1700000000.1 [4294967296 a:1]", b"1700000000.1 [" + b"9" * 5000 + b" a:1]"):
        capture = tmp_path / "monitor.txt"
        capture.write_bytes(first + bad + b' "PING"\n')
        with pytest.raises(ConfigError, match=f"at byte {len(first)}: not a MONITOR line"):
            read(capture)
    capture.write_bytes(b"00000000000000000000001700000000.1 [0004294967295 a:1] \"PING\"\n")
    assert read(capture).start_unix_us == 1_700_000_000_100_000


def test_trace_stats_shows_keys_commands_and_the_file_name_as_text_not_markup() -> None:
    """Found by tests/unit/fuzz (a key `[/]`): `kvperf trace stats` printed keys and command
    names as rich markup — a key like `[/x]` raised MarkupError (a traceback), `[bold]k`
    was shown as a bold `k`. The file name too (review)."""
    from io import StringIO

    from rich.console import Console
    t = Trace(0, 0, [Record(0, 0, (b"GET", b"[/x]")), Record(0, 1, (b"[bold]X", b"[bold]k"))])
    out = StringIO()
    Console(file=out, width=200).print(*stats_view(stats(t), "[/dir]/t.kvt"), highlight=False)
    for shown in ("[/x]", "[BOLD]X", "[bold]k", "[/dir]/t.kvt"):
        assert shown in out.getvalue(), shown


def test_trace_stats_shows_the_first_seconds_of_a_long_trace() -> None:
    """Found by tests/unit/fuzz (a record time near the 50-day limit): the terminal view
    printed a count for every second of the span — 4.4 million for 50 days, which rich
    took minutes and over 16 GB to lay out (100,000 seconds: 4.4 s). Now the first 120,
    the span and the peak; the JSON keeps every second."""
    t = Trace(0, 0, [Record(0, 0, (b"GET", b"k")), Record(0, 100_000 * 10**6, (b"GET", b"k"))])
    s = stats(t)
    assert len(s.per_second) == 100_001 and len(s.as_json()["per_second"]) == 100_001
    (line,) = [v for v in stats_view(s, "t") if str(v).startswith("commands per second")]
    assert str(line) == ("commands per second: 1" + " 0" * 119 + " … (the first 120 of "
                         "100001 s, peak 1; --json FILE has every second)")
    short = stats(Trace(0, 0, [Record(0, 0, (b"GET", b"k")), Record(0, 10**6, (b"GET",))]))
    assert "commands per second: 1 1" in [str(v) for v in stats_view(short, "t")]
