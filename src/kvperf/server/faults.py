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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from kvperf.config.faults import Fault
from kvperf.core.errors import ServerError
from kvperf.server.resp import Endpoint, RespClient, RespError

T = TypeVar("T")


@dataclass
class FaultNode:
    """A node a fault can act on: where it listens, its current pid (a restart changes
    it), and how to start it again on the same port (None: it cannot be restarted)."""

    endpoint: Endpoint
    pid: Callable[[], int]
    restart: Callable[[], None] | None = None


@dataclass(frozen=True)
class Executed:
    """A fault as it happened: wall-clock start (and end: a pause's SIGCONT, a restart's
    node answering again), or the error that stopped it."""

    fault: Fault
    started_unix: float
    ended_unix: float
    error: str | None = None

    def record(self) -> dict[str, object]:
        return {"at_s": self.fault.at, "action": self.fault.action,
                "target": self.fault.target, "seconds": self.fault.seconds,
                "started_unix": round(self.started_unix, 4),
                "ended_unix": round(self.ended_unix, 4), "error": self.error}


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
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["value"] = load()
            except BaseException as exc:  # re-raised in the calling thread
                box["error"] = exc
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
        if "error" in box:
            raise box["error"]
        value: T = box["value"]
        return value

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


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone: a kill is done
        os.kill(pid, sig)


def _call(endpoint: Endpoint, *args: str) -> None:
    with RespClient(endpoint, timeout=5.0) as client:
        reply = client.call(*args)
    if isinstance(reply, RespError):
        raise ServerError(f"{' '.join(args)} at {endpoint}: {reply}")
