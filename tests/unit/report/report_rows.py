"""Synthetic result rows with HDR histograms for the report's unit tests."""

from __future__ import annotations

from typing import Any

from hdrh.histogram import HdrHistogram

from kvperf.report.model import Source


def encoded(values_us: list[int]) -> str:
    h = HdrHistogram(1, 60_000_000, 3)
    for v in values_us:
        h.record_value(v)
    return h.encode().decode()


def row(command: str, run: int, rps: float, p99: float, **extra: Any) -> dict[str, Any]:
    base = {"kvperf_format": 3, "timestamp": f"2026-01-01T00:00:0{run}+00:00", "label": "x",
            "command": command, "data_size": 64, "pipeline": 16, "clients": 50,
            "requests": None, "duration": 1, "keyspacelen": 1000, "rps": rps,
            "avg_latency_ms": p99 / 3, "min_latency_ms": 0.01, "p50_latency_ms": p99 / 4,
            "p95_latency_ms": p99 / 2, "p99_latency_ms": p99, "max_latency_ms": p99 * 2,
            "cluster_mode": False, "tls": False, "io_threads": 1, "warmup": 0,
            "benchmark_threads": 1, "config_set": None, "run": run,
            "trial_id": f"id-{command}", "tool": "kvload", "tool_version": "0.1",
            "server_version": "valkey 8.0.1", "status": "ok", "error": None,
            "client_saturated": False, "histogram_file": f"trials/{command}-{run}.json",
            "revision": "valkey 8.0.1@abc", "measure": "timing", "instructions": None,
            "env": {"host": "box", "kernel": "Linux 6.1", "cpu": "Test CPU", "cpus": 2,
                    "arch": "x86_64", "python": "3.11.2", "server_binary": "/usr/bin/valkey-server",
                    "server_source": "--server-bin",
                    "governor": "performance", "tool": "kvload 0.1",
                    "pinning": {"server": "0", "client": "1"}}}
    return {**base, **extra}


def side(name: str, scale: float, **extra: Any) -> Source:
    """Three runs of SET and GET; rps scaled by ``scale``, latency by its inverse."""
    rows = [row(c, r, 100_000 * scale * (1 + 0.01 * r), 1.0 / scale, **extra)
            for r in range(3) for c in ("SET", "GET")]
    histograms = {r["histogram_file"]: {
        "unit": "us", "significant_figures": 3,
        "corrected": encoded([int(200 / scale)] * 900 + [int(1000 / scale)] * 99 + [5000]),
        "service": encoded([int(150 / scale)] * 990 + [800] * 10)} for r in rows}
    return Source(name, f"results/{name}/metrics.json", rows,
                  lambda r: histograms.get(r.get("histogram_file")))


def with_pipeline_1(source: Source) -> Source:
    """The side with its series also at pipeline 1, at a quarter of the rps (same latency
    histograms): a sweep of P."""
    extra = [{**r, "pipeline": 1, "trial_id": f"{r['trial_id']}-P1", "rps": r["rps"] / 4}
             for r in source.rows]
    return Source(source.name, source.path, source.rows + extra, source.histograms)
