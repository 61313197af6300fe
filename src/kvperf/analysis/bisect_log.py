"""The bisect log: what `kvperf bisect` decided so far, as data (``<results-dir>/<label>/
bisect.json``, written by pipeline/bisect.py after every batch of runs), and read back by
``--resume``.

Format ``kvperf_bisect`` 1: the question (repository, GOOD and BAD shas, config — its path,
or built-in — series, metric, measure, runs, budget), the commits GOOD..BAD along first
parents (GOOD first), the direction the first step found, and every step: its commit, its
batches of runs (result directories under the log's directory, with their runs per side and
order seed), the build error of a commit that did not build, each series' effect on the
metric, and the mark once decided (a step without a mark was interrupted: ``--resume``
continues it from its batches).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

from kvperf.analysis.bisect import Mark, Outcome, SeriesEffect, next_candidate, outcome
from kvperf.analysis.verdict import Verdict
from kvperf.core.errors import UsageError
from kvperf.core.jsontypes import JsonObject

LOG_VERSION = 1
LOG_NAME = "bisect.json"


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str


@dataclass(frozen=True)
class Batch:
    """One interleaved run of a step: its directory (relative to the log), runs, seed."""

    label: str
    runs: int
    seed: int


@dataclass
class Step:
    """GOOD vs one commit (``index`` into the log's commits); ``number`` 0 is GOOD vs BAD."""

    number: int
    index: int
    sha: str
    subject: str
    batches: list[Batch] = field(default_factory=list)
    effects: list[SeriesEffect] = field(default_factory=list)
    mark: Mark | None = None
    build_error: str | None = None

    @property
    def runs(self) -> int:
        return sum(b.runs for b in self.batches)

    def effect(self, series: str) -> SeriesEffect | None:
        return next((e for e in self.effects if e.series == series), None)


@dataclass
class BisectLog:
    """The question and every step so far (module doc)."""

    repo: str
    good: str
    bad: str
    series: str
    metric: str
    measure: str
    runs: int
    max_runs: int
    commits: list[Commit]
    config: str = "built-in"
    direction: Verdict | None = None
    steps: list[Step] = field(default_factory=list)

    def marks(self) -> dict[int, Mark]:
        return {s.index: s.mark for s in self.steps if s.mark is not None and s.number > 0}

    def outcome(self) -> Outcome:
        return outcome(len(self.commits), self.marks())

    def next_index(self) -> int | None:
        return next_candidate(len(self.commits), self.marks())

    def pending(self) -> Step | None:
        """The step an interruption left without a mark, if any."""
        return next((s for s in self.steps if s.mark is None), None)

    def step_of(self, index: int) -> Step | None:
        """The decided step that tested commit ``index`` (BAD: the first step)."""
        return next((s for s in reversed(self.steps) if s.index == index and s.mark), None)


QUESTION = ("repo", "good", "bad", "config", "series", "metric", "measure", "runs",
            "max_runs")


def _number(x: float) -> float | None:
    return None if math.isnan(x) else x


def _effect_json(e: SeriesEffect) -> JsonObject:
    out = {f.name: getattr(e, f.name) for f in fields(e)}
    return out | {k: _number(out[k]) for k in ("change", "low", "high")} | \
        {"verdict": str(e.verdict)}


def _effect(d: JsonObject) -> SeriesEffect:
    nan = {k: math.nan if d.get(k) is None else float(d[k]) for k in ("change", "low", "high")}
    return SeriesEffect(str(d["series"]), Verdict(d["verdict"]), nan["change"], nan["low"],
                        nan["high"], str(d.get("reason", "")), d.get("runs_needed"),
                        int(d.get("runs", 0)))


def to_json(log: BisectLog) -> JsonObject:
    """The log as the JSON document (module doc)."""
    steps = [{"number": s.number, "index": s.index, "sha": s.sha, "subject": s.subject,
              "mark": s.mark and str(s.mark), "build_error": s.build_error, "runs": s.runs,
              "batches": [vars(b) for b in s.batches],
              "effects": [_effect_json(e) for e in s.effects]} for s in log.steps]
    return {"kvperf_bisect": LOG_VERSION, **{k: getattr(log, k) for k in QUESTION},
            "direction": log.direction and str(log.direction),
            "commits": [vars(c) for c in log.commits], "steps": steps}


def _step(d: JsonObject) -> Step:
    return Step(int(d["number"]), int(d["index"]), str(d["sha"]), str(d["subject"]),
                [Batch(str(b["label"]), int(b["runs"]), int(b["seed"])) for b in d["batches"]],
                [_effect(e) for e in d["effects"]], Mark(d["mark"]) if d["mark"] else None,
                d.get("build_error"))


def from_json(data: Any, source: str) -> BisectLog:
    """A log read back; UsageError naming ``source`` when it is not one this kvperf reads."""
    version = data.get("kvperf_bisect") if isinstance(data, dict) else None
    if version != LOG_VERSION:
        raise UsageError(f"{source}: not a kvperf bisect log of format {LOG_VERSION} "
                         f"(kvperf_bisect: {version!r})")
    try:
        return BisectLog(**{k: data[k] for k in QUESTION},
                         commits=[Commit(str(c["sha"]), str(c["subject"]))
                                  for c in data["commits"]],
                         direction=Verdict(data["direction"]) if data["direction"] else None,
                         steps=[_step(s) for s in data["steps"]])
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{source}: a damaged bisect log ({exc!r})") from None


def check_same_question(log: BisectLog, wanted: BisectLog, source: str) -> None:
    """--resume continues only the bisection it was asked for (UsageError naming the
    first difference)."""
    for key in QUESTION:
        if getattr(log, key) != getattr(wanted, key):
            raise UsageError(f"--resume: {source} bisects {key} {getattr(log, key)!r}, "
                             f"not {getattr(wanted, key)!r}; drop --resume and pick another "
                             "--label for a new bisection")
