"""Failover under load on real valkey-server 8.0.1: a standalone primary with a replica,
kvload writing with --reconnect-on-error (--fallback the replica), and a fault schedule
that SIGKILLs the primary and then promotes the replica (REPLICAOF NO ONE) — run by `kvperf
run` from the documented config, and directly around kvload (kvperf.server.faults). The failover
record shows the unavailability window between the kill and the promotion, the errors by
kind the client saw and the acknowledged writes lost (none to speak of; but every write
after a promotion that came first is lost, and counted); a config with a fault its
topology cannot serve exits 2 before any server starts.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kvperf.config.faults import Fault
from kvperf.plan.trial import ServerSetup
from kvperf.results.failover import failover_record
from kvperf.server.binary import inspect
from kvperf.server.faults import Executed, FaultNode, FaultSchedule, lost_writes
from kvperf.server.instance import ServerGroup
from kvperf.server.replication import attach, wait_in_sync
from kvperf.server.resp import RespClient
from tests.helpers import ROOT, read_metrics, require_binary, run_kvperf, write_config

# alone: the fault windows are timed; the bad fault specs (exit 2 before any server) time
# nothing and run in the parallel lane
pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

BACKOFF_CAP_S = 0.8  # kvload: 100 ms doubling to 8x
SLACK_S = 0.3  # a busy machine's scheduling between a signal and the client seeing it


def _group(tmp: Path, name: str) -> ServerGroup:
    setup = ServerSetup(False, False, None, 1, None, (), (), ())
    binary = inspect(Path(require_binary("valkey-server")), "test")
    return ServerGroup(binary, setup, tmp / name)


@dataclass
class Run:
    """One failover under load: the schedule as executed, kvload's test and the record."""

    executed: list[Executed]
    test: dict[str, Any]
    record: dict[str, Any]


def _failover(tmp: Path, faults: tuple[Fault, ...], seconds: float) -> Run:
    """A primary and its replica (in sync), kvload writing unique keys to the primary with
    --reconnect-on-error (the replica its fallback) while ``faults`` run; afterwards the
    acknowledged writes are checked on the replica, which is the primary by then."""
    with _group(tmp, "primary") as primary, _group(tmp, "replica") as replica:
        p, r = primary.endpoints[0], replica.endpoints[0]
        with RespClient(p) as client:  # the first sync at once, not after valkey's 5 s
            client.call("CONFIG", "SET", "repl-diskless-sync-delay", "0")
        attach(r, p)
        wait_in_sync(p, 1, timeout=30)
        nodes = {"primary": FaultNode(p, lambda: primary.pids[0]),
                 "replica": FaultNode(r, lambda: replica.pids[0])}
        out, acks = tmp / "kvload.json", tmp / "acks.txt"
        argv = [require_binary("kvload"), "-p", str(p.port), "--reconnect-on-error",
                "--fallback", f"127.0.0.1:{r.port}", "--ack-log", str(acks),
                "--duration", str(seconds), "-c", "4", "-q", "-r", "1000000000",
                "--sequential", "--json", str(out), "SET", "k:__rand_int__", "v"]
        schedule = FaultSchedule(faults, nodes)
        done = schedule.run(lambda: subprocess.run(argv, capture_output=True, text=True,
                                                   timeout=60))
        assert done.returncode == 0, done.stderr
        with RespClient(r) as client:
            role = client.call("ROLE")
        assert isinstance(role, list) and role[0] == b"master"
        writes = lost_writes(r, acks)
    assert all(e.error is None for e in schedule.executed), schedule.executed
    test = json.loads(out.read_text())["tests"][0]
    record = failover_record([e.record() for e in schedule.executed], test["timeline"], writes)
    return Run(schedule.executed, test, record)


@pytest.mark.alone
def test_writes_after_the_replica_left_are_counted_lost(tmp_path: Path,
                                                        no_strays: None) -> None:
    # Promoted first, the replica stops following: every write the old primary then
    # acknowledges until its kill is lost — the counter must see them.
    run = _failover(tmp_path, (Fault(1.0, "promote", "replica"),
                               Fault(2.0, "kill", "primary")), 3.0)
    writes = run.record["acknowledged_writes"]
    second = [s["ok"] for s in run.test["timeline"]["seconds"]]
    assert writes["lost"] > 0, (writes, second)
    # about a second of writes: at least half the slowest second's, at most all acknowledged
    assert min(second[:2]) // 2 <= writes["lost"] < writes["checked"], (writes, second)


