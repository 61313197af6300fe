"""Definition-shard jobs (pure parts): files grouped by the preload they plan, the job
payload's round trip, and the corpus report's verdicts, order, totals and exit status."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kvperf.analysis.corpus import corpus_report
from kvperf.core.errors import StoreError
from kvperf.definitions.loader import load
from kvperf.definitions.plan import Plan, plan_all
from kvperf.definitions.shards import preload_key, shards
from kvperf.store.track import DefinitionsJob, definitions_job

TEMPLATE = """\
version: 0.4
name: {name}
dbconfig:
{preload}
clientconfig:
  tool: memtier_benchmark
  arguments: --ratio 1:0 --test-time 1 -c 1 -t 1
"""
PRELOAD = """\
  preload_tool:
    tool: memtier_benchmark
    arguments: --ratio 1:0 --key-maximum {keys} -n allkeys -c 1 -t 1
"""


def _plans(tmp_path: Path, specs: dict[str, int | None]) -> list[tuple[str, list[Plan]]]:
    for name, keys in specs.items():
        preload = PRELOAD.format(keys=keys) if keys else "  {}\n"
        (tmp_path / f"{name}.yml").write_text(TEMPLATE.format(name=name, preload=preload))
    loaded = load([tmp_path / f"{n}.yml" for n in specs])
    planned = plan_all(loaded.definitions, loaded.topologies, None, None,
                       file_exists=Path.is_file, machine=None)
    return [(p.definition.source.name, [p]) for p in planned if isinstance(p, Plan)]


def test_files_sharing_a_preload_share_a_shard(tmp_path: Path) -> None:
    files = _plans(tmp_path, {"a": 100, "b": 200, "c": 100, "d": None, "e": None, "f": 100})
    found = shards(files, max_files=8)
    assert [s.files for s in found] == [("a.yml", "c.yml", "f.yml"), ("b.yml",), ("d.yml",),
                                        ("e.yml",)]
    assert preload_key(files[0][1][0]) == found[0].key  # the shard's key is the preload's
    assert preload_key(files[3][1][0]) is None  # no preload: a shard of its own
    cut = shards(files, max_files=2)
    assert [s.files for s in cut][:2] == [("a.yml", "c.yml"), ("f.yml",)]
    assert len({s.key for s in cut}) == len(cut)  # every shard its own job identity
    assert sorted(s.files for s in shards(files, max_files=1)) == [(f,) for f, _ in files]


def test_job_payload_round_trip_and_identity() -> None:
    job = DefinitionsJob("k" * 64, ("strings/a.yml", "strings/b.yml"), "set", 2, ("oss",))
    config = job.config()
    assert definitions_job(config.content) == job
    assert config.name.startswith("definitions:")
    assert DefinitionsJob("k" * 64, ("strings/a.yml",)).config().hash != config.hash
    capped = replace(job, cap_request_bound=True)
    assert definitions_job(capped.config().content) == capped
    assert capped.config().hash != config.hash  # a job of its own
    assert "cap_request_bound" not in config.content  # earlier jobs keep their identity
    assert definitions_job('[{"commands": ["SET"]}]') is None  # a benchmark config
    with pytest.raises(StoreError, match="upgrade the runner"):
        definitions_job('{"format": "kvperf-definitions-job", "version": 2}')


def _row(name: str, rps: float, group: str = "string", ok: bool = True,
         kpis: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"command": name, "rps": rps if ok else None, "status": "ok" if ok else "failed",
            "error": None if ok else "server crashed", "config_set": {"topology": "oss"},
            "definition": {"name": name, "topology": "oss", "tested_groups": [group],
                           "kpis": kpis or []}}


def test_report_sorts_by_change_and_exits_on_regression_or_broken_kpi() -> None:
    base = [_row("set", 100_000), _row("get", 100_000, "generic"), _row("gone", 1000)]
    broken = {"path": "$.rps", "mode": "ge", "bound": 1e9, "value": 1e5, "passed": False,
              "reason": ""}
    new = [_row("get", 101_000, "generic", kpis=[broken]), _row("set", 70_000),
           _row("crash", 0, ok=False)]
    found = corpus_report("c" * 40, new, "b" * 40, base, ["refused x [oss]: 32g"])
    assert [(e.name, e.status, e.verdict) for e in found.entries] == [
        ("set", "ok", "regression"), ("get", "ok", "no change"), ("crash", "failed", "new"),
        ("gone", "not run", "")]
    assert found.entries[0].change == pytest.approx(-0.3)
    assert (found.regressions, found.kpis_failed, found.exit_code) == (1, 1, 1)
    totals = {t.group: (t.tests, t.regressions, t.failed, t.kpis_failed)
              for t in found.totals}
    assert totals == {"generic": (1, 0, 0, 1), "string": (2, 1, 1, 0)}
    quiet = corpus_report("c" * 40, [_row("set", 99_000)], "b" * 40, [_row("set", 100_000)])
    assert (quiet.entries[0].verdict, quiet.exit_code) == ("no change", 0)
    alone = corpus_report("c" * 40, [_row("set", 99_000)])
    assert (alone.entries[0].verdict, alone.entries[0].change, alone.exit_code) == ("", None, 0)
