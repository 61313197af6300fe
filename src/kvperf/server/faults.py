"""Runs a fault schedule (config/faults.py) against nodes kvperf started while a load runs:
each action at its time, with the wall time it happened (``Executed``), which the failover
record lines up with the load's timeline (results/failover.py).

Only processes kvperf started are signalled, by pid. A node left paused when the schedule
ends (the stage finished first, or an error) is continued, so stopping it works.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypedDict, TypeVar

from kvperf.config.faults import Fault
from kvperf.core.errors import ServerError
from kvperf.core.keyslot import key_slot
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient, RespError

T = TypeVar("T")
TAKEOVER_TIMEOUT = 30.0  # a cluster replica's promotion (node timeout + election)


@dataclass
class FaultNode:
    """A node a fault can act on: where it listens, its current pid (a restart changes
    it), and how to start it again on the same port (None: it cannot be restarted)."""

    endpoint: Endpoint
    pid: Callable[[], int]
    restart: Callable[[], None] | None = None
    # After a kill or a failover: returns once the node's part is taken over (a cluster
    # primary's slots served by its replica); the fault's end time is then.
    settle: Callable[[], None] | None = None


class ExecutedRecord(TypedDict):
    """An executed fault as the row's ``failover.faults`` entries hold it (before
    results/failover.py adds its ``window``)."""

    at_s: float
    action: str
    target: str
    seconds: float | None
    started_unix: float
    ended_unix: float
    error: str | None


@dataclass(frozen=True)
class Executed:
    """A fault as it happened: wall-clock start (and end: a pause's SIGCONT, a restart's
    node answering again), or the error that stopped it."""

    fault: Fault
    started_unix: float
    ended_unix: float
    error: str | None = None

    def record(self) -> ExecutedRecord:
        return {"at_s": self.fault.at, "action": self.fault.action,
                "target": self.fault.target, "seconds": self.fault.seconds,
                "started_unix": round(self.started_unix, 4),
                "ended_unix": round(self.ended_unix, 4), "error": self.error}


@dataclass
class _Outcome(Generic[T]):
    """What the load's worker thread returned (a list of one: T may be None) or raised."""

    value: list[T] = field(default_factory=list)
    error: BaseException | None = None


@dataclass
class FaultSchedule:
    """``FaultSchedule(faults, nodes).run(load)`` runs ``load`` (the measure stage) in a
    worker thread while this thread performs the faults at their times (seconds from the
    start); ``executed`` lists what happened. Faults still due when the load ends are not
    run. ``nodes`` maps a target (``primary``, ``replica``) to its node.

    The faults run in the calling thread, not the load's: a node restarted here gets
    SIGKILL from the kernel when the thread that started it ends (PR_SET_PDEATHSIG,
    core/proc.py), so it must be the long-lived one.
    """

    faults: tuple[Fault, ...]
    nodes: dict[str, FaultNode]
    executed: list[Executed] = field(default_factory=list)
    _done: threading.Event = field(default_factory=threading.Event)
    _paused: set[int] = field(default_factory=set)

    def run(self, load: Callable[[], T]) -> T:
        box: _Outcome[T] = _Outcome()

        def work() -> None:
            try:
                box.value = [load()]
            except BaseException as exc:  # re-raised in the calling thread
                box.error = exc
            finally:
                self._done.set()

        worker = threading.Thread(target=work, daemon=True, name="kvperf-load")
        start = time.monotonic()
        worker.start()
        try:
            self._run(start)
        finally:
            for pid in list(self._paused):
                _signal(pid, signal.SIGCONT)
            self._paused.clear()
            worker.join()
        if box.error is not None:
            raise box.error
        return box.value[0]

    def _run(self, start: float) -> None:
        for fault in self.faults:
            if self._done.wait(max(0.0, start + fault.at - time.monotonic())):
                return
            began = time.time()
            try:
                self._act(fault)
                error = None
            except (ServerError, RespError, OSError) as exc:
                error = str(exc)
            self.executed.append(Executed(fault, began, time.time(), error))

    def _node(self, fault: Fault) -> FaultNode:
        node = self.nodes.get(fault.target)
        if node is None:
            raise ServerError(f"fault '{fault.text()}': no node is {fault.target!r} here")
        return node

    def _act(self, fault: Fault) -> None:
        """One action, synchronously (a pause lasts its seconds, a restart until the node
        answers PING again)."""
        node = self._node(fault)
        if fault.action == "kill":
            _signal(node.pid(), signal.SIGKILL)
            if node.settle is not None:
                node.settle()
        elif fault.action == "pause":
            pid = node.pid()
            _signal(pid, signal.SIGSTOP)
            self._paused.add(pid)
            self._done.wait(fault.seconds or 0.0)
            _signal(pid, signal.SIGCONT)
            self._paused.discard(pid)
        elif fault.action == "restart":
            if node.restart is None:
                raise ServerError(f"fault '{fault.text()}': this node cannot be restarted")
            _signal(node.pid(), signal.SIGKILL)
            node.restart()
        elif fault.action == "promote":
            _call(node.endpoint, "REPLICAOF", "NO", "ONE")
        elif fault.action == "failover":
            _call(node.endpoint, "CLUSTER", "FAILOVER")
            if node.settle is not None:
                node.settle()
        else:
            raise ServerError(f"fault '{fault.text()}': unknown action")


