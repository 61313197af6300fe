"""The bisect workflow over a fake bench (builds and interleaved runs recorded, rows made up):
the steps it takes, the log it writes after every batch, and --resume reading it back."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kvperf.analysis.bisect import Mark, series_text
from kvperf.analysis.verdict import Verdict
from kvperf.core.errors import Interrupted, UsageError
from kvperf.core.kinds import Measure
from kvperf.definitions.model import Definition, ToolConfig
from kvperf.definitions.plan import Plan, plan_all
from kvperf.definitions.topology import BUILTIN
from kvperf.pipeline.bisect import BisectRequest, ChangePoint, bisect, change_point_request
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.pipeline.sides.sides import Side, SidesRequest
from kvperf.results.row import FORMAT_VERSION
from kvperf.sourcebuild.builder import Build
from kvperf.sourcebuild.git_log import CommitInfo
from kvperf.store.files import write_json_atomic
from tests.helpers import write_config

SHAS = [f"{i:x}" * 40 for i in range(9)]  # 0 GOOD … 8 BAD
BROKEN, SLOW = 4, 6
CONFIG = {"requests": 20000, "keyspacelen": 1000, "data_sizes": 64, "pipelines": 16,
          "clients": 1, "commands": ["SET", "GET"], "warmup": 0}
SERIES = "SET d=64 P=16 c=1"


def _row(command: str, run: int, total: float) -> dict[str, Any]:
    return {"kvperf_format": FORMAT_VERSION, "status": "ok", "command": command,
            "data_size": 64, "pipeline": 16, "clients": 1, "requests": 20000,
            "keyspacelen": 1000, "warmup": 0, "cluster_mode": False, "tls": False,
            "io_threads": None, "run": run, "trial_id": command,
            "instructions": {"total_per_request": total, "command_per_call": total / 4,
                             "function": "setCommand" if command == "SET" else "getCommand",
                             "top_functions": {"setCommand": total / 4}}}


@dataclass
class FakeBench:
    """SET costs 2% more from SLOW on; BROKEN does not build; runs write metrics.json."""

    interrupt_after: int | None = None
    slow: int = SLOW
    built: list[int] = field(default_factory=list)
    ran: list[int] = field(default_factory=list)

    def resolve(self, ref: str) -> str:
        return SHAS[0] if ref == "good" else SHAS[-1] if ref == "bad" else ref

    def commits(self, good: str, bad: str) -> list[CommitInfo]:
        when = datetime(2025, 5, 2, tzinfo=UTC)
        first, last = SHAS.index(good), SHAS.index(bad)
        return [CommitInfo(SHAS[i], when, "a", f"commit {i}") for i in range(first + 1, last + 1)]

    def build(self, sha: str) -> Build:
        index = SHAS.index(sha)
        self.built.append(index)
        if index == BROKEN:
            return Build(sha, sha, None, "build failed: oops", 1.0, False, None)
        return Build(sha, sha, Path(f"/bin/server-{index}"), None, 1.0, False, None)

    def run(self, request: SidesRequest, sides: list[Side]) -> SidesResult:
        if self.interrupt_after is not None and len(self.ran) >= self.interrupt_after:
            write_json_atomic(request.out_dir / "A" / "metrics.json", [_row("SET", 1, 1.0)])
            raise Interrupted("received SIGINT")  # a batch's first row kept, as the runner does
        index = SHAS.index(sides[1].commit or "")
        self.ran.append(index)
        rows: dict[str, list[Any]] = {}
        for side, commit in (("A", 0), ("B", index)):
            cost = 1020.0 if commit >= self.slow else 1000.0
            rows[side] = [_row(c, run, v + run * 0.01) for run in range(1, request.runs + 1)
                          for c, v in (("SET", cost), ("GET", 900.0))]
            write_json_atomic(request.out_dir / side / "metrics.json", rows[side])
        return SidesResult(rows, 7)

    def run_definitions(self, plans: tuple[Plan, ...], sides: list[Side], out_dir: Path,
                        runs: int, seed: int | None) -> SidesResult:
        """Each plan's test: rps 100k, 15% less from SLOW on (a little noise per run)."""
        index = SHAS.index(sides[1].commit or "")
        self.ran.append(index)
        rows: dict[str, list[Any]] = {}
        for side, commit in (("A", 0), ("B", index)):
            rps = 85_000.0 if commit >= self.slow else 100_000.0
            rows[side] = [_definition_row(p.name, p.topology.name, run,
                                          rps * (1 + 0.003 * ((run * 7 + commit) % 3 - 1)))
                          for run in range(1, runs + 1) for p in plans]
            write_json_atomic(out_dir / side / "metrics.json", rows[side])
        return SidesResult(rows, seed or 0)


