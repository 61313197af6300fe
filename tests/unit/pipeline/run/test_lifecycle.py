"""The order of a trial's life, without any server: start, seed, warmup, measure, stop,
persist — and what a failure at each point leaves behind.

Everything the Runner touches the world through is a recording fake here, named so:
FakeLauncher (stands in for server.instance.ServerGroup), FakeProbe (for the RESP/INFO/
/proc probe), FakeDriver (for a load tool). Real servers run the same Runner in
tests/integration/."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kvperf.config.commands import Seed
from kvperf.config.loader import parse_config
from kvperf.core.errors import DriverError, Interrupted, ServerError
from kvperf.driver.base import Capabilities, Measurement, Target
from kvperf.pipeline.run.model import Prepared, RunOptions, Work
from kvperf.pipeline.run.runner import Runner
from kvperf.plan.matrix import expand
from kvperf.plan.trial import Load, ServerSetup
from kvperf.results.row import RunContext
from kvperf.server.binary import ServerBinary
from kvperf.server.resp import Endpoint

Events = list[str]


@dataclass
class FakeServer:
    """A ServerHandle that records its start and stop (FakeLauncher makes it)."""

    events: Events
    fail_start: bool = False
    endpoints: list[Endpoint] = field(default_factory=lambda: [Endpoint("127.0.0.1", 1)])
    pids: list[int] = field(default_factory=lambda: [4242])
    replica_endpoints: list[Endpoint] = field(default_factory=list)

    def __enter__(self) -> FakeServer:
        self.events.append("server start")
        if self.fail_start:  # like ServerGroup: a failed start stops what it started
            self.events.append("server stop")
            raise ServerError("fake server refused to start")
        return self

    def __exit__(self, *exc: object) -> None:
        self.events.append("server stop")

    def pinning(self) -> str | None:
        return "0"

    def effective_config(self) -> dict[str, str]:
        return {}

    def health(self) -> str | None:
        return None


@dataclass
class FakeLauncher:
    events: Events
    fail_start: bool = False

    def __call__(self, binary: ServerBinary, setup: ServerSetup, log_dir: Path,
                 tls: object, **wrapping: object) -> FakeServer:
        return FakeServer(self.events, self.fail_start)


@dataclass
class FakeKeyStore:
    events: Events
    nodes: int = 1

    def send_all(self, commands: Iterator[object]) -> int:
        sent = sum(1 for _ in commands)
        self.events.append("seed")
        return sent

    def count(self, seed: Seed) -> int:
        return 0


@dataclass
class FakeProbe:
    events: Events
    cpu: list[float] = field(default_factory=lambda: [1.0, 1.5])
    collected: dict[str, Any] = field(default_factory=dict)

    @contextlib.contextmanager
    def keyspace(self, target: Target) -> Iterator[FakeKeyStore]:
        self.events.append("connect")
        yield FakeKeyStore(self.events)

    def reset_stats(self, endpoints: tuple[Endpoint, ...]) -> None:
        self.events.append("reset stats")

    def collect(self, endpoints: tuple[Endpoint, ...]) -> dict[str, Any]:
        self.events.append("collect stats")
        return self.collected

    def cpu_seconds(self, pids: list[int]) -> float | None:
        return self.cpu.pop(0) if self.cpu else None

    def memory(self, endpoints: tuple[Endpoint, ...]) -> None:
        return None

    def memory_sample(self, endpoints: tuple[Endpoint, ...]) -> list[int]:
        return []


@dataclass
class FakeDriver:
    events: Events
    fail_measure: BaseException | None = None
    name: str = "fake-load"
    version: str = "0"
    capabilities: Capabilities = field(default_factory=lambda: Capabilities(duration=True))

    def unsupported(self, load: Load, cluster: bool, tls: bool) -> str | None:
        return None

    def warmup(self, load: Load, target: Target, seconds: int, log: Path) -> None:
        self.events.append("warmup")

    def measure(self, load: Load, target: Target, log: Path) -> Measurement:
        self.events.append("measure")
        if self.fail_measure is not None:
            raise self.fail_measure
        return Measurement(100_000.0, 0.5, 0.1, 0.5, 0.8, 0.9, 1.2, requests=1_000_000)


@dataclass
class RecordingObserver:
    events: Events

    def started(self, work: Work, position: int, total: int) -> None:
        self.events.append(f"trial {position}/{total}")

    def stage(self, work: Work, name: str) -> None:
        self.events.append(f"stage {name}")

    def finished(self, work: Work, row: dict[str, Any]) -> None:
        self.events.append(f"finished {row['status']}")


def _prepared(tmp_path: Path, driver: FakeDriver, runs: int = 1) -> Prepared:
    specs = parse_config([{"commands": ["GET"], "duration": 1, "warmup": 1,
                           "keyspacelen": 10}], {0, 1})
    options = RunOptions(results_dir=tmp_path, label="life", runs=runs)
    binary = ServerBinary(Path("/nonexistent/valkey-server"), "valkey", "0.0.0", "fake")
    context = RunContext("life", None, driver.name, driver.version, binary.label)
    return Prepared(options, specs, expand(specs, runs), driver, binary, context,
                    tmp_path / "life")


def _runner(tmp_path: Path, events: Events, driver: FakeDriver | None = None,
            launcher: FakeLauncher | None = None, runs: int = 1,
            probe: FakeProbe | None = None) -> Runner:
    driver = driver or FakeDriver(events)
    return Runner(_prepared(tmp_path, driver, runs), RecordingObserver(events),
                  launcher=launcher or FakeLauncher(events), probe=probe or FakeProbe(events))


class PersistSpy:
    """Wraps Runner.persist to record when a row reaches metrics.json."""

    def __init__(self, runner: Runner, events: Events) -> None:
        original = runner.persist

        def persist(row: dict[str, Any]) -> None:
            original(row)
            on_disk = json.loads(runner.metrics.path.read_text())
            events.append(f"persisted {len(on_disk)}")

        runner.persist = persist  # type: ignore[method-assign]


ONE_TRIAL = ["stage server_start", "server start", "connect", "stage seed", "seed",
             "stage warmup", "warmup", "reset stats", "stage measure", "measure",
             "collect stats", "server stop"]


def test_a_trial_runs_its_stages_in_order_and_is_persisted_before_the_next(
        tmp_path: Path) -> None:
    events: Events = []
    runner = _runner(tmp_path, events, runs=2)
    PersistSpy(runner, events)
    summary = runner.execute()
    assert events == ["trial 1/2", *ONE_TRIAL, "persisted 1", "finished ok",
                      "trial 2/2", *ONE_TRIAL, "persisted 2", "finished ok"]
    row = summary.rows[0]
    assert row["status"] == "ok" and row["rps"] == 100_000.0
    assert row["server"]["cpu_us_per_request"] == pytest.approx(0.5)  # 0.5 s / 1e6 requests
    assert row["env"]["pinning"] == {"server": "0", "client": None}
    assert set(row["stage_seconds"]) == {"server_start", "seed", "warmup", "measure"}


def test_a_failed_measure_stops_the_server_and_keeps_a_failed_row(tmp_path: Path) -> None:
    events: Events = []
    driver = FakeDriver(events, fail_measure=DriverError("tool exited 1"))
    runner = _runner(tmp_path, events, driver=driver)
    summary = runner.execute()
    assert events[-3:] == ["measure", "server stop", "finished failed"]
    assert summary.failed == 1 and "tool exited 1" in summary.rows[0]["error"]
    assert json.loads(runner.metrics.path.read_text())[0]["status"] == "failed"


def _get_stats(failed: int) -> dict[str, Any]:
    """INFO of a trial whose 1,000,000 GETs (the tool's count) all ran, ``failed`` of them
    answering an error (a tool that counts error replies as requests)."""
    return {"commandstats": {"get": {"calls": 1_000_000, "usec": 500_000,
                                     "usec_per_call": 0.5, "failed_calls": failed,
                                     "rejected_calls": 0}},
            "errorstats": {"WRONGTYPE": failed} if failed else {}}


@pytest.mark.parametrize(("failed", "status"), [(0, "ok"), (10_000, "ok"),
                                                (10_001, "failed"), (1_000_000, "failed")])
def test_a_matrix_trial_whose_replies_are_errors_fails(tmp_path: Path, failed: int,
                                                       status: str) -> None:
    events: Events = []
    probe = FakeProbe(events, collected=_get_stats(failed))
    row = _runner(tmp_path, events, probe=probe).execute().rows[0]
    assert row["status"] == status, row["error"]
    assert row["checks"].get("error_replies") == (failed or None)
    if status == "failed":
        assert row["error"].startswith(f"{failed} of 1000000 calls of the load answered an "
                                       f"error (") and "most: GET; INFO errorstats: " \
            f"WRONGTYPE ×{failed}" in row["error"]


def test_a_server_that_does_not_start_fails_only_its_trial(tmp_path: Path) -> None:
    events: Events = []
    runner = _runner(tmp_path, events, launcher=FakeLauncher(events, fail_start=True), runs=2)
    summary = runner.execute()
    assert [e for e in events if e.startswith(("trial", "finished", "server"))] == [
        "trial 1/2", "server start", "server stop", "finished failed",
        "trial 2/2", "server start", "server stop", "finished failed"]
    assert "measure" not in events
    assert all("fake server refused to start" in r["error"] for r in summary.rows)


def test_an_interrupt_stops_the_server_and_keeps_finished_rows(tmp_path: Path) -> None:
    events: Events = []
    driver = FakeDriver(events)
    runner = _runner(tmp_path, events, driver=driver, runs=2)
    calls = {"n": 0}
    original = driver.measure

    def measure_then_interrupt(load: Load, target: Target, log: Path) -> Measurement:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return original(load, target, log)

    driver.measure = measure_then_interrupt  # type: ignore[method-assign]
    with pytest.raises(Interrupted):
        runner.execute()
    assert events[-1] == "server stop"
    rows = json.loads(runner.metrics.path.read_text())
    assert [r["status"] for r in rows] == ["ok"]


def test_a_blocked_side_starts_nothing(tmp_path: Path) -> None:
    events: Events = []
    driver = FakeDriver(events)
    prepared = _prepared(tmp_path, driver)
    prepared.options = RunOptions(results_dir=tmp_path, blocked="build of B failed")
    runner = Runner(prepared, RecordingObserver(events), launcher=FakeLauncher(events),
                    probe=FakeProbe(events))
    summary = runner.execute()
    assert events == ["trial 1/1", "finished failed"]
    assert summary.rows[0]["error"] == "build of B failed"
    assert datetime.fromisoformat(summary.rows[0]["timestamp"]) <= datetime.now(UTC)
