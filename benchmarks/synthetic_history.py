"""Synthetic benchmark history in PostgreSQL, bulk-loaded with COPY (for the history and
change-point benchmarks).

Shape: ``commits`` commits (one run each, committed an hour apart, in the commits table) ×
series × TRIALS trials × the 10 common metrics (rps, six latencies, server CPU per request,
usec_per_call, client CPU per request). Series differ by command, data size, pipeline and
clients. Values are lognormal noise (CV ≈ 2%) around a per-series base; every 10th series
has a known step (rps −8%, latencies and CPU +8%) at 60% of the commits, so change-point
code finds something real. Seeded: the same call produces the same data.

``populate(url, values)`` loads about ``values`` metric values into an empty (or migrated)
database at ``url`` (a SQLAlchemy or plain postgresql:// URL), then fills ``metric_summary``
from them with one INSERT … SELECT … GROUP BY (what live writes maintain row by row).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import statistics
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg

from kvperf.store.db import make_engine, parse_url
from kvperf.store.migrations import migrate

METRICS = ("rps", "avg_latency_ms", "min_latency_ms", "p50_latency_ms", "p95_latency_ms",
           "p99_latency_ms", "max_latency_ms", "server.cpu_us_per_request",
           "server.usec_per_call", "client.client_cpu_us_per_request")
BASE = np.array([150_000.0, 0.30, 0.05, 0.28, 0.45, 0.80, 3.0, 4.0, 0.9, 3.0])
STEP_SIGN = np.array([-1.0] + [1.0] * 9)  # a regression: rps down, the rest up
COMMANDS = ("SET", "GET", "INCR", "LPUSH", "HSET", "SADD", "ZADD", "MGET")
TRIALS = 5
STEP = 0.08
NOISE_CV = 0.02
START = datetime(2025, 1, 1, tzinfo=UTC)


def shape(values: int) -> tuple[int, int]:
    """(commits, series) with commits × series × TRIALS × len(METRICS) ≈ values."""
    per_commit_series = TRIALS * len(METRICS)
    commits = max(10, min(1000, values // (per_commit_series * 10)))
    series = max(1, values // (commits * per_commit_series))
    return commits, series


def sha(i: int) -> str:
    return hashlib.sha1(f"synthetic-{i}".encode()).hexdigest()


def series_params(s: int) -> tuple[str, int, int, int]:
    """(command, data_size, pipeline, clients) of series s."""
    return (COMMANDS[s % len(COMMANDS)], (16, 64, 512, 4096)[(s // 8) % 4],
            (1, 16)[(s // 32) % 2], (10, 50, 100)[(s // 64) % 3] + 1000 * (s // 192))


def _connect(url: str) -> psycopg.Connection[tuple[object, ...]]:
    u = parse_url(url)
    return psycopg.connect(host=u.host, port=u.port or 5432, user=u.username,
                           password=u.password, dbname=u.database)


def _values(rng: np.random.Generator, commit: int, commits: int, series: int) -> np.ndarray:
    """Array [series, TRIALS, METRICS] of one commit's values."""
    scale = 1 + (np.arange(series) % 7)[:, None, None] * 0.1
    stepped = ((np.arange(series) % 10 == 0) & (commit >= int(commits * 0.6)))[:, None, None]
    level = BASE[None, None, :] * scale * (1 + STEP * STEP_SIGN[None, None, :] * stepped)
    noise = rng.lognormal(0.0, NOISE_CV, size=(series, TRIALS, len(METRICS)))
    result: np.ndarray = level * noise
    return result


def _copy_text(rows: Iterator[str]) -> bytes:
    buffer = io.StringIO()
    buffer.writelines(rows)
    return buffer.getvalue().encode()


