"""`--runs auto` in the interleaver (pipeline/sides/ab.py): the check runs after each whole
round, and the rounds after a stop are never started; every finished row was persisted.
test_lifecycle's recording fakes stand in for servers and the load tool."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kvperf.config.loader import parse_config
from kvperf.pipeline.run.runner import Runner
from kvperf.pipeline.sides.ab import Rounds, SidesResult, interleave
from kvperf.plan.matrix import expand
from tests.unit.pipeline.run.test_lifecycle import (
    Events,
    FakeDriver,
    FakeLauncher,
    FakeProbe,
    RecordingObserver,
    _prepared,
)


def _runners(tmp_path: Path, events: Events, runs: int) -> dict[str, Runner]:
    return {side: Runner(_prepared(tmp_path / side, FakeDriver(events), runs),
                         RecordingObserver(events), launcher=FakeLauncher(events),
                         probe=FakeProbe(events, cpu=[]))
            for side in "AB"}


def test_rounds_stop_when_the_check_says_so(tmp_path: Path) -> None:
    events: Events = []
    looked: list[tuple[int, int, int]] = []

    def stop(result: SidesResult, rounds: int) -> bool:
        looked.append((rounds, len(result.rows["A"]), len(result.rows["B"])))
        return rounds == 3

    result = interleave(_runners(tmp_path, events, runs=12), 5, RecordingObserver(events),
                        rounds=Rounds(1, stop))
    assert looked == [(1, 1, 1), (2, 2, 2), (3, 3, 3)]  # after each whole round
    assert [r["run"] for r in result.rows["A"]] == [r["run"] for r in result.rows["B"]] == \
        [1, 2, 3]
    assert events.count("measure") == 6  # nothing of round 4 started
    for side in "AB":
        assert (tmp_path / side / "life" / "metrics.json").read_text().count('"run": ') == 3


def test_without_a_check_every_round_runs(tmp_path: Path) -> None:
    events: Events = []
    result = interleave(_runners(tmp_path, events, runs=4), 5, RecordingObserver(events))
    assert len(result.rows["A"]) == len(result.rows["B"]) == 4


def test_a_stopped_series_runs_no_more_rounds(tmp_path: Path) -> None:
    """Two series a round (GET, SET); SET stops after round 2 (``skip`` says so from then
    on): rounds 3 and 4 run GET alone, on both sides, and the check still comes after each
    round."""
    events: Events = []
    looked: list[int] = []
    specs = parse_config([{"commands": ["GET", "SET"], "duration": 1, "warmup": 1,
                           "keyspacelen": 10}], {0, 1})
    runners = {}
    for side in "AB":
        prepared = _prepared(tmp_path / side, FakeDriver(events), 4)
        prepared = replace(prepared, specs=specs, trials=expand(specs, 4))
        runners[side] = Runner(prepared, RecordingObserver(events),
                               launcher=FakeLauncher(events), probe=FakeProbe(events, cpu=[]))

    def stop(result: SidesResult, rounds: int) -> bool:
        looked.append(rounds)
        return rounds == 4

    result = interleave(runners, 5, RecordingObserver(events),
                        rounds=Rounds(2, stop, lambda row: row["command"] == "SET" and
                                      len(looked) >= 2))
    assert looked == [1, 2, 3, 4]
    for side in "AB":
        runs = {c: [r["run"] for r in result.rows[side] if r["command"] == c]
                for c in ("GET", "SET")}
        assert runs == {"GET": [1, 2, 3, 4], "SET": [1, 2]}, runs
    assert events.count("measure") == 12  # 2 sides × (2 + 2 + 1 + 1)
    # the progress total: 16 works at first; once SET stopped (after round 2), its 2
    # rounds left on 2 sides are off it
    shown = [e.removeprefix("trial ") for e in events if e.startswith("trial ")]
    assert shown == [f"{k}/16" for k in range(1, 9)] + ["9/12", "10/12", "11/12", "12/12"], \
        shown
