#!/usr/bin/env python3
"""Where the whole corpus' time goes (issue 39, item 6): the runnable corpus — every
definition `kvperf run --definitions … --dry-run` plans on this machine — run through one
`kvperf run --definitions DIR --override-test-time 2` into one results dir, then per tested
group and in total: definitions, runs (definition × topology), wall time, preload time (fresh
preloads, snapshot loads and servers reused from the test before apart, from the rows'
`definition.preload`), the snapshot saves,
replica start and sync (the rows' `replicas` and `replica_sync` stages), the measure stage,
and everything else (server start and stop, init, checks, the tool's start-up: the wall time
no stage above accounts for), and the request-bound runs apart: `--override-test-time`
shortens a `--test-time` only, a client bound by `-n` runs its requests whole.

`--cold` starts from an empty snapshot cache of its own (OUT/snapshots, emptied first);
without it the run is warm: it uses the cache a previous run left there. `--sample N` runs N
of the planned definition files drawn with `--seed`, and the total is then projected onto
everything planned by kind: the time-bound runs' mean wall × the planned time-bound runs,
the same for the request-bound ones (kvperf's planner says which each plan is); one
request-bound run in a small sample weighs as much as the 47 the corpus plans, so read it
with the kinds' lines above it. A second projection goes by dataset size class instead (the
preload's keys × value size, estimated from its memtier options by `dataset_bytes`: no
preload, under 10 MB, 10–100 MB, 100 MB–1 GB, 1 GB and more): each class's mean wall per
run × its planned runs, a class the sample missed at the overall mean; it also prints the
estimated data the planned runs build, in all. `--groups G …` runs only definitions
testing those groups.
Progress: kvperf's own line per finished test, with the elapsed time.

`--no-server-reuse` gives every test a fresh server (kvperf's flag), for a before/after
comparison of server reuse on the same sample. `--cap-request-bound` (kvperf's flag) ends
the request-bound clients at the test time too (their rows still count as request-bound).

Usage: python3 benchmarks/corpus_time.py [--definitions DIR] [--sample N] [--seed S]
           [--groups G …] [--cold] [--out DIR] [--test-time S] [--no-server-reuse]
           [--cap-request-bound]
Exit status: 1 if any planned test failed, 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kvperf.results.row import Row

CORPUS_VERSION = "0.3.47"  # tests/fixtures/corpus.py's pinned wheel
PLAN_LINE = re.compile(r"^plan\s+(?P<name>\S+) \[(?P<topology>[^:\]]+)")
PROGRESS = re.compile(r"^\[(?P<position>\d+)/(?P<total>\d+)\] (?P<name>\S+) on "
                      r"(?P<topology>[^:]+):")
REQUEST_BOUND, TIME_BOUND = "request-bound", "time-bound"
KEY_OVERHEAD = 50  # bytes a key costs besides its value (name, dict entry, object header)
SIZE_CLASSES = ((0, "no preload"), (1, "< 10 MB"), (10**7, "10-100 MB"),
                (10**8, "100 MB-1 GB"), (10**9, ">= 1 GB"))


@dataclass
class Totals:
    """One group's (or the whole run's) figures, in seconds."""

    definitions: set[str] = field(default_factory=set)
    runs: int = 0
    failed: int = 0
    wall: float = 0.0
    fresh: float = 0.0  # preloads run for real (definition.preload.seconds)
    fresh_count: int = 0
    snapshot: float = 0.0  # starts from a snapshot: the load and its checks
    snapshot_count: int = 0
    reused: float = 0.0  # on the server the test before left: its data's check
    reused_count: int = 0
    save: float = 0.0  # snapshot saves after a fresh preload
    replicas: float = 0.0  # replicas started and in sync (stages replicas, replica_sync)
    measure: float = 0.0
    bound: int = 0  # request-bound runs (-n: --override-test-time leaves them whole)
    bound_wall: float = 0.0

    @property
    def other(self) -> float:
        return max(self.wall - self.fresh - self.snapshot - self.reused - self.save
                   - self.replicas - self.measure, 0.0)

    def add(self, row: Row, wall: float) -> None:
        stages = row.get("stage_seconds") or {}
        preload = (row.get("definition") or {}).get("preload") or {}
        self.definitions.add(row["command"])
        self.runs += 1
        self.failed += 1 if row.get("error") else 0
        self.wall += wall
        seconds = preload.get("seconds") or 0.0
        if preload.get("source") == "snapshot":
            self.snapshot += seconds
            self.snapshot_count += 1
        elif preload.get("source") == "reused":
            self.reused += seconds
            self.reused_count += 1
        elif preload:
            self.fresh += seconds
            self.fresh_count += 1
        self.save += stages.get("snapshot_save", 0.0)
        self.replicas += stages.get("replicas", 0.0) + stages.get("replica_sync", 0.0)
        self.measure += stages.get("measure", 0.0)
        if row.get("requests") is not None and row.get("duration") is None:
            self.bound += 1
            self.bound_wall += wall


def group_of(row: Row) -> str:
    """A row's tested group: the definition's first (so the groups' totals add up)."""
    groups = (row.get("definition") or {}).get("tested_groups") or []
    return groups[0] if groups else "(none)"


def kind_of(row: Row) -> str:
    """``request-bound`` (a client bound by -n: --override-test-time leaves it whole) or
    ``time-bound``."""
    bound = row.get("requests") is not None and row.get("duration") is None
    return REQUEST_BOUND if bound else TIME_BOUND


def summarize(rows: Iterable[Row], walls: dict[tuple[str, str], float],
              key: Callable[[Row], str] = group_of) -> dict[str, Totals]:
    """Per ``key`` (the tested group) and ``"total"``: the rows' figures, each row's wall
    time from ``walls`` (by (definition, topology); a row without one counts its stages')."""
    out: dict[str, Totals] = {}
    for row in rows:
        test = (row["command"], (row.get("config_set") or {}).get("topology", "?"))
        wall = walls.get(test, sum((row.get("stage_seconds") or {}).values()))
        for name in (key(row), "total"):
            out.setdefault(name, Totals()).add(row, wall)
    return out


def project(summary: dict[str, Totals], planned_runs: dict[str, int]) -> float:
    """Seconds the whole runnable corpus would take: per key (request- or time-bound) its
    sample's mean wall per run × its planned runs; a key the sample missed at the overall
    mean."""
    total = summary["total"]
    overall = total.wall / total.runs if total.runs else 0.0
    seconds = 0.0
    for group, runs in planned_runs.items():
        found = summary.get(group)
        seconds += runs * (found.wall / found.runs if found and found.runs else overall)
    return seconds


def table(summary: dict[str, Totals]) -> str:
    """The figures as a markdown table (groups by wall time, the total last)."""
    head = ("| group | definitions | runs | wall s | preload fresh s (n) | snapshot load s (n)"
            " | server reused: check s (n) | snapshot save s | replicas start+sync s"
            " | measure s | everything else s | request-bound runs (wall s) |")
    lines = [head, "|" + " --- |" * 12]
    order = sorted((g for g in summary if g != "total"), key=lambda g: -summary[g].wall)
    for name in (*order, "total"):
        t = summary[name]
        label = f"**{name}**" if name == "total" else name
        lines.append(f"| {label} | {len(t.definitions)} | {t.runs} | {t.wall:.0f} | "
                     f"{t.fresh:.0f} ({t.fresh_count}) | {t.snapshot:.0f} ({t.snapshot_count})"
                     f" | {t.reused:.0f} ({t.reused_count}) | {t.save:.0f} | {t.replicas:.0f}"
                     f" | {t.measure:.0f} | {t.other:.0f} | "
                     f"{t.bound} ({t.bound_wall:.0f}) |")
    return "\n".join(lines)


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def default_definitions() -> Path:
    cache = Path(os.environ.get("KVPERF_TEST_CACHE", Path.home() / ".cache/kvperf-tests"))
    return (cache / "corpus" / CORPUS_VERSION / "redis_benchmarks_specification"
            / "test-suites")


def kvperf_args(definitions: Path, test_time: int, groups: Sequence[str],
                cap: bool = False) -> list[str]:
    more = ["--tested-groups", *groups] if groups else []
    return ["run", "--definitions", str(definitions), "--override-test-time",
            str(test_time), *more, *(["--cap-request-bound"] if cap else [])]


def planned(definitions: Path, test_time: int, groups: Sequence[str]
            ) -> list[tuple[str, str]]:
    """(definition, topology) of every run the dry run plans."""
    done = subprocess.run(["kvperf", *kvperf_args(definitions, test_time, groups),
                           "--dry-run"], capture_output=True, text=True, check=False)
    found = [(m["name"], m["topology"]) for m in map(PLAN_LINE.match,
                                                     done.stdout.splitlines()) if m]
    if not found:
        print(f"corpus_time: the dry run of {definitions} planned nothing (exit "
              f"{done.returncode}):\n{done.stderr[-2000:]}", file=sys.stderr)
        raise SystemExit(2)
    return found


def dataset_bytes(preload_argv: Sequence[str] | None) -> int:
    """The data a memtier preload builds, estimated from its options: requests (``allkeys``:
    the key range; N: N per client × clients × threads; memtier's default 10,000) × (the
    values each writes — its ``__data__`` placeholders, 1 for memtier's own SET — × the
    data size, default 32, + ``KEY_OVERHEAD``). An order of magnitude, for size classes."""
    if preload_argv is None:
        return 0
    from kvperf.definitions import memtier

    options = memtier.parse(list(preload_argv))

    def number(name: str, default: int) -> int:
        given = memtier.value(options, name)
        return int(given) if given is not None and given.isdigit() else default

    requests = memtier.value(options, "requests")
    if requests == "allkeys":
        count = number("key-maximum", 10_000_000) - number("key-minimum", 0) + 1
    else:
        count = number("requests", 10_000) * number("clients", 50) * number("threads", 4)
    commands = [o.value or "" for o in options if o.name == "command"]
    values = max((c.count("__data__") for c in commands), default=1) if commands else 1
    return count * (max(values, 1) * number("data-size", 32) + KEY_OVERHEAD)


def size_class(volume: int) -> str:
    """The name of ``volume``'s class (``SIZE_CLASSES``: the last whose floor it reaches)."""
    return [name for floor, name in SIZE_CLASSES if volume >= floor][-1]


@dataclass(frozen=True)
class Planned:
    """A planned run's first tested group, kind and estimated dataset (``dataset_bytes``)."""

    group: str
    kind: str
    volume: int


def inventory(definitions: Path, test_time: int) -> dict[tuple[str, str], Planned]:
    """Each (definition, topology) plan's first tested group, kind and estimated dataset
    (kvperf's loader and planner; the dry run decides what runs here)."""
    from kvperf.definitions.loader import load
    from kvperf.definitions.plan import plan_all, plans_of

    loaded = load([definitions])
    found: dict[tuple[str, str], Planned] = {}
    for plan in plans_of(plan_all(loaded.definitions, loaded.topologies, test_time)):
        groups = plan.definition.tested_groups
        first = plan.clients[0] if plan.clients else None
        bound = first is not None and first.test_time is None and bool(first.requests)
        found[(plan.name, plan.topology.name)] = Planned(
            groups[0] if groups else "(none)", REQUEST_BOUND if bound else TIME_BOUND,
            dataset_bytes(plan.preload.argv if plan.preload else None))
    return found


def run(args: list[str], started: float) -> tuple[int, dict[tuple[str, str], float]]:
    """kvperf run, its progress lines forwarded with the elapsed time; each test's wall
    time: from the previous test's line (the first: from kvperf's start) to its own."""
    walls: dict[tuple[str, str], float] = {}
    with subprocess.Popen(["kvperf", *args], stderr=subprocess.PIPE,
                          stdout=subprocess.DEVNULL, text=True) as process:
        assert process.stderr is not None
        last = started
        for line in process.stderr:
            now = time.monotonic()
            print(f"[{now - started:7.1f}s] {line.rstrip()}", file=sys.stderr, flush=True)
            found = PROGRESS.match(line)
            if found:
                walls[(found["name"], found["topology"])] = now - last
                last = now
    return process.returncode, walls


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--definitions", type=Path, default=default_definitions(),
                        help="the corpus' test-suites folder (default: the test cache's)")
    parser.add_argument("--sample", type=int, help="N planned definition files, drawn")
    parser.add_argument("--seed", default="39", help="the sample's seed (default 39)")
    parser.add_argument("--groups", nargs="+", default=[], help="only these tested groups")
    parser.add_argument("--cold", action="store_true",
                        help="start from an empty snapshot cache (OUT/snapshots emptied)")
    parser.add_argument("--out", type=Path, default=Path("corpus-time"),
                        help="results and snapshot cache (default ./corpus-time)")
    parser.add_argument("--test-time", type=int, default=2)
    parser.add_argument("--no-server-reuse", action="store_true",
                        help="kvperf's --no-server-reuse: a fresh server for every test (the "
                             "run is labelled cold- or warm-no-reuse)")
    parser.add_argument("--cap-request-bound", action="store_true",
                        help="kvperf's --cap-request-bound: request-bound clients end at the "
                             "test time too (the label gets -capped)")
    args = parser.parse_args(argv)
    if not args.definitions.is_dir():
        parser.error(f"--definitions {args.definitions}: no such folder (python3 "
                     "tests/fixtures/corpus.py unpacks the corpus)")
    if args.sample is not None and args.sample < 1:
        parser.error(f"--sample {args.sample}: give at least 1")
    return args


