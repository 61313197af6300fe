"""`kvperf trace stats`'s pure parts (analysis/trace_stats.py, trace_workload.py): recorded
reply sizes and latency percentiles, pipeline depth, value size from GET replies, and the
synthetic workloads --emit-workload prints (mix apportioned, key pattern, rate)."""

from __future__ import annotations

from kvperf.analysis.trace_stats import bulk_value_len, stats
from kvperf.analysis.trace_workload import emit, seats
from kvperf.driver.trace_format import FLAG_MONITOR, FLAG_REPLIES, Record, Trace


def _trace() -> Trace:
    """2 connections over 2 s: pipelines of 4 (3 GETs + 1 SET of 100 bytes) every 10 ms."""
    records = []
    for i in range(200):
        conn, t = i % 2, i * 10_000
        for j in range(3):
            key = f"k:{(i * 3 + j) % 40}".encode()
            records.append(Record(conn, t, (b"GET", key), (108, 100 + j)))
        records.append(Record(conn, t, (b"SET", f"k:{i % 40}".encode(), b"v" * 100, b"EX",
                                        b"60"), (5, 300)))
    return Trace(FLAG_REPLIES, 0, records)


def test_stats_show_recorded_replies_pipeline_depth_and_value_size() -> None:
    s = stats(_trace())
    assert s.replies is not None and s.replies.count == 800
    assert s.replies.size_histogram == {"≤8": 200, "≤128": 600}
    assert (s.replies.latency_p50_us, s.replies.latency_p99_us) == (101, 300)
    assert s.pipeline_depth == 4.0 and s.value_size == 100 and not s.monitor
    assert s.as_json()["replies"] == {"count": 800, "size_histogram": {"≤8": 200, "≤128": 600},
                                      "latency_p50_us": 101, "latency_p99_us": 300}
    monitor = stats(Trace(FLAG_MONITOR, 0, [Record(0, 0, (b"GET", b"k"))]))
    assert monitor.replies is None and monitor.monitor and monitor.as_json()["replies"] is None


def test_value_size_falls_back_to_recorded_get_replies() -> None:
    assert bulk_value_len(len(b"$700\r\n") + 700 + 2) == 700
    assert bulk_value_len(len(b"$-1\r\n")) is None and bulk_value_len(3) is None
    gets = Trace(FLAG_REPLIES, 0, [Record(0, i, (b"GET", b"k"), (6 + 700 + 2, 50))
                                   for i in range(5)] + [Record(0, 9, (b"GET", b"m"), (5, 1))])
    assert stats(gets).value_size == 700, "the miss ($-1) is no value"


def test_seats_apportion_the_mix_within_a_point() -> None:
    assert seats({"GET": 300, "SET": 100}) == {"GET": 3, "SET": 1}
    assert seats({"GET": 500, "SET": 500, "PING": 1}) == {"GET": 1, "SET": 1}
    got = seats({"GET": 617, "SET": 250, "DEL": 133})
    assert sum(got.values()) <= 20
    for name, count in {"GET": 617, "SET": 250, "DEL": 133}.items():
        assert abs(got[name] / sum(got.values()) - count / 1000) <= 0.03, got


def test_emitted_kvload_and_memtier_workloads() -> None:
    t = _trace()
    s = stats(t)
    own = emit("kvload", t, s)
    assert own.argv[:3] == ["kvload", "-c", "2"]
    assert own.argv[own.argv.index("-P") + 1] == "1", "4 per read = one 4-command sequence"
    assert own.argv[own.argv.index("-r") + 1] == "40"
    assert own.argv[own.argv.index("-d") + 1] == "100"
    assert own.argv[own.argv.index("--rps") + 1] == f"{800 / 1.99:.0f}"
    sequence = " ".join(own.argv[own.argv.index("--independent-keys") + 3:])
    assert sequence.count("GET key:__rand_int__") == 3, sequence
    assert sequence.count("SET key:__rand_int__ __data__ EX 60") == 1, sequence
    assert any("uniform" in n for n in own.notes)
    mt = emit("memtier", t, s)
    assert mt.argv[:2] == ["kvload", "memtier"]
    assert mt.argv[mt.argv.index("--pipeline") + 1] == "4"
    assert mt.argv[mt.argv.index("--key-maximum") + 1] == "40"
    assert mt.argv[mt.argv.index("--rate-limiting") + 1] == f"{800 / 1.99 / 2:.0f}"
    commands = [mt.argv[i + 1] for i, a in enumerate(mt.argv) if a == "--command"]
    ratios = [mt.argv[i + 1] for i, a in enumerate(mt.argv) if a == "--command-ratio"]
    assert commands == ["GET __key__", "SET __key__ __data__ EX 60"] and ratios == ["3", "1"]
    # A skewed key popularity: memtier gets Zipf with the fitted exponent.
    skewed = Trace(0, 0, [Record(0, i, (b"GET", f"k:{int(1000 / (1 + i % 97))}".encode()))
                          for i in range(3000)])
    z = emit("memtier", skewed, stats(skewed))
    assert "--key-zipf-exp" in z.argv and z.argv.count("Z") == 1


def test_the_kvperf_config_holds_the_mix_keys_sizes_depth_and_load_connections() -> None:
    import json

    from kvperf.config.loader import parse_config
    trace = _trace()
    trace.records.append(Record(7, 0, (b"PING",)))  # a probe connection: not a client
    made = emit("kvperf", trace, stats(trace))
    assert made.config is not None and made.text == made.config
    [config] = json.loads(made.config)
    assert config["command_mix"] == ["3 GET __key__", "1 SET __key__ __data__ EX 60"], config
    assert (config["keyspacelen"], config["clients"], config["pipelines"]) == (40, 2, 1)
    assert config["value_sizes"] == "100" and config["duration"] == 2, config
    assert any("one write" in note for note in made.notes), made.notes
    [spec] = parse_config([config], {0})  # what kvperf run --config reads
    assert spec.commands[0].calls_per_sequence == {"get": 3, "set": 1}


def test_a_command_name_a_workload_cannot_hold_is_left_out_and_a_slow_trace_keeps_a_rate() -> None:
    # one record a minute: 0.02 commands a second; a name that would end the sequence early
    t = Trace(0, 0, [Record(0, i * 60_000_000, (b"GET", b"k")) for i in range(30)]
              + [Record(0, 1, (b"GET;FLUSHALL", b"k")) for _ in range(30)])
    for tool in ("kvload", "memtier", "kvperf"):
        made = emit(tool, t, stats(t))
        assert "FLUSHALL" not in " ".join(made.argv) + (made.config or ""), (tool, made)
        assert any("left out" in n and "GET;FLUSHALL" in n for n in made.notes), made.notes
    own = emit("kvload", t, stats(t))
    assert own.argv[own.argv.index("--rps") + 1] == "1", "a rate under 0.5/s is not --rps 0"
    only = Trace(0, 0, [Record(0, 0, (b"A B", b"k"))])
    try:
        emit("kvload", only, stats(only))
    except ValueError as e:
        assert "'A B'" in str(e)
    else:
        raise AssertionError("a trace of nothing a workload can hold emits nothing")


def test_a_command_name_outside_ascii_is_left_out_not_a_crash() -> None:
    # b"\xb5" reads as "µ", whose upper case "Μ" (U+039C) has no latin-1 byte: found by the
    # trace reader's properties (tests/unit/fuzz/test_trace_reader.py)
    t = Trace(0, 0, [Record(0, 0, (b"SET",)), Record(0, 0, (b"\xb5",))])
    made = emit("kvload", t, stats(t))
    assert any("left out" in n for n in made.notes) and "SET" in made.argv, made
