"""memtier's staircase ramp on real valkey-server 8.0.1: kvload's own mode, the memtier
front end and a kvperf config's "staircase" each run 3 steps of 1 s (2, 4, 6 connections);
the server sees those counts, one after the other (CLIENT LIST and INFO clients sampled
during the run), and the reports hold one entry per step; bad ramps exit 2 naming the flag
or key. Throughput per step is not asserted (a busy machine), only counts and structure.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from kvperf.plan.trial import ServerSetup
from kvperf.server.binary import inspect
from kvperf.server.instance import ServerGroup
from kvperf.server.resp import Endpoint, RespClient
from tests.helpers import require_binary, run_kvperf, write_config

# alone: each step's connections are sampled in its 1 s window; the bad ramps and configs
# (exit 2 before any load) time nothing and run in the parallel lane
pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

SCHEMAS = Path(__file__).resolve().parents[2] / "crates" / "kvload" / "schema"
RAMP = ["--clients-start", "2", "--clients-step", "2", "--step-duration", "1"]
STEADY = 5  # samples (50 ms apart) a step's count must be seen in: ~20 in 1 s


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    setup = ServerSetup(False, False, None, 1, None, (), (), ())
    binary = inspect(Path(require_binary("valkey-server")), "test")
    with ServerGroup(binary, setup, tmp_path_factory.mktemp("staircase")) as group:
        yield group.endpoints[0]


class Sampler:
    """Counts the server's other clients every 50 ms while a load runs: CLIENT LIST's
    lines and INFO clients' connected_clients, each less this sampler's own."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.listed: list[int] = []
        self.connected: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with RespClient(self.endpoint) as client:
            while not self._stop.is_set():
                listing = client.call("CLIENT", "LIST")
                info = client.call("INFO", "clients")
                assert isinstance(listing, bytes) and isinstance(info, bytes)
                self.listed.append(len(listing.strip().splitlines()) - 1)
                found = re.search(rb"connected_clients:(\d+)", info)
                assert found
                self.connected.append(int(found.group(1)) - 1)
                time.sleep(0.05)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def _held(counts: list[int]) -> dict[int, tuple[int, int]]:
    """Per count: (length, start) of its longest run of consecutive samples."""
    held: dict[int, tuple[int, int]] = {}
    for start, (value, run) in _runs(counts):
        if run > held.get(value, (0, 0))[0]:
            held[value] = (run, start)
    return held


def _runs(counts: list[int]) -> Iterator[tuple[int, tuple[int, int]]]:
    """(start, (value, length)) of each run of equal consecutive samples."""
    start = 0
    for i in range(1, len(counts) + 1):
        if i == len(counts) or counts[i] != counts[start]:
            yield start, (counts[start], i - start)
            start = i


def _check_schema(report: dict[str, Any], name: str) -> None:
    """The report's layout, per-step blocks included, is the one its schema describes."""
    jsonschema.validate(report, json.loads((SCHEMAS / f"{name}.schema.json").read_text()))


def _run_sampled(endpoint: Endpoint, argv: list[str]) -> tuple[Sampler, str]:
    with Sampler(endpoint) as sampler:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return sampler, done.stdout + done.stderr


def _assert_ramp(sampler: Sampler) -> None:
    """2, then 4, then 6 connections, each held for a while. (A step's connections are
    closed before the next step's open, but the server may list both for a moment: it
    notices a close at its next event loop turn — so the maximum is not asserted.)"""
    for counts in (sampler.listed, sampler.connected):
        held = _held(counts)
        steps = [c for c in (2, 4, 6) if held.get(c, (0, 0))[0] >= STEADY]
        assert steps == [2, 4, 6], counts
        assert held[2][1] < held[4][1] < held[6][1], counts  # in that order
        assert not [c for c, (run, _) in held.items() if c > 6 and run >= STEADY], counts


@pytest.mark.alone
def test_kvload_staircase_opens_2_4_6_connections_and_reports_each_step(
        server: Endpoint, tmp_path: Path, no_strays: None) -> None:
    out = tmp_path / "kvload.json"
    sampler, text = _run_sampled(server, [
        require_binary("kvload"), "-p", str(server.port), "-t", "set", "-c", "6",
        "--threads", "2", *RAMP, "--duration", "3", "--json", str(out)])
    _assert_ramp(sampler)
    assert "Staircase (per step):" in text and "6 parallel clients at full ramp" in text
    report = json.loads(out.read_text())
    _check_schema(report, "kvload-report")
    assert report["config"]["staircase"] == {"start": 2, "step": 2, "step_s": 1}
    test = report["tests"][0]
    steps = test["staircase"]
    assert [s["connections"] for s in steps] == [2, 4, 6]
    assert [(s["from_s"], s["to_s"]) for s in steps] == [(0, 1), (1, 2), (2, 3)]
    assert all(s["requests"] > 0 and s["p50_ms"] <= s["p99_ms"] for s in steps)
    assert sum(s["requests"] for s in steps) == test["requests"]
    assert 2.9 < test["duration_s"] < 3.5