def _definition_row(name: str, topology: str, run: int, rps: float) -> dict[str, Any]:
    return {"kvperf_format": FORMAT_VERSION, "status": "ok", "command": name,
            "data_size": None, "pipeline": None, "clients": None, "requests": None,
            "duration": 1, "keyspacelen": None, "warmup": 0, "cluster_mode": False,
            "tls": False, "io_threads": None, "config_set": {"topology": topology},
            "run": run, "trial_id": name, "rps": rps, "measure": "timing",
            "definition": {"name": name}}


@dataclass
class Recorder:
    steps: list[tuple[int, str]] = field(default_factory=list)
    resumed: list[int] = field(default_factory=list)

    def started(self, log: Any, resumed: int) -> None:
        self.resumed.append(resumed)

    def step_finished(self, log: Any, step: Any) -> None:
        self.steps.append((step.index, str(step.mark)))


def _request(tmp_path: Path, **extra: Any) -> BisectRequest:
    config = write_config(tmp_path, [CONFIG])
    fields: dict[str, Any] = {"series": "SET P=16", "measure": Measure.INSTRUCTIONS,
                              "config": config, "results_dir": tmp_path / "results", **extra}
    return BisectRequest("good", "bad", str(tmp_path), **fields)


def test_finds_the_slow_commit_skipping_the_broken_one(tmp_path: Path) -> None:
    bench, seen = FakeBench(), Recorder()
    result = bisect(_request(tmp_path), bench, seen)
    log = result.log
    assert result.differ and log.direction is Verdict.REGRESSION and log.series == SERIES
    assert seen.steps == [(8, "bad"), (BROKEN, "skip"), (5, "good"), (SLOW, "bad")]
    assert log.outcome().found and log.commits[log.outcome().bad].sha == SHAS[SLOW]
    assert bench.ran == [8, 5, SLOW] and sorted(set(bench.built)) == [0, BROKEN, 5, SLOW, 8]
    slow = log.step_of(SLOW)
    assert slow is not None and slow.effect("GET d=64 P=16 c=1").verdict is Verdict.NO_CHANGE
    assert result.moved and result.moved[0].name == "setCommand"
    saved = json.loads((result.directory / "bisect.json").read_text())
    assert saved["kvperf_bisect"] == 1 and saved["steps"][1]["build_error"] == "build failed: oops"
    assert [s["mark"] for s in saved["steps"]] == ["bad", "skip", "good", "bad"]


def test_resume_does_not_redo_finished_steps(tmp_path: Path) -> None:
    with pytest.raises(Interrupted):
        bisect(_request(tmp_path), FakeBench(interrupt_after=2), Recorder())
    # steps 0 (BAD) and 1 (BROKEN, skipped) and 2 (index 5) are logged; 3 was interrupted
    with pytest.raises(UsageError, match="add --resume"):
        bisect(_request(tmp_path), FakeBench(), Recorder())
    bench, seen = FakeBench(), Recorder()
    result = bisect(_request(tmp_path, resume=True), bench, seen)
    assert seen.resumed == [3] and seen.steps == [(SLOW, "bad")]
    assert bench.ran == [SLOW] and BROKEN not in bench.built and 5 not in bench.built
    assert result.log.commits[result.log.outcome().bad].sha == SHAS[SLOW]
    assert len(result.log.steps) == 4 and result.moved[0].name == "setCommand"
    # the interrupted batch's directory is left alone: the step's batch went to the next one
    (slow,) = [s for s in result.log.steps if s.index == SLOW]
    assert [b.label for b in slow.batches] == [f"03-{SHAS[SLOW][:12]}-2"]
    assert (result.directory / f"03-{SHAS[SLOW][:12]}-1").is_dir()
    again = FakeBench()
    assert bisect(_request(tmp_path, resume=True), again, Recorder()).log.outcome().found
    assert again.ran == []


def test_resume_of_another_question_is_refused(tmp_path: Path) -> None:
    bisect(_request(tmp_path), FakeBench(), Recorder())
    with pytest.raises(UsageError, match="bisects runs 2, not 3"):
        bisect(_request(tmp_path, resume=True, runs=3), FakeBench(), Recorder())
    with pytest.raises(UsageError, match="no bisect log"):
        bisect(_request(tmp_path, resume=True, label="other"), FakeBench(), Recorder())


