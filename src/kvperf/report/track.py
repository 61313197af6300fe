"""`kvperf track query`'s table of jobs."""

from __future__ import annotations

from rich.table import Table

from kvperf.store.track import Job


def jobs_table(jobs: list[Job]) -> Table:
    table = Table("id", "sha", "config", "arch", "state", "attempts", "runner", "lease until",
                  "last error")
    for j in jobs:
        lease = j.lease_expires_at.isoformat(timespec="seconds") if j.lease_expires_at else ""
        table.add_row(str(j.id), j.sha[:12], f"{j.config_name} {j.config_hash[:8]}",
                      j.architecture, j.state, f"{j.attempts}/{j.max_attempts}",
                      j.claimed_by or "", lease, j.last_error or "")
    return table
