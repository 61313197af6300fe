"""Folded stacks (``frame;frame;… count`` per line, as inferno writes them): merging the
nodes and runs of a series and scaling the counts per request, for differential
flamegraphs (pure)."""

from __future__ import annotations

from collections import Counter

from kvperf.results.row import Row

# Folded counts of a cpu-clock profile are CPU nanoseconds; per request they are written in
# picoseconds so that one sample spread over millions of requests still counts.
PER_REQUEST_SCALE = 1000


def parse(text: str) -> Counter[str]:
    """Stack → count; lines without a trailing integer count are skipped."""
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if stack and count.isdigit():
            counts[stack] += int(count)
    return counts


def per_request(counts: Counter[str], requests: float) -> Counter[str]:
    """Counts scaled to picoseconds of CPU per request (requests > 0)."""
    return Counter({stack: round(n * PER_REQUEST_SCALE / requests)
                    for stack, n in counts.items()})


def render(counts: Counter[str]) -> str:
    """Folded text, stacks sorted (inferno's differential reader wants no particular order)."""
    return "".join(f"{stack} {n}\n" for stack, n in sorted(counts.items()) if n > 0)


def requests_of(row: Row) -> float | None:
    """Requests the server executed in a row's measure stage: its commandstats calls, else
    rps × the measure stage's seconds (None when neither is known)."""
    calls = row.get("server", {}).get("calls")
    if calls:
        return float(calls)
    seconds = row.get("stage_seconds", {}).get("measure")
    rps = row.get("rps")
    return float(rps * seconds) if rps and seconds else None