def test_good_and_bad_that_do_not_differ(tmp_path: Path) -> None:
    bench = FakeBench(slow=99)
    result = bisect(_request(tmp_path), bench, Recorder())
    assert not result.differ and result.log.steps[0].mark is Mark.GOOD
    assert bench.ran == [8]


def test_unknown_series_names_the_available_ones(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"'INCR' matches no series.*'SET d=64 P=16 c=1', "
                                         "'GET d=64 P=16 c=1'"):
        bisect(_request(tmp_path, series="INCR"), FakeBench(), Recorder())


def test_change_points_are_bisected_when_their_range_spans_unmeasured_commits(
        tmp_path: Path) -> None:
    params = {"command": "SET", "data_size": 64, "pipeline": 16, "clients": 50,
              "io_threads": None, "cluster_mode": False, "tls": True}
    assert series_text(params) == "SET d=64 P=16 c=50 tls"
    base = BisectRequest("", "", str(tmp_path), results_dir=tmp_path / "results")
    point = ChangePoint(SHAS[2], SHAS[7], series_text(params), "rps")
    request = change_point_request(base, point, FakeBench())
    assert not isinstance(request, str)
    assert (request.good, request.bad, request.series, request.metric, request.measure) == \
        (SHAS[2], SHAS[7], "SET d=64 P=16 c=50 tls", "rps", Measure.TIMING)
    assert request.label == f"bisect-{SHAS[2][:8]}-{SHAS[7][:8]}-rps-SET_d=64_P=16_c=50_tls"
    assert not request.resume
    adjacent = ChangePoint(SHAS[2], SHAS[3], "SET P=16", "rps")
    assert change_point_request(base, adjacent, FakeBench()) == \
        f"no unmeasured commit between them: the change is {SHAS[3][:12]}"
    counted = ChangePoint(SHAS[2], SHAS[7], "SET P=16", "instructions.total_per_request")
    assert "not a metric bisect measures" in str(change_point_request(base, counted,
                                                                      FakeBench()))


def _plans(*names: str) -> tuple[Plan, ...]:
    client = ToolConfig("memtier_benchmark", "--command 'SET __key__ __data__' "
                                             "--test-time 60 -c 2 -t 1")
    planned = plan_all(tuple(Definition(name=n, source=Path(f"/defs/{n}.yml"),
                                        topologies=("oss-standalone",), clients=(client,))
                             for n in names), BUILTIN, 1)
    assert all(isinstance(p, Plan) for p in planned), planned
    return tuple(p for p in planned if isinstance(p, Plan))


def test_definitions_bisect_by_test_name_with_timing(tmp_path: Path) -> None:
    request = BisectRequest("good", "bad", str(tmp_path), series="set-b",
                            results_dir=tmp_path / "results",
                            definitions=_plans("set-a", "set-b"),
                            definition_paths=("/defs",))
    bench = FakeBench()
    result = bisect(request, bench, Recorder())
    log = result.log
    assert (log.series, log.metric, log.measure, log.runs) == ("set-b", "rps", "timing", 5)
    assert log.config == "definitions: /defs"
    assert log.commits[log.outcome().bad].sha == SHAS[SLOW] and result.moved == []
    assert bench.ran == [8, 5, SLOW]  # BROKEN does not build: skipped, never run
    first = log.steps[0].effect("set-b")
    assert first is not None and first.verdict is Verdict.REGRESSION
    # a step that may look again as runs are added (5 up to 15) is judged at α / 11, as
    # compare --runs auto judges its looks (analysis/sequential.py)
    assert first.reason.endswith("≤ 0.000909091"), first.reason


def test_definitions_refuse_what_does_not_apply(tmp_path: Path) -> None:
    plans = _plans("set-a", "set-b")
    base = BisectRequest("good", "bad", str(tmp_path), results_dir=tmp_path / "results",
                         definitions=plans)
    with pytest.raises(UsageError, match="--measure instructions does not apply"):
        bisect(replace(base, measure=Measure.INSTRUCTIONS), FakeBench(), Recorder())
    with pytest.raises(UsageError, match="--config does not apply"):
        bisect(replace(base, config=tmp_path / "c.json"), FakeBench(), Recorder())
    with pytest.raises(UsageError, match=r"name one with --series.*'set-a', 'set-b'"):
        bisect(base, FakeBench(), Recorder())