def _write_commit(cur: psycopg.Cursor[tuple[object, ...]], c: int, commits: int,
                  series: int, first_trial: int, rng: np.random.Generator) -> None:
    commit, when = sha(c), START + timedelta(hours=c)
    run_id = c + 1
    cur.execute("INSERT INTO commits (sha, repo, branch, committed_at, author, subject) "
                "VALUES (%s, 'synthetic', 'unstable', %s, 'bench', %s)",
                (commit, when, f"synthetic commit {c}"))
    cur.execute("INSERT INTO runs (id, run_key, label, commit_sha, source, tool, host, "
                "started_at) VALUES (%s, %s, %s, %s, 'synthetic', 'kvload', 'bench', %s)",
                (run_id, f"synthetic-{c}", commit[:12], commit, when))
    trial_lines, metric_lines = [], []
    values = _values(rng, c, commits, series)
    for s in range(series):
        command, size, pipeline, clients = series_params(s)
        key = f"syn{s:06d}"
        for t in range(TRIALS):
            tid = first_trial + s * TRIALS + t
            trial_lines.append(
                f"{tid}\t{run_id}\tsyn-{tid}\t{key}\t{commit}\t{command}\t{size}\t{pipeline}\t"
                f"{clients}\t100000\t1000\tf\tf\t{t + 1}\t{key}\t{commit}\t{when.isoformat()}\t"
                "ok\n")
            metric_lines.extend(f"{tid}\t{name}\t{v:.6g}\n"
                                for name, v in zip(METRICS, values[s, t], strict=True))
    with cur.copy("COPY trials (id, run_id, row_hash, series_key, revision, command, data_size, "
                  "pipeline, clients, requests, keyspacelen, cluster_mode, tls, run_index, "
                  "trial_id, commit_sha, timestamp, status) FROM STDIN") as copy:
        copy.write(_copy_text(iter(trial_lines)))
    with cur.copy("COPY metrics (trial_id, name, value) FROM STDIN") as copy:
        copy.write(_copy_text(iter(metric_lines)))


def _drop_metric_indexes(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """Bulk loads are several times faster into unindexed tables; indexes are rebuilt after."""
    cur.execute("ALTER TABLE metrics DROP CONSTRAINT IF EXISTS metrics_pkey")
    cur.execute("DROP INDEX IF EXISTS ix_metrics_name")


def _create_metric_indexes(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    cur.execute("ALTER TABLE metrics ADD PRIMARY KEY (trial_id, name)")
    cur.execute("CREATE INDEX ix_metrics_name ON metrics (name)")


def _fill_summary(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """metric_summary from every stored value, as migration 2's backfill does."""
    cur.execute("SET LOCAL work_mem = '768MB'")
    cur.execute("INSERT INTO metric_summary (series_key, revision, name, n, total, sumsq, min, "
                "max) SELECT t.series_key, t.revision, m.name, count(*), sum(m.value), "
                "sum(m.value * m.value), min(m.value), max(m.value) FROM metrics m "
                "JOIN trials t ON t.id = m.trial_id WHERE t.status = 'ok' "
                "GROUP BY t.series_key, t.revision, m.name")


def populate(url: str, values: int) -> None:
    """Load ≈ ``values`` synthetic metric values (see module doc) into the database at url."""
    engine = make_engine(parse_url(url))
    migrate(engine)
    engine.dispose()
    commits, series = shape(values)
    rng = np.random.default_rng(20250101)
    with _connect(url) as conn, conn.cursor() as cur:
        cur.execute("SET session_replication_role = replica")  # no per-row FK triggers
        _drop_metric_indexes(cur)
        for c in range(commits):
            _write_commit(cur, c, commits, series, c * series * TRIALS + 1, rng)
            if c % 50 == 49:
                conn.commit()
        _create_metric_indexes(cur)
        _fill_summary(cur)
        for table in ("runs", "trials"):
            cur.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f"(SELECT max(id) FROM {table}))")
        conn.commit()
        cur.execute("ANALYZE")
    conn.close()


@contextlib.contextmanager
def database(url: str | None, name: str) -> Iterator[str]:
    """``url`` if given, else a fresh database on a throwaway cluster (tests/pg.py)."""
    if url:
        yield url
        return
    from tests.pg import running_cluster

    with running_cluster() as cluster:
        yield cluster.create_database(name)


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """(best, median) wall seconds of ``repeat`` calls, and the last call's result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), result
