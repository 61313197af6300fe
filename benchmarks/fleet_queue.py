#!/usr/bin/env python3
"""The definition-job queue at fleet scale: R runner processes on one PostgreSQL claim,
renew and mark J queued definition-shard jobs (store/track.py, the queue `track run` uses)
whose work is only a sleep, while K of the runners are SIGKILLed mid-lease.

Each job sleeps 0.1 s, every 25th 2.5 s: longer than the 2 s lease, so it is kept only by
the runner's renewals (every 0.5 s, fenced by the attempt). A runner claims (timed), sleeps
renewing, marks complete (fenced), logs ``done ID ATTEMPT``, and claims the next; when none
is claimable but jobs are held, it waits (a dead runner's job is claimable once its lease
expires); it stops when none is queued or held. The harness kills K runners, each while it
holds a job, then checks: every job complete, none logged done twice (none run twice, none
lost; a job complete but not logged is one a killed runner marked just before it died), the
killed runners' held jobs taken over at attempt 2. Printed: claim latency
p50/p99 (claims that got a job), the queue's throughput (jobs marked per second, first
claim to last mark), and the ideal throughput of the sleeps alone.

Usage: .venv/bin/python benchmarks/fleet_queue.py [--runners 50] [--jobs 5000] [--kill 5]
       [--url URL]   (default: a throwaway PostgreSQL 15 cluster, tests/pg.py)
Exit status 1 if a check fails.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from sqlalchemy import Engine, delete, select  # noqa: E402

from kvperf.core.errors import StoreError  # noqa: E402
from kvperf.store import track  # noqa: E402
from kvperf.store.db import make_engine, open_store, parse_url  # noqa: E402
from kvperf.store.schema import track_jobs  # noqa: E402

LEASE_S = 2.0
RENEW_S = 0.5
SHORT_S, LONG_S, LONG_EVERY = 0.1, 2.5, 25
URL_ENV = "FLEET_QUEUE_URL"


def job_seconds(job_id: int) -> float:
    return LONG_S if job_id % LONG_EVERY == 0 else SHORT_S


def enqueue(url: str, jobs: int) -> None:
    """``jobs`` definition-shard jobs: 50 shards a commit, as many commits as needed."""
    engine = open_store(parse_url(url))
    shards = [track.DefinitionsJob(f"{s:064x}", (f"defs/d{s}.yml",)).config()
              for s in range(50)]
    commits = [track.TrackedCommit(f"{c:040x}", datetime(2026, 1, 1, tzinfo=UTC), "bench",
                                   f"commit {c}") for c in range(-(-jobs // 50))]
    for start in range(0, len(commits), 20):
        track.enqueue_all(engine, "bench", "unstable", commits[start:start + 20], shards,
                          platform.machine())
    with engine.begin() as conn:  # trim to exactly ``jobs``
        extra = conn.execute(select(track_jobs.c.id).order_by(track_jobs.c.id.desc())
                             .limit(len(commits) * 50 - jobs)).scalars().all()
        conn.execute(delete(track_jobs).where(track_jobs.c.id.in_(extra)))
    engine.dispose()


def worker(url: str, log: str, name: str) -> None:
    """One runner (module doc); one connection; every line written at once (O_APPEND)."""
    engine = make_engine(parse_url(url))
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    while True:
        start = time.perf_counter()
        job = track.claim(engine, name, LEASE_S, definitions_only=True)
        took = time.perf_counter() - start
        if job is None:
            if not track.definitions_in_progress(engine):
                break
            time.sleep(0.2)
            continue
        os.write(fd, f"claimed {job.id} {job.attempts} {took:.6f} {time.time():.6f}\n"
                 .encode())
        try:
            _work(engine, job)
            track.mark(engine, job.id, "complete", attempt=job.attempts)
        except StoreError:
            os.write(fd, f"lost {job.id} {job.attempts}\n".encode())
            continue
        os.write(fd, f"done {job.id} {job.attempts} {time.time():.6f}\n".encode())
    os.close(fd)


def _work(engine: Engine, job: track.Job) -> None:
    """The job's sleep, renewing the lease every RENEW_S (StoreError: taken over)."""
    left = job_seconds(job.id)
    while left > 0:
        time.sleep(min(RENEW_S, left))
        left -= RENEW_S
        if left > 0:
            track.renew(engine, job.id, LEASE_S, attempt=job.attempts)


@dataclass
class Result:
    jobs: int
    runners: int
    killed: list[str]
    claims: list[float]
    done: Counter[int]
    lost: int
    seconds: float
    taken_over: int
    complete: int
    # complete jobs no runner logged done: each must be a killed runner's, killed after
    # its mark and before its log line
    unlogged: dict[int, str]

    @property
    def ok(self) -> bool:
        return (self.complete == self.jobs and len(self.done) + len(self.unlogged) == self.jobs
                and max(self.done.values()) == 1
                and set(self.unlogged.values()) <= set(self.killed)
                and self.taken_over + len(self.unlogged) >= len(self.killed))


