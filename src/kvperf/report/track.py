"""`kvperf track query`'s table of jobs and `track status`'s corpus progress per commit."""

from __future__ import annotations

from rich.table import Table

from kvperf.store.track import COMPLETE, FAILED, IN_PROGRESS, QUEUED, CorpusProgress, Job


def jobs_table(jobs: list[Job]) -> Table:
    table = Table("id", "sha", "config", "arch", "state", "attempts", "runner", "lease until",
                  "last error")
    for j in jobs:
        lease = j.lease_expires_at.isoformat(timespec="seconds") if j.lease_expires_at else ""
        table.add_row(str(j.id), j.sha[:12], f"{j.config_name} {j.config_hash[:8]}",
                      j.architecture, j.state, f"{j.attempts}/{j.max_attempts}",
                      j.claimed_by or "", lease, j.last_error or "")
    return table


def corpus_table(found: list[CorpusProgress]) -> Table:
    """Per commit: its definition jobs complete, failed, running, queued, and whether the
    corpus is done (every job complete or failed at its retry cap)."""
    table = Table("sha", "jobs", "complete", "failed", "in progress", "queued", "corpus",
                  title="definition corpus per commit")
    for p in found:
        table.add_row(p.sha[:12], str(p.jobs), str(p.counts[COMPLETE]), str(p.counts[FAILED]),
                      str(p.counts[IN_PROGRESS]), str(p.counts[QUEUED]),
                      "done" if p.done else "pending")
    return table