def lost_writes(endpoint: Endpoint, ack_log: Path, batch: int = 2000) -> tuple[int, int]:
    """(acknowledged, lost): of the keys kvload's ``--ack-log`` lists (each acknowledged
    write, unique keys), how many ``endpoint`` (the primary after the failover) lacks."""
    keys = [k for k in ack_log.read_text().splitlines() if k]
    found = 0
    with RespClient(endpoint, timeout=30.0) as client:
        for at in range(0, len(keys), batch):
            reply = client.call("EXISTS", *keys[at:at + batch])
            found += reply if isinstance(reply, int) else 0
    return len(keys), len(keys) - found


def slot_table(endpoints: Sequence[Endpoint]) -> list[tuple[int, int, Endpoint]]:
    """(first slot, last slot, primary) of the CLUSTER SLOTS of the first of
    ``endpoints`` that answers (empty: none answers)."""
    for endpoint in endpoints:
        try:
            with RespClient(endpoint, timeout=1.0) as client:
                reply = client.call("CLUSTER", "SLOTS")
        except (ConnectionLost, RespError, OSError):
            continue
        if not isinstance(reply, list):
            continue
        return [_range(e, endpoint) for e in reply if isinstance(e, list)]
    return []


def _range(entry: list[Any], asked: Endpoint) -> tuple[int, int, Endpoint]:
    """One CLUSTER SLOTS entry: [first, last, [host, port, id], replicas...]."""
    host, port = entry[2][0], entry[2][1]
    return (int(entry[0]), int(entry[1]),
            Endpoint(host.decode(), int(port), asked.tls_ca, asked.password))


def _owner(table: list[tuple[int, int, Endpoint]], slot: int) -> Endpoint | None:
    return next((e for lo, hi, e in table if lo <= slot <= hi), None)


def wait_taken_over(endpoints: Sequence[Endpoint], slot: int, old: Endpoint,
                    timeout: float = TAKEOVER_TIMEOUT) -> None:
    """Until a node other than ``old`` serves ``slot`` in a live node's view (a replica
    promoted after its primary's kill or a CLUSTER FAILOVER); ServerError after
    ``timeout``."""
    others = [e for e in endpoints if e.port != old.port]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        owner = _owner(slot_table(others), slot)
        if owner is not None and owner.port != old.port:
            return
        time.sleep(0.02)
    raise ServerError(f"slot {slot} still served by {old} after {timeout:.0f}s")


def lost_writes_cluster(endpoints: Sequence[Endpoint], ack_log: Path,
                        batch: int = 1000) -> tuple[int, int]:
    """``lost_writes`` in a cluster: each key looked up (EXISTS, pipelined) on the node
    serving its slot now (CLUSTER SLOTS of the first live node of ``endpoints``)."""
    keys = [k for k in ack_log.read_text().splitlines() if k]
    table = slot_table(endpoints)
    owners: dict[Endpoint, list[str]] = {}
    for key in keys:
        owner = _owner(table, key_slot(key.encode()))
        if owner is None:
            raise ServerError(f"no node serves the slot of {key!r}")
        owners.setdefault(owner, []).append(key)
    found = 0
    for endpoint, mine in owners.items():
        with RespClient(endpoint, timeout=30.0) as client:
            for at in range(0, len(mine), batch):
                replies = client.pipeline([("EXISTS", k) for k in mine[at:at + batch]])
                found += sum(r for r in replies if isinstance(r, int))
    return len(keys), len(keys) - found


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone: a kill is done
        os.kill(pid, sig)


def _call(endpoint: Endpoint, *args: str) -> None:
    with RespClient(endpoint, timeout=5.0) as client:
        reply = client.call(*args)
    if isinstance(reply, RespError):
        raise ServerError(f"{' '.join(args)} at {endpoint}: {reply}")
