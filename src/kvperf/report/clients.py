"""The client libraries' table, on the terminal and as markdown (a PR comment): a line per
client × workload, with rps and client CPU per operation as ratios to kvload's on the same
workload when it ran (analysis/clients.py). Latency says which it is (a closed-loop
harness's is uncorrected for coordinated omission, kvload's corrected); client CPU per
operation is the measured window's, the harness's process total beside it; calls per read
are the server's, marked ``implicit`` where calls of several batches shared reads and ``per
command`` where a batch was written command by command; allocations are bytes per operation
from the harness's untimed allocation pass, ``≈`` marking a runtime's approximation."""

from __future__ import annotations

from rich.table import Table

from kvperf.analysis.clients import ClientLine

NOTE = ("Ratios to kvload on the same workload; latency as the application sees it, "
        "uncorrected for coordinated omission in a closed-loop harness (kvload's is "
        "corrected); client CPU per operation in the measured window, the harness's whole "
        "process (wait4: start-up and warmup included) beside it; calls per read as the "
        "server counted them — implicit: several calls or batches per read; per command: a "
        "batch written command by command; allocations: bytes per operation in an untimed "
        "pass after the measured window, ≈ where the runtime only approximates them "
        "(docs/CLIENTS.md).")


MARKS = {"implicit": " implicit", "written per command": " per command"}


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}×"


def calls_per_read(line: ClientLine) -> str:
    """The server's calls per read, ``implicit`` and ``per command`` (batches written
    command by command) marked; - for kvload's line."""
    if line.calls_per_read is None:
        return "-"
    mark = MARKS.get(line.batching or "", "")
    return f"{line.calls_per_read:,.1f}{mark}"


def clients_table(lines: list[ClientLine], title: str = "Client libraries") -> Table:
    table = Table(title=f"{title} (ratios to kvload on the same workload)", caption=NOTE)
    for column in ("workload", "client", "runs", "rps", "× kvload", "p50 ms", "p99 ms",
                   "p99.9 ms", "latency", "calls/read", "client CPU µs/op", "× kvload",
                   "process CPU µs/op", "server CPU µs/op", "RSS MiB", "alloc/op"):
        words = column in ("workload", "client", "latency")
        table.add_column(column, justify="left" if words else "right",
                         no_wrap=words or column in ("calls/read", "alloc/op"))
    for ln in lines:
        table.add_row(ln.workload, ln.client, str(ln.runs), f"{ln.rps:,.0f}",
                      _ratio(ln.rps_ratio), _num(ln.p50_ms), _num(ln.p99_ms),
                      _num(ln.p99_9_ms), ln.latency or "-", calls_per_read(ln),
                      _num(ln.client_cpu_us, 2), _ratio(ln.cpu_ratio),
                      _num(ln.process_cpu_us, 2), _num(ln.server_cpu_us, 2),
                      _num(ln.rss_mib, 1), ln.allocations)
    return table


MARKDOWN_HEADER = ("workload", "client", "runs", "rps", "rps 95% CI", "× kvload", "p99 ms",
                   "latency", "calls/read", "client CPU µs/op", "× kvload",
                   "process CPU µs/op", "server CPU µs/op", "allocations/op")


def clients_markdown(lines: list[ClientLine]) -> str:
    """The client table as markdown (sides named when there are several)."""
    multi = len({ln.side for ln in lines}) > 1
    rows = [" | ".join(MARKDOWN_HEADER), " | ".join("---" for _ in MARKDOWN_HEADER)]
    for ln in lines:
        ci = "–" if ln.rps_ci is None else f"{ln.rps_ci[0]:,.0f} – {ln.rps_ci[1]:,.0f}"
        client = f"{ln.side}: {ln.client}" if multi and ln.side else ln.client
        rows.append(" | ".join((ln.workload, client, str(ln.runs), f"{ln.rps:,.0f}", ci,
                                _ratio(ln.rps_ratio), _num(ln.p99_ms), ln.latency or "-",
                                calls_per_read(ln), _num(ln.client_cpu_us, 2),
                                _ratio(ln.cpu_ratio), _num(ln.process_cpu_us, 2),
                                _num(ln.server_cpu_us, 2), ln.allocations)))
    return ("### Client libraries\n\n" + "\n".join(f"| {r} |" for r in rows) + "\n\n"
            + NOTE + "\n")
