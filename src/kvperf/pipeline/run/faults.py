"""A trial's fault schedule (config ``faults``) around its measure stage: the nodes it acts
on, the load run under it (``FaultRun.measure``), and afterwards the row's ``failover``
record — the faults as executed lined up with kvload's timeline, and the acknowledged
writes the primary after the failover lacks (driver/kvload.checks_writes says when).

A trial with faults expects errors and dead nodes: its row skips the checks that assume a
healthy server (executed ratio, hit ratio, error replies, server health) and says so in
``checks.relaxed_for_faults``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from kvperf.config.faults import Fault
from kvperf.core.errors import DriverError, ServerError
from kvperf.driver.kvload import ACK_LOG
from kvperf.results.failover import failover_record
from kvperf.server.cluster import slot_ranges
from kvperf.server.faults import (
    FaultNode,
    FaultSchedule,
    lost_writes,
    lost_writes_cluster,
    wait_taken_over,
)
from kvperf.server.instance import Node, ServerGroup
from kvperf.server.resp import ConnectionLost, Endpoint, RespError

T = TypeVar("T")

RELAXED = ("executed_ratio", "hit_ratio", "error_replies", "server_health")
TAKES_OVER = ("promote", "failover")  # actions after which the replica is the primary


def fault_run(faults: tuple[Fault, ...], group: object, log_dir: Path) -> FaultRun:
    """A trial's schedule over the servers kvperf started for it here (a ServerGroup: a
    fault signals its nodes by pid)."""
    if not isinstance(group, ServerGroup):
        raise DriverError("'faults' need servers kvperf starts on this host")
    nodes = (cluster_nodes(group, faults) if group.setup.cluster_mode
             else fault_nodes(group))
    return FaultRun(FaultSchedule(faults, nodes), group, log_dir)


def cluster_nodes(group: ServerGroup, faults: tuple[Fault, ...]) -> dict[str, FaultNode]:
    """The nodes a cluster schedule names: ``primary-of-slot N`` (the primary kvperf gave
    slot N), ``primary`` (of the first slot the schedule names, else slot 0) and
    ``replica`` (that primary's first replica). A kill of a primary with a replica, and a
    replica's CLUSTER FAILOVER, end when a live node's slot map names the new primary."""
    slots = [f.slot for f in faults if f.slot is not None] or [0]
    ranges = slot_ranges(len(group.nodes))
    per = group.setup.replicas
    everyone = [*group.endpoints, *group.replica_endpoints]
    nodes: dict[str, FaultNode] = {}
    for fault in faults:
        slot = fault.slot if fault.slot is not None else slots[0]
        i = next(k for k, (lo, hi) in enumerate(ranges) if lo <= slot <= hi)
        primary = group.endpoints[i]

        settle = functools.partial(wait_taken_over, everyone, slot, primary)
        if fault.target == "replica":
            nodes["replica"] = FaultNode(group.replica_endpoints[i * per],
                                         functools.partial(_pid, group.replicas, i * per),
                                         settle=settle)
        else:
            nodes[fault.target] = FaultNode(primary, functools.partial(_pid, group.nodes, i),
                                            restart=functools.partial(group.respawn, i),
                                            settle=settle if per else None)
    return nodes


def _pid(nodes: list[Node], k: int) -> int:
    """Node k's current pid (a restart replaces the node)."""
    return nodes[k].process.pid


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

    def _lost(self, acks: Path) -> tuple[int, int]:
        """(acknowledged, lost) on the primaries after the schedule: in a cluster each
        key on the node serving its slot now."""
        if self.group.setup.cluster_mode:
            live = [*self.group.endpoints, *self.group.replica_endpoints]
            return lost_writes_cluster(live, acks)
        return lost_writes(self.primary_after(), acks)

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
                writes = self._lost(acks)
            except (ConnectionLost, RespError, ServerError, OSError) as exc:
                problem = f"acknowledged writes not checked: {exc}"
        record = failover_record([e.record() for e in self.schedule.executed], timeline,
                                 writes)
        if problem:
            record["lost_writes_error"] = problem
        return record
