"""What a recorded trace holds (pure; ``kvperf trace stats``): command mix, connections,
rate per second, key popularity with a fitted Zipf exponent, value-size histogram."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from kvperf.driver.trace_format import Trace, command_name, key_positions, value_sizes


@dataclass(frozen=True)
class TraceStats:
    commands: int
    connections: int
    span_s: float
    anonymized: bool
    mix: dict[str, int]  # command → count, most frequent first
    per_second: list[int]  # commands in each second after the first command
    keys: int  # distinct keys
    top_keys: list[tuple[str, int]]  # the 10 most accessed keys
    zipf_s: float | None  # fitted exponent of count ∝ rank^-s (None: under 2 keys)
    value_sizes: dict[str, int]  # "≤N" bucket (powers of two) → count

    def as_json(self) -> dict[str, object]:
        return {"commands": self.commands, "connections": self.connections,
                "span_s": self.span_s, "anonymized": self.anonymized, "mix": self.mix,
                "per_second": self.per_second, "keys": self.keys,
                "top_keys": [list(k) for k in self.top_keys], "zipf_s": self.zipf_s,
                "value_sizes": self.value_sizes}


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
        mix=dict(mix.most_common()), per_second=per_second, keys=len(keys),
        top_keys=[(k.decode("utf-8", "replace"), n) for k, n in keys.most_common(10)],
        zipf_s=zipf_exponent(list(keys.values())),
        value_sizes={f"≤{b}": sizes[b] for b in sorted(sizes)})