@pytest.mark.alone
def test_documented_failover_config(tmp_path: Path, no_strays: None) -> None:
    """docs/guide/replicas.md "Failover under load": `kvperf run` executes
    configs/failover-standalone.json (SET; the primary killed at 2 s, its replica promoted at
    3 s) — in quick mode, which keeps a trial with faults at its duration."""
    done = run_kvperf("run", "--config", ROOT / "configs" / "failover-standalone.json",
                      "--quick", "--server-bin", require_binary("valkey-server"), "--label",
                      "t", "--no-db", cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok" and row["duration"] == 5, row["error"]
    assert row["config_set"]["faults"] == "kill primary at 2s; promote replica at 3s", row
    record = row["failover"]
    kill, promote = record["faults"]
    assert kill["action"] == "kill" and promote["action"] == "promote", record
    window = kill["window"]
    assert window is not None, record
    assert promote["window"] is None, record  # the promotion caused no outage of its own
    # Errors start when the primary dies; writes come back once the replica is promoted
    # (not before: it answered READONLY), within one capped backoff after.
    assert window["time_to_first_error_s"] < SLACK_S, window
    assert abs(window["unavailable_from_unix"] - kill["started_unix"]) < SLACK_S, record
    assert promote["started_unix"] <= window["unavailable_to_unix"], record
    assert window["unavailable_to_unix"] <= promote["ended_unix"] + BACKOFF_CAP_S + SLACK_S
    gap = promote["started_unix"] - kill["started_unix"]
    assert gap - SLACK_S <= window["unavailable_s"] <= gap + BACKOFF_CAP_S + SLACK_S
    trial = next((tmp_path / "results").glob("t/trials/*"))
    test = json.loads((trial / "kvload.json").read_text())["tests"][0]
    kinds = record["errors_by_kind"]
    assert kinds.get("READONLY", 0) > 0 and set(kinds) <= {"connection", "READONLY"}, kinds
    # every error the client counted is in the timeline, by kind; none dropped silently
    assert sum(kinds.values()) == sum(test["errors"].values()), (kinds, test["errors"])
    assert record["p99_ms"]["before"] is not None and record["p99_ms"]["after"] is not None
    writes = record["acknowledged_writes"]  # every acknowledged SET, checked on the replica
    assert writes["checked"] == test["requests"] > 0, (writes, test["requests"])
    assert writes["lost"] <= writes["checked"] // 100, writes
    assert set(row["checks"]["relaxed_for_faults"]) >= {"executed_ratio", "server_health"}
    assert "executed_ratio" not in row["checks"], row["checks"]
    assert "failover under load" in done.stdout and "kill primary" in done.stdout, done.stdout
    assert (trial / "acks.txt").read_text().startswith("acked:")


@pytest.mark.alone
def test_a_cluster_primary_killed_is_unavailable_until_its_replica_takes_over(
        tmp_path: Path, no_strays: None) -> None:
    """docs/PERFORMANCE.md's configs/failover-cluster.json: 3 primaries with a replica
    each; the primary of slot 0 killed under SETs: kvload re-reads the slot map and
    follows its shard to the promoted replica, the window of that shard ends after the
    promotion (the fault ends when a live node's slot map names the replica), and the
    other shards' writes go on without an error."""
    config = ROOT / "configs" / "failover-cluster.json"
    done = run_kvperf("run", "--config", config, "--quick", "--server-bin",
                      require_binary("valkey-server"), "--label", "t", "--no-db",
                      cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok", row["error"]
    (kill,) = row["failover"]["faults"]
    window = kill["window"]
    assert kill["error"] is None and window is not None, kill
    promoted = kill["ended_unix"]  # the replica serves slot 0 (a live node's CLUSTER SLOTS)
    assert promoted - kill["started_unix"] > 0.5, kill  # detection (node timeout) + election
    assert window["time_to_first_error_s"] < SLACK_S, window
    assert promoted <= window["unavailable_to_unix"] <= promoted + BACKOFF_CAP_S + SLACK_S
    trial = next((tmp_path / "results").glob("t/trials/*"))
    logs = {p.name: p.read_text() for p in trial.glob("server-node*.log")}
    assert "Failover election won" in logs["server-node3.log"], sorted(logs)  # node 0's replica
    test = json.loads((trial / "kvload.json").read_text())["tests"][0]
    # one shard's outage; the other shards answered every second, without an error
    assert len(test["timeline"]["outages"]) == 1, test["timeline"]
    assert set(row["failover"]["errors_by_kind"]) <= {"connection"}, row["failover"]
    assert all(s["ok"] > 0 for s in test["timeline"]["seconds"]), test["timeline"]
    writes = row["failover"]["acknowledged_writes"]
    assert writes["checked"] == test["requests"] > 0, (writes, test["requests"])
    assert writes["lost"] <= writes["checked"] // 100, writes
    acked = (trial / "acks.txt").read_text().split()  # the shard's keys went on, not over
    assert len(set(acked)) == len(acked) == writes["checked"], (len(set(acked)), len(acked))
    seconds = row["failover"]["seconds"]  # the timeline table's lines
    assert [s["ok"] for s in seconds] == [s["ok"] for s in test["timeline"]["seconds"]]
    assert "failover timeline" in done.stdout and "kill primary-of-slot 0" in done.stdout


@pytest.mark.alone
def test_cluster_failover_and_the_lost_write_pair(tmp_path: Path, no_strays: None) -> None:
    """In a cluster: a CLUSTER FAILOVER on slot 0's replica (a short window, MOVED replies,
    nothing lost: the primary waits for its replica); and the primary of slot 0 restarted
    under SETs, once with `appendonly yes` / `appendfsync always` (every acknowledged write
    is back: 0 lost) and once without persistence (it comes back empty: the writes it had
    acknowledged are lost, and counted)."""
    restart = {"commands": ["SET"], "cluster_mode": "yes", "clients": 6, "duration": 5,
               "warmup": 0, "faults": [{"at": 1, "restart": "primary-of-slot 0"}]}
    config = write_config(tmp_path, [
        {"commands": ["SET"], "cluster_mode": "yes", "replicas": 1, "clients": 6,
         "duration": 3, "warmup": 0, "config_sets": [{"cluster-require-full-coverage": "no"}],
         "faults": [{"at": 1, "failover": "replica"}]},
        {**restart, "config_sets": [{"appendonly": "yes", "appendfsync": "always"}]},
        restart])
    done = run_kvperf("run", "--config", config, "--server-bin",
                      require_binary("valkey-server"), "--label", "t", "--no-db",
                      cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    failover, durable, volatile = read_metrics(tmp_path / "results")
    assert {r["status"] for r in (failover, durable, volatile)} == {"ok"}, done.stdout
    (moved,) = failover["failover"]["faults"]
    assert moved["action"] == "failover" and moved["error"] is None, moved
    window = moved["window"]
    assert window is not None and window["unavailable_to_unix"] is not None, moved
    assert window["unavailable_to_unix"] <= moved["ended_unix"] + BACKOFF_CAP_S + SLACK_S
    assert failover["failover"]["acknowledged_writes"]["lost"] == 0, failover["failover"]
    for row in (durable, volatile):  # the restarted node answered again before the end
        (back,) = row["failover"]["faults"]
        assert back["window"] is not None and back["window"]["unavailable_s"] is not None, row
    kept = durable["failover"]["acknowledged_writes"]
    gone = volatile["failover"]["acknowledged_writes"]
    assert kept["checked"] > 0 and kept["lost"] == 0, kept
    # about a third of the writes before the restart went to slot 0's node (of 3)
    assert gone["checked"] // 20 < gone["lost"] < gone["checked"], gone


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


@pytest.mark.alone
def test_pause_slows_and_restart_brings_the_same_node_back(tmp_path: Path,
                                                           no_strays: None) -> None:
    # No replica: a 0.5 s SIGSTOP costs throughput but no error; a restart (SIGKILL, the
    # node again on its port) costs errors until the load reconnects to the same node.
    with _group(tmp_path, "primary") as primary:
        p = primary.endpoints[0]
        nodes = {"primary": FaultNode(p, lambda: primary.pids[0],
                                      restart=lambda: primary.respawn(0))}
        out = tmp_path / "kvload.json"
        argv = [require_binary("kvload"), "-p", str(p.port), "--reconnect-on-error",
                "--duration", "3", "-c", "4", "-q", "-r", "1000", "--json", str(out),
                "SET", "k:__rand_int__", "v"]
        faults = (Fault(1.0, "pause", "primary", 0.5), Fault(2.0, "restart", "primary"))
        old_pid = primary.pids[0]
        schedule = FaultSchedule(faults, nodes)
        done = schedule.run(lambda: subprocess.run(argv, capture_output=True, text=True,
                                                   timeout=60))
        assert done.returncode == 0, done.stderr
        time.sleep(0.2)  # a restarted node that dies with a thread would be gone by now
        assert primary.pids[0] != old_pid and primary.health() is None
    pause, restart = schedule.executed
    assert pause.error is None and restart.error is None, schedule.executed
    assert pause.ended_unix - pause.started_unix >= 0.5
    test = json.loads(out.read_text())["tests"][0]
    record = failover_record([e.record() for e in schedule.executed], test["timeline"])
    ok = [s["ok"] for s in test["timeline"]["seconds"]]
    assert record["faults"][0]["window"] is None, test["timeline"]  # paused: slow, no error
    assert ok[1] < 0.8 * ok[0], ok
    window = record["faults"][1]["window"]
    assert window is not None and window["unavailable_to_unix"] is not None, test["timeline"]
    assert window["unavailable_to_unix"] >= restart.started_unix, window
    assert window["unavailable_to_unix"] <= restart.ended_unix + BACKOFF_CAP_S + SLACK_S
    assert set(record["errors_by_kind"]) == {"connection"}, record["errors_by_kind"]
