"""Synthetic benchmark history pushed through the real import path (``db push``).

Each commit gets a seed-format metrics.json (``<dir>/<sha>/metrics.json``, TRIALS rows per
series) with known values, and a ``commits`` row whose committed_at gives the commit order.
Trials are timestamped in a *shuffled* order (runners measure commits out of order), so a
test can tell ordering by commit time from ordering by measurement time.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine

from kvperf.store.push import push_file
from kvperf.store.track import TrackedCommit, record_commits

T0 = datetime(2025, 3, 1, tzinfo=UTC)
TRIALS = 3
Level = Callable[[int], float]  # commit index → level of a metric


def sha(i: int) -> str:
    return hashlib.sha1(f"commit-{i}".encode()).hexdigest()


def commit_time(i: int) -> datetime:
    return T0 + timedelta(hours=i)


def seed_row(i: int, trial: int, command: str, rps: float, p99: float,
             measured_at: datetime) -> dict[str, object]:
    return {"timestamp": measured_at.isoformat(), "commit": sha(i), "command": command,
            "data_size": 64, "pipeline": 16, "clients": 50, "requests": 100000,
            "keyspacelen": 10000, "rps": rps, "avg_latency_ms": p99 / 3,
            "min_latency_ms": 0.01, "p50_latency_ms": p99 / 4, "p95_latency_ms": p99 / 1.5,
            "p99_latency_ms": p99, "max_latency_ms": p99 * 3, "cluster_mode": False,
            "tls": False, "trial": trial}


def populate(engine: Engine, root: Path, commits: int, series: dict[str, tuple[Level, Level]],
             noise: float = 0.01, record: bool = True, seed: int = 7,
             env: Callable[[int], dict[str, str]] | None = None) -> list[str]:
    """Push ``commits`` commits of every series (command → (rps level, p99 level)); returns
    the shas in commit order. ``record`` False leaves the commits table empty; ``env``:
    commit index → the rows' env (none by default)."""
    rng = random.Random(seed)
    measured = list(range(commits))
    rng.shuffle(measured)
    for i in range(commits):
        rows = []
        for command, (rps, p99) in series.items():
            for t in range(TRIALS):
                when = T0 + timedelta(days=30, minutes=measured[i] * 10 + t)
                rows.append(seed_row(i, t, command, rps(i) * (1 + rng.gauss(0, noise)),
                                     p99(i) * (1 + rng.gauss(0, noise)), when))
        for row in rows if env else []:
            row["env"] = env(i)
        path = root / sha(i) / "metrics.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(rows))
        push_file(engine, path)
    if record:
        with engine.begin() as conn:
            record_commits(conn, "synthetic", "unstable",
                           [TrackedCommit(sha(i), commit_time(i), "a", f"change {i}")
                            for i in range(commits)])
    return [sha(i) for i in range(commits)]
