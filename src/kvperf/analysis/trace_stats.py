"""What a recorded trace holds (pure; ``kvperf trace stats``): command mix, connections,
rate per second, key popularity with a fitted Zipf exponent, value-size histogram, pipeline
depth, and — recorded with ``kvload record --replies`` — the reply-size histogram and the
latency percentiles the proxy saw."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from kvperf.driver.trace_format import (
    FLAG_MONITOR,
    Record,
    Trace,
    command_name,
    key_positions,
    value_sizes,
)


@dataclass(frozen=True)
class RecordedReplies:
    """Replies recorded by ``kvload record --replies`` (kvload trace-info computes the same)."""

    count: int  # commands with a recorded reply
    size_histogram: dict[str, int]  # "≤N" bucket (powers of two) → replies
    latency_p50_us: int
    latency_p99_us: int

    def as_json(self) -> dict[str, object]:
        return {"count": self.count, "size_histogram": self.size_histogram,
                "latency_p50_us": self.latency_p50_us, "latency_p99_us": self.latency_p99_us}


@dataclass(frozen=True)
class TraceStats:
    commands: int
    connections: int
    span_s: float
    anonymized: bool
    monitor: bool  # read from a MONITOR capture (never has replies)
    mix: dict[str, int]  # command → count, most frequent first
    per_second: list[int]  # commands in each second after the first command
    keys: int  # distinct keys
    top_keys: list[tuple[str, int]]  # the 10 most accessed keys
    zipf_s: float | None  # fitted exponent of count ∝ rank^-s (None: under 2 keys)
    value_sizes: dict[str, int]  # "≤N" bucket (powers of two) → count
    value_size: int | None  # median value size: written values, else recorded GET replies
    pipeline_depth: float  # mean commands per recorded read (1.0 for a MONITOR capture)
    replies: RecordedReplies | None  # None: recorded without --replies
    # Commands kvload record dropped (its writer behind; the trace's gap records), and the
    # connections they were of: 0, 0 for a complete trace.
    dropped: int = 0
    dropped_connections: int = 0

    def as_json(self) -> dict[str, object]:
        return {"commands": self.commands, "connections": self.connections,
                "span_s": self.span_s, "anonymized": self.anonymized, "monitor": self.monitor,
                "mix": self.mix,
                "per_second": self.per_second, "keys": self.keys,
                "top_keys": [list(k) for k in self.top_keys], "zipf_s": self.zipf_s,
                "value_sizes": self.value_sizes, "value_size": self.value_size,
                "pipeline_depth": self.pipeline_depth,
                "replies": None if self.replies is None else self.replies.as_json(),
                "dropped": self.dropped, "dropped_connections": self.dropped_connections}


def zipf_exponent(counts: list[int]) -> float | None:
    """Least-squares slope of log(count) over log(rank), negated: 0 for uniform access, ~1
    for Zipf's law. Fitted over the ranks of the keys seen more than once when there are
    at least 10 of them (a tail of keys seen once is the sample's floor, not the curve)."""
    ranked = sorted(counts, reverse=True)
    repeated = [c for c in ranked if c > 1]
    use = repeated if len(repeated) >= 10 else ranked
    if len(use) < 2:
        return None
    x = np.log(np.arange(1, len(use) + 1, dtype=float))
    y = np.log(np.asarray(use, dtype=float))
    slope = float(np.polyfit(x, y, 1)[0])
    return round(-slope, 3)


def _bucket(size: int) -> int:
    return 1 if size <= 1 else 1 << math.ceil(math.log2(size))


def percentile(ordered: list[int], p: float) -> int:
    """Nearest-rank percentile of sorted values (as kvload trace-info)."""
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def bulk_value_len(size: int) -> int | None:
    """The value length of a bulk-string reply of ``size`` bytes (``$N`` CRLF, N bytes, CRLF);
    None for a null reply (a miss)."""
    for digits in range(1, 21):
        n = size - 5 - digits
        if n >= 0 and len(str(n)) == digits:
            return n
    return None


def recorded_replies(records: list[Record]) -> RecordedReplies | None:
    latencies = sorted(r.reply[1] for r in records if r.reply is not None)
    if not latencies:
        return None
    sizes = Counter(_bucket(r.reply[0]) for r in records if r.reply is not None)
    return RecordedReplies(len(latencies), {f"≤{b}": sizes[b] for b in sorted(sizes)},
                           percentile(latencies, 50), percentile(latencies, 99))


def pipeline_depth(records: list[Record]) -> float:
    """Mean commands per recorded read: a connection's consecutive records with one time."""
    last: dict[int, int] = {}
    reads = 0
    for r in records:
        if last.get(r.conn) != r.t_us:
            reads += 1
            last[r.conn] = r.t_us
    return round(len(records) / reads, 2) if reads else 1.0


def value_size(records: list[Record]) -> int | None:
    """Median size of the values written, else of the values recorded GET replies carried."""
    written = [n for r in records for n in value_sizes(r)]
    if not written:
        written = [n for r in records if r.reply is not None and command_name(r) == "GET"
                   and (n := bulk_value_len(r.reply[0])) is not None]
    return int(np.median(written)) if written else None


def stats(trace: Trace) -> TraceStats:
    records = trace.records
    times = [r.t_us for r in records]
    first, last = (min(times), max(times)) if times else (0, 0)
    per_second = [0] * ((last - first) // 1_000_000 + 1) if records else []
    mix: Counter[str] = Counter()
    keys: Counter[bytes] = Counter()
    sizes: Counter[int] = Counter()
    for r in records:
        per_second[(r.t_us - first) // 1_000_000] += 1
        mix[command_name(r)] += 1
        for i in key_positions(r):
            keys[r.args[i]] += 1
        for size in value_sizes(r):
            sizes[_bucket(size)] += 1
    return TraceStats(
        commands=len(records), connections=len({r.conn for r in records}),
        span_s=(last - first) / 1e6, anonymized=trace.anonymized,
        monitor=bool(trace.flags & FLAG_MONITOR),
        mix=dict(mix.most_common()), per_second=per_second, keys=len(keys),
        top_keys=[(k.decode("utf-8", "replace"), n) for k, n in keys.most_common(10)],
        zipf_s=zipf_exponent(list(keys.values())),
        value_sizes={f"≤{b}": sizes[b] for b in sorted(sizes)},
        value_size=value_size(records), pipeline_depth=pipeline_depth(records),
        replies=recorded_replies(records), dropped=trace.dropped,
        dropped_connections=len({g.conn for g in trace.gaps}))
