"""benchmarks/corpus_time.py's figures from fixture rows (pure): each row counted once in its
first tested group and in the total, its preload as fresh, snapshot or reused, replica start and
sync together, the rest of its wall time as everything else; the projection per group."""

from __future__ import annotations

from benchmarks.corpus_time import (
    KEY_OVERHEAD,
    PLAN_LINE,
    PROGRESS,
    Planned,
    by_size,
    chosen,
    dataset_bytes,
    kind_of,
    project,
    size_class,
    summarize,
    table,
)

from kvperf.results.records import DefinitionRecord, PreloadRecord
from kvperf.results.row import Row


def row(name: str, topology: str, groups: list[str], stages: dict[str, float],
        preload: PreloadRecord | None = None, error: str | None = None, requests: int | None = None
        ) -> Row:
    definition: DefinitionRecord = {"name": name, "tested_groups": groups}
    if preload is not None:
        definition["preload"] = preload
    return {"command": name, "config_set": {"topology": topology}, "stage_seconds": stages,
            "definition": definition, "error": error, "requests": requests,
            "duration": None if requests else 2}


ROWS = [
    row("a", "oss-standalone", ["string", "hash"],
        {"server_start": 0.1, "preload": 10.0, "snapshot_save": 2.0, "measure": 2.5},
        PreloadRecord(source="fresh", seconds=10.0, saved="x")),
    row("a", "oss-standalone-1-replica", ["string", "hash"],
        {"server_start": 3.0, "snapshot_check": 0.2, "replicas": 4.0, "replica_sync": 1.0,
         "measure": 2.2}, PreloadRecord(source="snapshot", seconds=3.2, snapshot="x")),
    row("b", "oss-standalone", ["set"], {"server_start": 0.1, "measure": 2.0},
        error="the server executed no SADD call", requests=50000),
]
WALLS = {("a", "oss-standalone"): 16.0, ("a", "oss-standalone-1-replica"): 12.0,
         ("b", "oss-standalone"): 3.0}


def test_each_row_counts_in_its_first_group_and_the_total_with_its_parts_apart() -> None:
    summary = summarize(ROWS, WALLS)
    assert set(summary) == {"string", "set", "total"}  # "hash", a's second group, not counted
    string = summary["string"]
    assert (len(string.definitions), string.runs, string.wall) == (1, 2, 28.0)
    assert (string.fresh, string.fresh_count) == (10.0, 1)
    assert (string.snapshot, string.snapshot_count) == (3.2, 1)
    assert (string.save, string.replicas, string.measure) == (2.0, 5.0, 4.7)
    assert round(string.other, 6) == round(28.0 - 10.0 - 3.2 - 2.0 - 5.0 - 4.7, 6)
    total = summary["total"]
    assert (len(total.definitions), total.runs, total.failed, total.wall) == (2, 3, 1, 31.0)
    assert (string.bound, total.bound, total.bound_wall) == (0, 1, 3.0)  # b is bound by -n
    assert ("| **total** | 2 | 3 | 31 | 10 (1) | 3 (1) | 0 (0) | 2 | 5 | 7 | 4 | 1 (3) |"
            in table(summary))


def test_a_test_on_the_server_the_one_before_left_counts_as_reused() -> None:
    reused = row("c", "oss-standalone", ["set"], {"snapshot_check": 0.3, "measure": 2.0},
                 PreloadRecord(source="reused", seconds=0.3, snapshot="x",
                               reused_from="a on oss-standalone"))
    total = summarize([*ROWS, reused], {**WALLS, ("c", "oss-standalone"): 2.5})["total"]
    assert (total.reused, total.reused_count, total.fresh_count) == (0.3, 1, 1)
    assert (total.snapshot_count, total.runs) == (1, 4)
    assert round(total.other, 6) == round(33.5 - 10.0 - 3.2 - 0.3 - 2.0 - 5.0 - 8.7, 6)
    assert " | 0 (1) | " in table({"total": total})


def test_a_row_without_a_progress_line_counts_its_stages() -> None:
    assert summarize(ROWS[2:], {})["total"].wall == 2.1


def test_the_projection_scales_each_kind_by_its_planned_runs() -> None:
    kinds = summarize(ROWS, WALLS, kind_of)  # time-bound: 14 s a run, request-bound: 3 s
    assert (kinds["time-bound"].runs, kinds["request-bound"].runs) == (2, 1)
    assert project(kinds, {"time-bound": 10, "request-bound": 4}) == 10 * 14 + 4 * 3
    assert project(kinds, {"other": 3}) == 31  # a kind the sample missed: the overall mean


def test_the_sample_is_drawn_by_seed_from_the_planned_definitions() -> None:
    runs = [(f"d{i}", "oss-standalone") for i in range(20)] + [("d0", "oss-cluster")]
    assert chosen(runs, 5, "39") == chosen(runs, 5, "39") != chosen(runs, 5, "40")
    assert len(chosen(runs, 5, "39")) == 5 and len(chosen(runs, None, "39")) == 20


def test_the_dry_run_and_progress_lines_parse() -> None:
    plan = PLAN_LINE.match("plan    memtier_benchmark-x [oss-standalone: 1 primary]")
    assert plan is not None and (plan["name"], plan["topology"]) == (
        "memtier_benchmark-x", "oss-standalone")
    done = PROGRESS.match("[3/12] memtier_benchmark-x on oss-standalone-1-replica: ok 1 ops/s")
    assert done is not None and (done["name"], done["topology"]) == (
        "memtier_benchmark-x", "oss-standalone-1-replica")


def test_a_preload_s_data_is_estimated_from_its_options() -> None:
    allkeys = ("--key-minimum=1", "--key-maximum=3000000", "--requests=allkeys",
               "--data-size=1000", "--ratio=1:0", "--key-pattern=P:P")
    assert dataset_bytes(allkeys) == 3_000_000 * (1000 + KEY_OVERHEAD)
    hset = ("--command=HSET __key__ f1 __data__ f2 __data__", "--requests=1000", "-c", "5",
            "-t", "2", "--data-size=10")
    assert dataset_bytes(hset) == 1000 * 5 * 2 * (2 * 10 + KEY_OVERHEAD)
    assert dataset_bytes(("--ratio=1:0",)) == 10_000 * 50 * 4 * (32 + KEY_OVERHEAD)
    assert dataset_bytes(None) == 0
    assert [size_class(v) for v in (0, 5, 10**7, 3 * 10**8, 10**10)] == [
        "no preload", "< 10 MB", "10-100 MB", "100 MB-1 GB", ">= 1 GB"]


def test_the_size_projection_scales_each_class_by_its_planned_runs() -> None:
    planned = {("a", "oss-standalone"): Planned("string", "time-bound", 2 * 10**9),
               ("a", "oss-standalone-1-replica"): Planned("string", "time-bound", 2 * 10**9),
               ("b", "oss-standalone"): Planned("set", "request-bound", 0),
               ("c", "oss-standalone"): Planned("set", "time-bound", 0)}
    text = by_size(ROWS, WALLS, list(planned), planned)
    assert ">= 1 GB: 2 planned, sample 2 run(s) at 14.0 s a run" in text
    assert "no preload: 2 planned, sample 1 run(s) at 3.0 s a run" in text
    assert "projected by dataset size class: 0.6 min" in text  # 2 × 14 + 2 × 3 s = 34 s
    assert "~4 GB of data" in text
