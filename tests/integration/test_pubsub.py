"""Pub/sub load (issue 24): ``kvload pubsub`` against a real valkey 8.0.1 — every message
published reaches every subscriber of its channel exactly once on loopback (published ×
subscribers = delivered, 0 lost, 0 duplicated), publish-to-deliver latency percentiles are
positive, sharded pub/sub (SSUBSCRIBE/SPUBLISH) is what the server executed, the loss
counter sees loss when the server drops subscribers (client-output-buffer-limit), bad input
exits 2; and a corpus pub/sub definition (memtier publisher + pubsub-sub-bench) runs through
``kvperf run --definitions``."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from kvperf.definitions.loader import load
from kvperf.definitions.plan import Plan, plan_all
from kvperf.definitions.pubsub import PUBSUB
from kvperf.server.resp import Endpoint, RespClient
from tests.fixtures.corpus import copy_definitions, suites_dir
from tests.helpers import read_metrics, require_binary, run_kvperf

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300),
              pytest.mark.usefixtures("no_strays")]

SCHEMA = (Path(__file__).resolve().parents[2] / "crates" / "kvload" / "schema"
          / "kvload-report.schema.json")
STEM = "memtier_benchmark-nokeys-pubsub-10-channels-128B-skewed-publishers-170-subscribers"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[Endpoint]:
    """One valkey-server for the file, stopped by its pid."""
    port = _port()
    proc = subprocess.Popen([require_binary("valkey-server"), "--port", str(port), "--bind",
                             "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = Endpoint("127.0.0.1", port)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "valkey-server did not listen"
                time.sleep(0.05)
        yield endpoint
    finally:
        proc.terminate()
        proc.wait(10)


def _pubsub(server: Endpoint, tmp_path: Path, *args: str) -> dict[str, Any]:
    """Run kvload pubsub; its report's one test."""
    report = tmp_path / "report.json"
    done = subprocess.run([require_binary("kvload"), "pubsub", "-h", server.host, "-p",
                           str(server.port), *args, "-q", "--json", str(report)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    document = json.loads(report.read_text())
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))  # the documented layout
    test: dict[str, Any] = document["tests"][0]
    return test


def _call(server: Endpoint, *command: str) -> Any:
    with RespClient(server, timeout=10) as client:
        return client.call(*command)


def _calls(server: Endpoint, name: str) -> int:
    info = _call(server, "INFO", "commandstats").decode()
    line = next((x for x in info.splitlines() if x.startswith(f"cmdstat_{name}:")), "")
    return int(line.split("calls=")[1].split(",")[0]) if line else 0


@pytest.mark.parametrize("mode", ["subscribe", "psubscribe"])
def test_every_message_reaches_every_subscriber_once(server: Endpoint, tmp_path: Path,
                                                     mode: str) -> None:
    _call(server, "CONFIG", "RESETSTAT")
    test = _pubsub(server, tmp_path, "--mode", mode, "--subscribers", "4", "--channels", "1",
                   "--publishers", "2", "-P", "8", "--messages", "3000", "-d", "100")
    counts = test["pubsub"]
    assert counts["published"] == 2 * 3000 == _calls(server, "publish")
    assert counts["delivered"] == 4 * counts["published"] == counts["expected"] == \
        test["requests"]
    assert (counts["lost"], counts["duplicated"], counts["disconnected"]) == (0, 0, 0)
    assert counts["fanout"] == 4.0
    latency = test["latency_ms"]["corrected"]
    assert 0 < latency["min"] <= latency["p50"] <= latency["p99"] <= latency["max"]
    assert test["achieved_rps"] == pytest.approx(counts["delivered_rps"])