def _holding(log: Path) -> bool:
    lines = log.read_text().splitlines() if log.exists() else []
    return bool(lines) and lines[-1].startswith("claimed")


def _kill_some(procs: dict[str, subprocess.Popen[bytes]], logs: Path, kill: int,
               seed: int) -> list[str]:
    """SIGKILL ``kill`` runners (by pid), each while it holds a job, spread over the run."""
    rng = random.Random(seed)
    killed: list[str] = []
    time.sleep(3.0)
    while len(killed) < kill:
        name = rng.choice([n for n in procs if n not in killed])
        if procs[name].poll() is None and _holding(logs / f"{name}.log"):
            os.kill(procs[name].pid, signal.SIGKILL)
            procs[name].wait()
            killed.append(name)
            time.sleep(rng.uniform(0.2, 1.0))
        elif all(p.poll() is not None for n, p in procs.items() if n not in killed):
            break
    return killed


def run(url: str, runners: int, jobs: int, kill: int, logs: Path, seed: int = 1,
        timeout: float = 900) -> Result:
    """Enqueue, start the runners, kill some mid-lease, wait, check (module doc)."""
    enqueue(url, jobs)
    logs.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, URL_ENV: url}  # not in argv: ps would show the password
    procs = {f"r{i:02d}": subprocess.Popen(
        [sys.executable, __file__, "--worker", str(logs / f"r{i:02d}.log"), f"r{i:02d}"],
        env=env) for i in range(runners)}
    killed = _kill_some(procs, logs, kill, seed)
    deadline = time.monotonic() + timeout
    try:
        for name, proc in procs.items():
            if name not in killed:
                left = max(0.1, deadline - time.monotonic())
                assert proc.wait(timeout=left) == 0, f"runner {name} failed"
    finally:
        for proc in procs.values():  # only ours, by pid, when the deadline passed
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return _collect(url, runners, jobs, killed, logs)


def _collect(url: str, runners: int, jobs: int, killed: list[str], logs: Path) -> Result:
    claims: list[float] = []
    done: Counter[int] = Counter()
    lost, starts, ends, taken_over = 0, [], [], 0
    for log in logs.glob("r*.log"):
        for line in log.read_text().splitlines():
            kind, job, attempt, *rest = line.split()
            if kind == "claimed":
                claims.append(float(rest[0]))
                starts.append(float(rest[1]))
                taken_over += int(attempt) > 1
            elif kind == "done":
                done[int(job)] += 1
                ends.append(float(rest[0]))
            else:
                lost += 1
    engine = open_store(parse_url(url))
    complete = track.counts(engine)["complete"]
    unlogged = {j.id: j.claimed_by or "" for j in track.query(engine, limit=jobs + 1)
                if j.id not in done}
    engine.dispose()
    return Result(jobs, runners, killed, claims, done, lost, max(ends) - min(starts),
                  taken_over, complete, unlogged)


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(os.environ[URL_ENV], *sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--kill", type=int, default=5)
    parser.add_argument("--url", help="an existing empty PostgreSQL database (else a temp one)")
    parser.add_argument("--logs", type=Path, default=Path("fleet-queue-logs"))
    args = parser.parse_args()
    from synthetic_history import database

    with database(args.url, "fleet_queue") as url:
        found = run(url, args.runners, args.jobs, args.kill, args.logs)
    ideal = args.runners / statistics.mean(job_seconds(i) for i in range(1, args.jobs + 1))
    print(f"{found.runners} runners, {found.jobs} jobs, killed mid-lease: "
          f"{', '.join(found.killed)}")
    print(f"claim latency: p50 {percentile(found.claims, 50) * 1000:.1f} ms, p99 "
          f"{percentile(found.claims, 99) * 1000:.1f} ms ({len(found.claims)} claims)")
    print(f"throughput: {found.jobs / found.seconds:.1f} jobs/s over {found.seconds:.1f} s "
          f"(the sleeps alone: {ideal:.1f} jobs/s)")
    print(f"complete {found.complete}/{found.jobs}; marked done once: {len(found.done)}, "
          f"twice or more: {sum(1 for n in found.done.values() if n > 1)}; taken over "
          f"after a lease expired: {found.taken_over}; lost claims: {found.lost}; complete "
          f"but not logged (runner killed between mark and log): {len(found.unlogged)}")
    print("OK" if found.ok else "FAILED")
    return 0 if found.ok else 1


if __name__ == "__main__":
    sys.exit(main())