def chosen(runs: list[tuple[str, str]], sample: int | None, seed: str) -> list[str]:
    """The definitions to run: all planned, or ``sample`` of them drawn with ``seed``."""
    names = sorted({name for name, _ in runs})
    if sample is None or sample >= len(names):
        return names
    return sorted(random.Random(seed).sample(names, sample))


def _test(row: Row) -> tuple[str, str]:
    return row["command"], (row.get("config_set") or {}).get("topology", "?")


def by_size(rows: list[Row], walls: dict[tuple[str, str], float], runs: list[tuple[str, str]],
            planned: dict[tuple[str, str], Planned]) -> str:
    """The projection by dataset size class: the sample's mean wall per run in each class ×
    the class's planned runs, and the estimated data all planned runs build."""
    def volume(test: tuple[str, str]) -> int:
        found = planned.get(test)
        return found.volume if found else 0

    classes = summarize(rows, walls, lambda r: size_class(volume(_test(r))))
    per_class = dict(Counter(size_class(volume(test)) for test in runs))
    lines = []
    for _, name in SIZE_CLASSES:
        found = classes.get(name, Totals())
        mean = f" at {found.wall / found.runs:.1f} s a run" if found.runs else ""
        lines.append(f"{name}: {per_class.get(name, 0)} planned, sample {found.runs} "
                     f"run(s){mean}")
    data = sum(volume(test) for test in runs) / 1e9
    return ("\n".join(lines) + f"\nprojected by dataset size class: "
            f"{minutes(project(classes, per_class))}; the planned runs build ~{data:.0f} GB "
            "of data in all (estimated from the preloads' options)")


