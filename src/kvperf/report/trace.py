"""`kvperf trace stats`' terminal view of a recorded trace: the summary line, the command
mix, value sizes, the most accessed keys, commands per second, pipeline depth, and the
recorded replies (analysis/trace_stats.py)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from kvperf.analysis.trace_stats import TraceStats

# Seconds of the rate line shown (a longer trace: the first ones, its length and peak; the
# JSON has every second). A 50-day trace's 4.4 million counts took minutes and gigabytes.
PER_SECOND_SHOWN = 120


def stats_view(s: TraceStats, name: str) -> list[RenderableType]:
    """What to print, in order: lines (printed without highlighting) and tables. What the
    trace holds (command names, keys) and its file name are text, never markup."""
    zipf = "-" if s.zipf_s is None else f"{s.zipf_s:.2f}"
    shown: list[RenderableType] = [
        f"{escape(name)}: {s.commands} commands, {s.connections} connections, "
        f"{s.span_s:.1f} s, {s.keys} keys, Zipf exponent {zipf}"
        f"{' (anonymized)' if s.anonymized else ''}",
        _mix_table(s)]
    if s.dropped:
        shown.insert(1, f"incomplete: {s.dropped} commands of {s.dropped_connections} "
                        "connections were dropped while recording (kvload record's trace "
                        "writer was behind; docs/TRACES.md)")
    if s.value_sizes:
        shown.append(_sizes_table("Value sizes (bytes)", "values", s.value_sizes))
    keys = Table(title="Most accessed keys")
    keys.add_column("key")
    keys.add_column("accesses", justify="right")
    for key, count in s.top_keys:
        keys.add_row(Text(key), str(count))
    shown += [keys, _per_second(s.per_second),
              f"pipeline depth (commands per recorded read): {s.pipeline_depth}"]
    return shown + _replies(s)


def _per_second(counts: list[int]) -> str:
    shown = " ".join(map(str, counts[:PER_SECOND_SHOWN]))
    if len(counts) <= PER_SECOND_SHOWN:
        return f"commands per second: {shown}"
    return (f"commands per second: {shown} … (the first {PER_SECOND_SHOWN} of {len(counts)} "
            f"s, peak {max(counts)}; --json FILE has every second)")


def _mix_table(s: TraceStats) -> Table:
    mix = Table(title="Command mix")
    mix.add_column("command")
    mix.add_column("count", justify="right")
    mix.add_column("share", justify="right")
    for name, count in s.mix.items():
        mix.add_row(Text(name), str(count), f"{100 * count / max(s.commands, 1):.1f}%")
    return mix


def _replies(s: TraceStats) -> list[RenderableType]:
    if s.replies is None:
        return ["recorded replies: none (recorded without kvload record --replies"
                f"{', a MONITOR capture' if s.monitor else ''})"]
    r = s.replies
    return [f"recorded replies: {r.count}, latency at the proxy p50 {r.latency_p50_us} µs, "
            f"p99 {r.latency_p99_us} µs",
            _sizes_table("Reply sizes (bytes, as recorded)", "replies", r.size_histogram)]


def _sizes_table(title: str, counted: str, histogram: dict[str, int]) -> Table:
    """A size histogram (bucket → count) as a table."""
    sizes = Table(title=title)
    sizes.add_column("size")
    sizes.add_column(counted, justify="right")
    for bucket, count in histogram.items():
        sizes.add_row(bucket, str(count))
    return sizes