@pytest.mark.alone
def test_memtier_staircase_per_thread_and_json_layout(
        server: Endpoint, tmp_path: Path, no_strays: None) -> None:
    out = tmp_path / "memtier.json"
    sampler, text = _run_sampled(server, [
        require_binary("kvload"), "memtier", "-p", str(server.port), "-t", "2", "-c", "3",
        "--clients-start", "1", "--clients-step", "1", "--step-duration", "1",
        "--test-time", "3", "--ratio", "1:1", "--hide-histogram", "--json-out-file",
        str(out)])
    _assert_ramp(sampler)  # 1, 2, 3 clients per thread × 2 threads
    assert "2 threads 6 conns at full ramp" in text
    doc = json.loads(out.read_text())
    _check_schema(doc, "memtier-report")
    cfg = doc["configuration"]
    assert (cfg["clients_start"], cfg["clients_step"], cfg["step_duration"]) == (1, 1, 1)
    stats: dict[str, Any] = doc["ALL STATS"]
    active = stats["Active Clients"]
    assert list(active) == list(stats["Totals"]["Time-Serie"])  # the same seconds
    assert [active[s]["Clients per thread"] for s in ("0", "1", "2")] == [1, 2, 3]
    assert [active[s]["Total clients"] for s in ("0", "1", "2")] == [2, 4, 6]
    steps = stats["Staircase"]
    assert [s["Connections"] for s in steps] == [2, 4, 6]
    assert [s["Clients per thread"] for s in steps] == [1, 2, 3]
    assert sum(s["Count"] for s in steps) == stats["Totals"]["Count"]


@pytest.mark.alone
def test_kvperf_config_staircase_records_the_curve(tmp_path: Path, no_strays: None) -> None:
    write_config(tmp_path, [{"commands": ["SET"], "duration": [3], "clients": [6],
                             "benchmark-threads": [1],
                             "staircase": {"start": 2, "step": 2, "step_seconds": 1}}])
    done = run_kvperf("run", "--config", "config.json", "--server-bin",
                      require_binary("valkey-server"), "--results-dir", "results",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "staircase · SET run 1 (up to 6 connections)" in done.stdout
    [row] = json.loads(next((tmp_path / "results").glob("*/metrics.json")).read_text())
    assert row["status"] == "ok" and row["clients"] == 6
    steps = row["client"]["staircase"]
    assert [s["connections"] for s in steps] == [2, 4, 6]
    assert all(s["ops_sec"] > 0 for s in steps)


@pytest.mark.parametrize(("argv", "message"), [
    (["-c", "6", "--clients-start", "2", "--duration", "3"], "must all be specified together"),
    (["-c", "2", *RAMP, "--duration", "3"], "--clients-start (2) must be less than -c (2)"),
    (["-c", "6", *RAMP], "--duration is required"),
    (["-c", "6", *RAMP, "--duration", "3", "--rps", "100"], "--rps"),
    (["memtier", "-c", "6", *RAMP, "-n", "5"], "--requests cannot be used"),
    (["memtier", "-c", "2", *RAMP, "--test-time", "3"], "must be less than --clients (2)"),
    (["memtier", "--clients-step", "0"], "clients-step must be greater than zero"),
])
def test_bad_ramps_exit_2(argv: list[str], message: str) -> None:
    front = argv[:1] if argv[0] == "memtier" else []  # port 1: nothing may connect
    done = subprocess.run([require_binary("kvload"), *front, "-p", "1", *argv[len(front):]],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and message in done.stderr, done.stderr


@pytest.mark.parametrize(("staircase", "extra", "message"), [
    ({"start": 2, "step": 2}, {}, "'staircase' needs 'step_seconds'"),
    ({"start": 6, "step": 2, "step_seconds": 1}, {}, "'start' (6) must be less than 'clients'"),
    ({"start": 2, "step": 0, "step_seconds": 1}, {}, "'step' must be a positive integer"),
    ({"start": 2, "step": 2, "step_seconds": 1}, {"requests": [100]}, "needs 'duration'"),
])
def test_bad_staircase_config_exits_2_before_any_server(
        tmp_path: Path, no_strays: None, staircase: dict[str, int], extra: dict[str, Any],
        message: str) -> None:
    obj: dict[str, Any] = {"commands": ["SET"], "clients": [6], "staircase": staircase,
                           **(extra or {"duration": [3]})}
    write_config(tmp_path, [obj])
    done = run_kvperf("run", "--config", "config.json", "--server-bin",
                      require_binary("valkey-server"), cwd=tmp_path, timeout=60)
    assert done.returncode == 2 and message in done.stderr, done.stderr
