"""Client libraries side by side (pure): one line per client × workload over its runs —
median rps, latency from the runs' merged histograms (never averaged percentiles; a
closed-loop harness's are uncorrected for coordinated omission, kvload's corrected), the
median client CPU per operation in the measured window and the process total beside it,
server CPU, the server's calls per read (implicit batching marked), peak RSS and bytes
allocated per operation (``≈`` where the runtime only approximates) — and, where kvload ran
the same workload (``run --client kvload``), each client's rps and client CPU per operation
as a ratio to kvload's: the reference line (docs/CLIENTS.md)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kvperf.analysis.distributions import stdtrit
from kvperf.results.histogram import HistogramFile, merged_latency
from kvperf.results.records import HarnessRecord
from kvperf.results.row import Row, is_timed

CLIENT_KEYS = ("client", "library", "version", "language", "runtime", "concurrency")
WORKLOAD_FIELDS = ("command", "data_size", "pipeline", "clients", "requests", "duration",
                   "keyspacelen", "warmup", "tls", "io_threads")
KVLOAD = "kvload"


@dataclass(frozen=True)
class ClientLine:
    """One client (or kvload) on one workload over its timed runs."""

    workload: str
    client: str
    runs: int
    rps: float
    p50_ms: float | None
    p99_ms: float | None
    p99_9_ms: float | None
    client_cpu_us: float | None  # per operation (kvload: per request)
    server_cpu_us: float | None
    rss_mib: float | None
    allocations: str  # "312 B", "≈1,020 B" (approximate), "not measured" (kvload)
    rps_ratio: float | None = None  # to kvload on the same workload
    cpu_ratio: float | None = None
    side: str | None = None  # the row's side (compare --client), None in a run
    rps_runs: tuple[float, ...] = ()
    rps_ci: tuple[float, float] | None = None  # 95% t interval of the mean rps (≥ 2 runs)
    latency: str | None = None  # corrected (kvload) or uncorrected (a closed-loop harness)
    process_cpu_us: float | None = None  # a harness's process tree per op (wait4, warmup in)
    calls_per_read: float | None = None  # the server's, over the harness's run
    batching: str | None = None  # clients/wire.py's verdict: implicit, pipelined …


def mean_ci(values: tuple[float, ...]) -> tuple[float, float] | None:
    """The 95% Student t interval of the mean (None under 2 values): mean ± t(0.975, n−1)
    · s / √n."""
    if len(values) < 2:
        return None
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    half = float(stdtrit(len(values) - 1, 0.975)) * sd / math.sqrt(len(values))
    return mean - half, mean + half


def _median(values: Iterable[float | int | None]) -> float | None:
    found = [float(v) for v in values if v is not None]
    return statistics.median(found) if found else None


def _workload_key(row: Row) -> tuple[object, ...]:
    rest = {k: v for k, v in (row.get("config_set") or {}).items() if k not in CLIENT_KEYS}
    return (row.get("side"), *(row.get(f) for f in WORKLOAD_FIELDS),
            tuple(sorted(rest.items())))


def _client(row: Row) -> str:
    harness = row.get("harness")
    if not harness:
        return f"{row.get('tool', KVLOAD)} {row.get('tool_version', '')}".strip()
    return f"{harness.get('name')} {harness.get('version')} {harness.get('model')}"


def _workload(row: Row) -> str:
    """``SET d=100 P=1 c=1``, ``… at 2000/s`` for an open-loop trial at a fixed rate."""
    rate = (row.get("config_set") or {}).get("rate")
    return (f"{row['command']} d={row['data_size']} P={row['pipeline']} "
            f"c={row['clients']}" + (f" at {rate}" if rate else ""))


def _line(group: list[Row], histograms: Callable[[Row], HistogramFile | None]) -> ClientLine:
    merged = merged_latency([histograms(r) for r in group])
    latency: list[float | None] = [None, None, None]
    kind = None
    if merged is not None:
        hist, scale, found = merged
        latency = [hist.get_value_at_percentile(q) * scale for q in (50.0, 99.0, 99.9)]
        kind = "corrected" if found == "corrected" else "uncorrected"
    harnesses = [r.get("harness") or {} for r in group]
    wires = [w for h in harnesses if (w := h.get("wire"))]
    batching = [str(w.get("batching")) for w in wires]
    runs = tuple(float(r.get("rps") or 0.0) for r in group)
    return ClientLine(
        _workload(group[0]), _client(group[0]), len(group),
        statistics.median(runs),
        latency[0], latency[1], latency[2],
        _median((r.get("client") or {}).get("client_cpu_us_per_request") for r in group),
        _median((r.get("server") or {}).get("cpu_us_per_request") for r in group),
        _median(h.get("max_rss_kib") for h in harnesses if h.get("max_rss_kib")),
        allocations(harnesses),
        side=group[0].get("side"), rps_runs=runs, rps_ci=mean_ci(runs),
        latency=kind,
        process_cpu_us=_median(h.get("process_cpu_us_per_op") for h in harnesses),
        calls_per_read=_median(w.get("calls_per_read") for w in wires),
        batching=max(set(batching), key=batching.count) if batching else None)


APPROXIMATE = "≈"  # an allocation figure its runtime can only approximate


def allocations(harnesses: Sequence[HarnessRecord]) -> str:
    """The median allocations per operation over the runs: bytes (``312 B``), ``≈`` before
    a figure the runtime only approximates, an older harness's count in its own unit;
    ``not reported`` (a harness without) or ``not measured`` (kvload's line)."""
    found = [a for h in harnesses if isinstance(a := h.get("allocations"), dict)]
    if not found:
        return "not reported" if any(harnesses) else "not measured"
    per_op = statistics.median(float(str(a["per_op"])) for a in found)
    unit = str(found[0]["unit"])
    if unit != "bytes":
        return f"{per_op:,.2f} {unit}"
    mark = "" if all(a.get("exact") is True for a in found) else APPROXIMATE
    return f"{mark}{per_op:,.0f} B" if per_op >= 10 else f"{mark}{per_op:.1f} B"


def client_lines(rows: list[Row], histograms: Callable[[Row], HistogramFile | None]
                 ) -> list[ClientLine]:
    """Every client × workload of the rows (none without a client's row), kvload's line
    first in each workload, the others with their ratios to it."""
    if not any(r.get("harness") for r in rows):
        return []
    groups: dict[tuple[object, ...], dict[str, list[Row]]] = {}
    for row in rows:
        if is_timed(row) and row.get("rps"):
            groups.setdefault(_workload_key(row), {}).setdefault(_client(row), []).append(row)
    out: list[ClientLine] = []
    for clients in groups.values():
        lines = [_line(g, histograms) for g in clients.values()]
        lines = [_with_rss(line) for line in lines]
        reference = next((ln for ln, g in zip(lines, clients.values(), strict=True)
                          if not g[0].get("harness")), None)
        out.extend(_ratios(line, reference) for line in lines)
    return out


def _with_rss(line: ClientLine) -> ClientLine:
    rss = line.rss_mib / 1024 if line.rss_mib is not None else None
    return ClientLine(**{**line.__dict__, "rss_mib": rss})


def _ratios(line: ClientLine, reference: ClientLine | None) -> ClientLine:
    if reference is None or line is reference:
        return line
    cpu = (line.client_cpu_us / reference.client_cpu_us
           if line.client_cpu_us and reference.client_cpu_us else None)
    return ClientLine(**{**line.__dict__, "rps_ratio": line.rps / reference.rps
                         if reference.rps else None, "cpu_ratio": cpu})
