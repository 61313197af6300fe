"""Disturbed trials through the one Runner and the interleaver: the measure stage of every
work is sampled, a disturbed one is rerun once under --retry-disturbed (a duet round on
every side), excluded under --exclude-disturbed, else kept and marked.

FakeWatcher stands in for the /proc sampler (server/interference_probe.Sampler): it hands
out canned samples, disturbed or quiet, one per measure stage. The rest are
test_lifecycle's recording fakes; real servers and a real hog run in
tests/integration/test_interference.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kvperf.core.kinds import Schedule
from kvperf.pipeline.request.options import InterferencePolicy
from kvperf.pipeline.run.model import watch_scope
from kvperf.pipeline.run.runner import Runner
from kvperf.pipeline.sides.ab import interleave
from kvperf.results.row import is_disturbed, is_timed
from kvperf.server.interference import CoreUse, Culprit, Sampled, Scope
from tests.unit.pipeline.run.test_lifecycle import (
    Events,
    FakeDriver,
    FakeLauncher,
    FakeProbe,
    RecordingObserver,
    _prepared,
)


def _sample(foreign: float) -> Sampled:
    return Sampled(1.0, 5, True, (CoreUse(0, 1.0, 1.0 - foreign, foreign, 0.0),),
                   (Culprit(4321, "python3 hog.py", foreign),), {})


@dataclass
class FakeWatch:
    sample: Sampled | None
    result: Sampled | None = None

    def __enter__(self) -> FakeWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.result = self.sample


@dataclass
class FakeWatcher:
    """Canned samples, one per measure stage (quiet once they run out); the scopes asked."""

    samples: list[Sampled]
    interval: float = 0.25
    scopes: list[Scope] = field(default_factory=list)

    def watch(self, scope: Scope) -> FakeWatch:
        self.scopes.append(scope)
        return FakeWatch(self.samples.pop(0) if self.samples else _sample(0.0))


def _runner(tmp_path: Path, events: Events, watcher: FakeWatcher,
            policy: InterferencePolicy, runs: int = 1, label: str = "life") -> Runner:
    prepared = _prepared(tmp_path / label, FakeDriver(events), runs)
    return Runner(prepared, RecordingObserver(events), launcher=FakeLauncher(events),
                  probe=FakeProbe(events, cpu=[]), policy=policy, watcher=watcher)


def test_every_measure_stage_is_sampled_and_a_disturbed_trial_is_kept_and_marked(
        tmp_path: Path) -> None:
    events: Events = []
    watcher = FakeWatcher([_sample(0.6)])
    summary = _runner(tmp_path, events, watcher, InterferencePolicy(), runs=2).execute()
    first, second = summary.rows
    assert events.count("measure") == 2 and len(watcher.scopes) == 2
    assert is_disturbed(first) and is_timed(first) and not is_disturbed(second)
    record = first["interference"]
    assert record is not None and record["cause"] == "60% of cpu0 went to pid 4321 " \
                                                     "(python3 hog.py)"
    assert summary.disturbed == 1
    assert watcher.scopes[0].servers == (4242,)  # the fake server's pid is kvperf's own


def test_retry_runs_a_disturbed_trial_once_more(tmp_path: Path) -> None:
    events: Events = []
    watcher = FakeWatcher([_sample(0.6)])
    runner = _runner(tmp_path, events, watcher, InterferencePolicy(retry=True))
    summary = runner.execute()
    assert events.count("measure") == 2 and events.count("server start") == 2
    (row,) = summary.rows  # one row: the second attempt
    record = row["interference"]
    assert record is not None and not record["disturbed"]
    assert record["attempt"] == 2 and record["retried"].startswith("60% of cpu0")


def test_retry_is_once_and_exclude_leaves_what_remains_out_of_timing(tmp_path: Path) -> None:
    events: Events = []
    watcher = FakeWatcher([_sample(0.6), _sample(0.5)])
    summary = _runner(tmp_path, events, watcher,
                      InterferencePolicy(retry=True, exclude=True)).execute()
    assert events.count("measure") == 2
    (row,) = summary.rows
    assert is_disturbed(row) and not is_timed(row)
    assert row["interference"] is not None and row["interference"]["excluded"]


def test_a_disturbed_duet_round_reruns_on_every_side(tmp_path: Path) -> None:
    events: Events = []
    watchers = {"A": FakeWatcher([_sample(0.6)]), "B": FakeWatcher([])}
    runners = {side: _runner(tmp_path, events, watchers[side],
                             InterferencePolicy(retry=True), label=side) for side in "AB"}
    result = interleave(runners, 7, RecordingObserver(events), Schedule.DUET)
    assert events.count("measure") == 4  # both sides, twice
    assert result.order == ["A", "B"] or result.order == ["B", "A"]  # started once each
    for side in "AB":
        (row,) = result.rows[side]
        record = row["interference"]
        assert record is not None and record["attempt"] == 2 and not record["disturbed"]
    retried_b = result.rows["B"][0]["interference"]
    assert retried_b is not None and retried_b["retried"] == \
        "a duet partner's trial was disturbed"


def test_the_watched_cores_are_the_pinned_ones_else_every_usable_cpu() -> None:
    pinned = watch_scope({"server": "0", "client": "1"}, [10], (0, 1, 2, 3))
    assert (pinned.cores, pinned.pinned, pinned.servers) == ((0, 1), True, (10,))
    unpinned_server = watch_scope({"server": "0-3", "client": "1"}, [10], (0, 1, 2, 3))
    assert (unpinned_server.cores, unpinned_server.pinned) == ((0, 1, 2, 3), False)
    no_client = watch_scope({"server": "0", "client": None}, [10], (0, 1, 2, 3))
    assert not no_client.pinned
    remote = watch_scope({"server": "5", "client": "1"}, [], (0, 1, 2, 3))
    assert (remote.cores, remote.pinned) == ((1,), True)  # a remote server's CPUs are not ours
