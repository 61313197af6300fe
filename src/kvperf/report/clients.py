"""The client libraries' table, on the terminal and as markdown (a PR comment): a line per
client × workload, with rps and client CPU per operation as ratios to kvload's on the same
workload when it ran (analysis/clients.py)."""

from __future__ import annotations

from rich.table import Table

from kvperf.analysis.clients import ClientLine


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}×"


def clients_table(lines: list[ClientLine], title: str = "Client libraries") -> Table:
    table = Table(title=f"{title} (ratios to kvload on the same workload)")
    for column in ("workload", "client", "runs", "rps", "× kvload", "p50 ms", "p99 ms",
                   "p99.9 ms", "client CPU µs/op", "× kvload", "server CPU µs/op",
                   "RSS MiB", "alloc/op"):
        table.add_column(column, justify="left" if column in ("workload", "client")
                         else "right")
    for ln in lines:
        table.add_row(ln.workload, ln.client, str(ln.runs), f"{ln.rps:,.0f}",
                      _ratio(ln.rps_ratio), _num(ln.p50_ms), _num(ln.p99_ms),
                      _num(ln.p99_9_ms), _num(ln.client_cpu_us, 2), _ratio(ln.cpu_ratio),
                      _num(ln.server_cpu_us, 2), _num(ln.rss_mib, 1),
                      ln.allocations or "-")
    return table


MARKDOWN_HEADER = ("workload", "client", "runs", "rps", "rps 95% CI", "× kvload", "p99 ms",
                   "client CPU µs/op", "× kvload", "server CPU µs/op", "allocations/op")


def clients_markdown(lines: list[ClientLine]) -> str:
    """The client table as markdown (sides named when there are several)."""
    multi = len({ln.side for ln in lines}) > 1
    rows = [" | ".join(MARKDOWN_HEADER), " | ".join("---" for _ in MARKDOWN_HEADER)]
    for ln in lines:
        ci = "–" if ln.rps_ci is None else f"{ln.rps_ci[0]:,.0f} – {ln.rps_ci[1]:,.0f}"
        client = f"{ln.side}: {ln.client}" if multi and ln.side else ln.client
        rows.append(" | ".join((ln.workload, client, str(ln.runs), f"{ln.rps:,.0f}", ci,
                                _ratio(ln.rps_ratio), _num(ln.p99_ms), _num(ln.client_cpu_us, 2),
                                _ratio(ln.cpu_ratio), _num(ln.server_cpu_us, 2),
                                ln.allocations or "-")))
    return ("### Client libraries\n\n" + "\n".join(f"| {r} |" for r in rows) + "\n\n"
            "Ratios to kvload on the same workload; latency as the application sees it "
            "(docs/CLIENTS.md).\n")
