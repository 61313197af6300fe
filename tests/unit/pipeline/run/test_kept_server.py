"""The runner's kept server (run --definitions' server reuse), without any server: a work
that left its data as it found it leaves its server to the next work of its key (no start),
a failed work's kept server is stopped (with what its first work gave to run then) and the
next starts fresh, and a work of another key — or none — stops it before starting its own.

FakeLauncher and FakeServer (tests/unit/pipeline/run/test_lifecycle.py) stand in for
server.instance.ServerGroup; FakeWork for a definition's test (real servers:
tests/integration/test_definitions_snapshots.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kvperf.core.errors import DriverError
from kvperf.pipeline.run.model import Bench
from kvperf.pipeline.run.runner import Runner
from kvperf.plan.trial import ServerSetup
from kvperf.results.row import Row, TrialOutcome
from kvperf.server.binary import ServerBinary
from tests.unit.pipeline.run.test_lifecycle import Events, FakeLauncher

BINARY = ServerBinary(Path("/nonexistent/valkey-server"), "valkey", "0.0.0", "fake")
SETUP = ServerSetup(False, False, None, 1, None, (), (), ())


@dataclass
class FakeWork:
    """A definition test's stand-in: asks for its key's kept server, may fail, keeps its
    server when told (``keeps``)."""

    label: str
    key: str | None
    events: Events
    root: Path
    keeps: bool = True
    fails: bool = False

    @property
    def identity(self) -> str:
        return self.label

    @property
    def name(self) -> str:
        return self.label

    def describe(self) -> str:
        return self.label

    @property
    def log_dir(self) -> Path:
        return self.root / self.label

    @property
    def shared_server(self) -> None:
        return None

    def execute(self, bench: Bench) -> None:
        bench.reuse_key = self.key
        self.events.append(f"{self.label}: kept by {bench.kept_by(self.key)}")
        with bench.servers(BINARY, SETUP):
            self.events.append(f"{self.label} measures")
            if self.keeps:  # before a failure: the runner must not keep it then
                bench.keep = lambda: self.events.append(f"{self.label}'s cleanup")
            if self.fails:
                raise DriverError("the tool exited 1")

    def row(self, outcome: TrialOutcome, timestamp: datetime) -> Row:
        return {"command": self.label, "status": "failed" if outcome.error else "ok",
                "error": outcome.error}


@dataclass
class Works:
    works_: list[FakeWork]
    out_dir: Path
    blocked: str | None = None

    def works(self) -> list[FakeWork]:
        return self.works_


def test_a_kept_server_runs_the_next_work_of_its_key_until_one_fails_or_differs(
        tmp_path: Path) -> None:
    events: Events = []
    works = [FakeWork("a", "k", events, tmp_path), FakeWork("b", "k", events, tmp_path),
             FakeWork("c", "k", events, tmp_path, fails=True),
             FakeWork("d", "k", events, tmp_path), FakeWork("e", "other", events, tmp_path),
             FakeWork("f", None, events, tmp_path, keeps=False)]
    runner = Runner(Works(works, tmp_path / "out"), launcher=FakeLauncher(events))
    summary = runner.execute()
    assert [r["status"] for r in summary.rows] == ["ok", "ok", "failed", "ok", "ok", "ok"]
    assert events == [
        "a: kept by None", "server start", "a measures",
        "b: kept by a", "b measures",  # no start: a's server
        "c: kept by b", "c measures",  # failed: stopped, and what a, b and c gave run
        "c's cleanup", "b's cleanup", "a's cleanup", "server stop",
        "d: kept by None", "server start", "d measures",
        "d's cleanup", "server stop", "e: kept by None",  # another key: d's stops first
        "server start", "e measures",
        "e's cleanup", "server stop", "f: kept by None",  # a work that reuses nothing
        "server start", "f measures", "server stop"]