def report(rows: list[Row], walls: dict[tuple[str, str], float], wall: float,
           runs: list[tuple[str, str]], planned: dict[tuple[str, str], Planned],
           label: str) -> None:
    summary = summarize(rows, walls)
    print(f"\n{label}: {len(rows)} run(s) of {len(summary['total'].definitions)} "
          f"definition(s) in {minutes(wall)} (kvperf's start and planning included)\n")
    print(table(summary))
    kinds = summarize(rows, walls, kind_of)
    print("\n" + "\n".join(f"{k}: {t.runs} run(s), {t.wall / t.runs:.1f} s a run"
                            for k, t in kinds.items() if k != "total" and t.runs))
    if len(rows) < len(runs):
        per_kind: dict[str, int] = {}
        for test in runs:
            kind = planned[test].kind if test in planned else TIME_BOUND
            per_kind[kind] = per_kind.get(kind, 0) + 1
        print(f"\nprojected for everything planned ({len({n for n, _ in runs})} "
              f"definitions, {len(runs)} runs: {per_kind.get(TIME_BOUND, 0)} time-bound, "
              f"{per_kind.get(REQUEST_BOUND, 0)} request-bound): "
              f"{minutes(project(kinds, per_kind))} (each kind's mean per run × its "
              "planned runs)")
        print("\n" + by_size(rows, walls, runs, planned))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    label = ("cold" if args.cold else "warm") + ("-no-reuse" if args.no_server_reuse else "") \
        + ("-capped" if args.cap_request_bound else "")
    cache, results = args.out / "snapshots", args.out / "results"
    if args.cold:
        shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(results / label, ignore_errors=True)
    runs = planned(args.definitions, args.test_time, args.groups)
    names = chosen(runs, args.sample, args.seed)
    print(f"{label}: {len(names)} of {len({n for n, _ in runs})} planned definition(s), "
          f"snapshot cache {cache}", file=sys.stderr, flush=True)
    regexp = "^(" + "|".join(re.escape(n) for n in names) + ")$"
    started = time.monotonic()
    code, walls = run([*kvperf_args(args.definitions, args.test_time, args.groups,
                                    args.cap_request_bound),
                       "--tests-regexp", regexp, "--results-dir", str(results), "--label",
                       label, "--no-db", "--snapshot-cache", str(cache),
                       *(["--no-server-reuse"] if args.no_server_reuse else [])], started)
    wall = time.monotonic() - started
    metrics = results / label / "metrics.json"
    rows: list[Row] = json.loads(metrics.read_text()) if metrics.is_file() else []
    if not rows:
        print(f"corpus_time: kvperf run exited {code} and wrote no rows", file=sys.stderr)
        return 1
    report(rows, walls, wall, runs, inventory(args.definitions, args.test_time), label)
    failed = [r for r in rows if r.get("error")]
    for row in failed:
        print(f"failed: {row['command']}: {row['error']}", file=sys.stderr)
    return 1 if failed or code not in (0,) else 0


if __name__ == "__main__":
    raise SystemExit(main())
