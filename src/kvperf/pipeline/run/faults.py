"""A trial's fault schedule (config ``faults``) around its measure stage: the nodes it acts
on, the load run under it (``FaultRun.measure``), and afterwards the row's ``failover``
record — the faults as executed lined up with kvload's timeline, and the acknowledged
writes the primary after the failover lacks (driver/kvload.checks_writes says when).

A trial with faults expects errors and dead nodes: its row skips the checks that assume a
healthy server (executed ratio, hit ratio, error replies, server health) and says so in
``checks.relaxed_for_faults``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from kvperf.config.faults import Fault
from kvperf.core.errors import DriverError, ServerError
from kvperf.driver.kvload import ACK_LOG
from kvperf.results.failover import failover_record
from kvperf.server.faults import FaultNode, FaultSchedule, lost_writes
from kvperf.server.instance import ServerGroup
from kvperf.server.resp import ConnectionLost, Endpoint, RespError

T = TypeVar("T")

RELAXED = ("executed_ratio", "hit_ratio", "error_replies", "server_health")
TAKES_OVER = ("promote", "failover")  # actions after which the replica is the primary


def fault_run(faults: tuple[Fault, ...], group: object, log_dir: Path) -> FaultRun:
    """A trial's schedule over the servers kvperf started for it here (a ServerGroup: a
    fault signals its nodes by pid)."""
    if not isinstance(group, ServerGroup):
        raise DriverError("'faults' need servers kvperf starts on this host")
    return FaultRun(FaultSchedule(faults, fault_nodes(group)), group, log_dir)


def fault_nodes(group: ServerGroup) -> dict[str, FaultNode]:
    """The nodes a standalone schedule names: ``primary`` (restartable on its port) and,
    with replicas, ``replica`` (the first)."""
    nodes = {"primary": FaultNode(group.endpoints[0], lambda: group.nodes[0].process.pid,
                                  restart=lambda: group.respawn(0))}
    if group.replicas:
        nodes["replica"] = FaultNode(group.replica_endpoints[0],
                                     lambda: group.replicas[0].process.pid)
    return nodes


@dataclass
class FaultRun:
    """One trial's schedule over ``group``'s nodes; ``log_dir`` holds kvload's report and
    ack log."""

    schedule: FaultSchedule
    group: ServerGroup
    log_dir: Path

    def measure(self, load: Callable[[], T]) -> T:
        """``load`` (the measure stage) while the faults run at their times."""
        return self.schedule.run(load)

    def spare_killed(self) -> None:
        """The nodes the schedule killed (and did not start again) are no failure of the
        group's health check: their death is what the trial measured."""
        for done in self.schedule.executed:
            if done.fault.action == "kill":
                self.group.faulted.add(self.schedule.nodes[done.fault.target].pid())

    def primary_after(self) -> Endpoint:
        """Where the writes live after the schedule: the replica once a promotion or
        failover succeeded, else the primary (back after a restart)."""
        for done in reversed(self.schedule.executed):
            if done.fault.action in TAKES_OVER and done.error is None:
                return self.schedule.nodes[done.fault.target].endpoint
        return self.schedule.nodes["primary"].endpoint

    def record(self) -> dict[str, Any]:
        """The row's ``failover`` record (results/failover.py) with the lost-write count
        when kvload logged acknowledged writes (``lost_writes_error`` if it could not be
        read)."""
        report = json.loads((self.log_dir / "kvload.json").read_text())
        timeline = report["tests"][0].get("timeline") or {"start_unix_ms": 0}
        acks = self.log_dir / ACK_LOG
        writes, problem = None, None
        if acks.is_file():
            try:
                writes = lost_writes(self.primary_after(), acks)
            except (ConnectionLost, RespError, ServerError, OSError) as exc:
                problem = f"acknowledged writes not checked: {exc}"
        record = failover_record([e.record() for e in self.schedule.executed], timeline,
                                 writes)
        if problem:
            record["lost_writes_error"] = problem
        return record
