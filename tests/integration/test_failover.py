"""Failover under load on real valkey-server 8.0.1: a standalone primary with a replica,
kvload writing with --reconnect-on-error (--fallback the replica), and a fault schedule
that SIGKILLs the primary and then promotes the replica (REPLICAOF NO ONE). The failover
record shows the unavailability window between the kill and the promotion, and the errors
by kind the client saw; a config with a fault its topology cannot serve exits 2 before any
server starts.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kvperf.config.faults import Fault
from kvperf.plan.trial import ServerSetup
from kvperf.results.failover import failover_record
from kvperf.server.binary import inspect
from kvperf.server.faults import FaultNode, FaultSchedule
from kvperf.server.instance import ServerGroup
from kvperf.server.replication import attach, wait_in_sync
from kvperf.server.resp import RespClient
from tests.helpers import require_binary, run_kvperf, write_config

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

KILL_AT, PROMOTE_AT, SECONDS = 1.5, 2.5, 4.5
BACKOFF_CAP_S = 0.8  # kvload: 100 ms doubling to 8x
SLACK_S = 0.3  # a busy machine's scheduling between a signal and the client seeing it


def _group(tmp: Path, name: str) -> ServerGroup:
    setup = ServerSetup(False, False, None, 1, None, (), (), ())
    binary = inspect(Path(require_binary("valkey-server")), "test")
    return ServerGroup(binary, setup, tmp / name)


def test_kill_then_promote_reports_the_window_and_errors_by_kind(
        tmp_path: Path, no_strays: None) -> None:
    with _group(tmp_path, "primary") as primary, _group(tmp_path, "replica") as replica:
        p, r = primary.endpoints[0], replica.endpoints[0]
        with RespClient(p) as client:  # the first sync at once, not after valkey's 5 s
            client.call("CONFIG", "SET", "repl-diskless-sync-delay", "0")
        attach(r, p)
        wait_in_sync(p, 1, timeout=30)
        nodes = {"primary": FaultNode(p, lambda: primary.pids[0]),
                 "replica": FaultNode(r, lambda: replica.pids[0])}
        faults = (Fault(KILL_AT, "kill", "primary"), Fault(PROMOTE_AT, "promote", "replica"))
        out = tmp_path / "kvload.json"
        argv = [require_binary("kvload"), "-p", str(p.port), "--reconnect-on-error",
                "--fallback", f"127.0.0.1:{r.port}", "--duration", str(SECONDS), "-c", "4",
                "-q", "-r", "1000", "--json", str(out), "SET", "k:__rand_int__", "v"]
        with FaultSchedule(faults, nodes) as schedule:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        with RespClient(r) as client:
            role = client.call("ROLE")
        assert isinstance(role, list) and role[0] == b"master"
    kill, promote = schedule.executed
    assert kill.error is None and promote.error is None, schedule.executed
    test = json.loads(out.read_text())["tests"][0]
    record = failover_record([e.record() for e in schedule.executed], test["timeline"])

    window = record["faults"][0]["window"]
    assert window is not None, test["timeline"]
    # Errors start when the primary dies; writes come back once the replica is promoted
    # (not before: it answered READONLY), within one capped backoff after.
    assert window["time_to_first_error_s"] < SLACK_S, window
    assert abs(window["unavailable_from_unix"] - kill.started_unix) < SLACK_S, window
    assert window["unavailable_to_unix"] >= promote.started_unix, window
    assert window["unavailable_to_unix"] <= promote.ended_unix + BACKOFF_CAP_S + SLACK_S
    gap = promote.started_unix - kill.started_unix
    assert gap - SLACK_S <= window["unavailable_s"] <= gap + BACKOFF_CAP_S + SLACK_S
    assert record["faults"][1]["window"] is None  # the promotion caused no outage of its own
    kinds = record["errors_by_kind"]
    assert kinds.get("READONLY", 0) > 0 and set(kinds) <= {"connection", "READONLY"}, kinds
    # every error the client counted is in the timeline, by kind; none dropped silently
    assert sum(kinds.values()) == sum(test["errors"].values()), (kinds, test["errors"])
    p99 = record["p99_ms"]
    assert p99["before"] is not None and p99["after"] is not None, p99


@pytest.mark.parametrize(("faults", "message"), [
    ([{"at": 1, "promote": "replica"}], "needs a replica"),
    ([{"at": 1, "pause": "primary"}], "a pause needs 'seconds'"),
])  # the other refusals: tests/unit/config/test_faults.py
def test_bad_fault_specs_exit_2_before_any_server(tmp_path: Path, no_strays: None,
                                                  faults: list[object], message: str) -> None:
    config = write_config(tmp_path, [{"commands": ["SET"], "duration": 2, "faults": faults}])
    done = run_kvperf("run", "--config", config, "--no-db", cwd=tmp_path, timeout=60)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr, done.stderr
    assert not (tmp_path / "results").exists()