def test_sharded_pubsub_at_a_rate(server: Endpoint, tmp_path: Path) -> None:
    _call(server, "CONFIG", "RESETSTAT")
    test = _pubsub(server, tmp_path, "--mode", "ssubscribe", "--subscribers", "3",
                   "--channels", "4", "--channels-per-subscriber", "4", "--publishers", "2",
                   "--rps", "2000", "--duration", "1")
    counts = test["pubsub"]
    assert counts["published"] == _calls(server, "spublish") > 0
    assert _calls(server, "publish") == 0
    assert _calls(server, "ssubscribe") == 3
    assert counts["delivered"] == 3 * counts["published"]
    assert (counts["lost"], counts["duplicated"]) == (0, 0)
    assert test["mode"] == "open" and test["target_rps"] == 2000
    # the open loop kept its schedule within 20% on a busy machine
    assert counts["published_rps"] == pytest.approx(2000, rel=0.2)
    assert test["latency_ms"]["service"]["p50"] > 0


def test_the_loss_counter_sees_dropped_subscribers(server: Endpoint, tmp_path: Path) -> None:
    """Pipelined 8 KB messages overflow a 1 KB pubsub output buffer limit at once: the server
    disconnects every subscriber, and what they missed counts as lost."""
    _call(server, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 1kb 0 0")
    try:
        test = _pubsub(server, tmp_path, "--subscribers", "3", "--publishers", "2", "-P",
                       "16", "-d", "8192", "--messages", "500", "--drain", "0.5")
    finally:
        _call(server, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 32mb 8mb 60")
    counts = test["pubsub"]
    assert counts["disconnected"] == 3
    assert counts["lost"] == counts["expected"] - counts["delivered"] > 0
    assert counts["subscribers_with_loss"] == 3


@pytest.mark.parametrize(("args", "says"), [
    (["-d", "8"], "at least 32 bytes"),
    (["--mode", "broadcast"], "--mode"),
    (["--channels", "2", "--channels-per-subscriber", "3"], "exceeds --channels"),
    (["--rps", "100", "-P", "4"], "-P applies to the closed loop"),
])
def test_bad_input_exits_2_before_connecting(args: list[str], says: str) -> None:
    done = subprocess.run([require_binary("kvload"), "pubsub", "-p", "1", *args],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and says in done.stderr, done.stderr


def test_a_corpus_pubsub_definition_runs(corpus: Path, tmp_path: Path) -> None:
    """3 publishers (memtier -c 3 -t 1 --pipeline 10) on 10 channels, 170 subscribers
    (pubsub-sub-bench -clients 170): every message fans out to 17 subscribers."""
    copy_definitions(corpus, tmp_path / "defs", STEM)
    done = run_kvperf("run", "--definitions", "defs", "--override-test-time", "1", "--no-db",
                      cwd=tmp_path, timeout=200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok", row["error"]
    counts = row["client"]["pubsub"]
    assert counts["fanout"] == 17.0 and counts["lost"] == 0 and counts["duplicated"] == 0
    assert counts["delivered"] == counts["expected"] == 17 * counts["published"]
    assert row["rps"] == pytest.approx(counts["delivered_rps"], rel=1e-3)
    assert row["p50_latency_ms"] > 0
    assert row["definition"]["tools"] == ["kvload pubsub"]
    assert row["server"]["commands"]["publish"]["calls"] == counts["published"]
    assert row["server"]["commands"]["subscribe"]["calls"] == 170


def test_kvload_accepts_every_planned_pubsub_argv(corpus: Path) -> None:
    """Every corpus pub/sub plan's argv, aimed at a port that refuses connections: kvload
    exits 1 after accepting its options (2 would be a refused option)."""
    loaded = load([suites_dir(corpus)])
    argvs = [c.argv for r in plan_all(loaded.definitions, loaded.topologies, 2)
             if isinstance(r, Plan) for c in r.clients if c.tool == PUBSUB]
    assert len(argvs) == 6
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening
        for argv in argvs:
            done = subprocess.run([require_binary("kvload"), "pubsub", "-p",
                                   str(closed.getsockname()[1]), *argv],
                                  capture_output=True, text=True, timeout=30)
            assert done.returncode == 1 and "connect" in done.stderr, (argv, done.stderr)
