"""`kvperf report --definitions` over a store that `track run` filled (issue 39): three
commits of the fixture's ``steps`` branch (tests/fixtures/valkey_steps.py: ``base``,
``steps-2`` with the same server code, ``steps-3`` whose SET costs ~10x) each run a tiny
corpus (a SET-heavy definition, a GET-only one, one refused for its memory request) built
by the runner from the job's commit; the report of steps-3 against steps-2 flags the SET
definition and not the GET one and lists the refusal with its reason (exit 1, in the
terminal, markdown and HTML), the A/A of steps-2 against base exits 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.valkey_steps import step_sha, steps_repo
from tests.helpers import run_kvperf

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_strays")]
# One run a side is judged against the water line; these VMs' timed runs wander by ±20%
# (valkey_steps.py), the slow commit's SET costs ~10x (-90% ops/s): 50% tells them apart.
WATER_LINE = "50"

DEFINITION = """\
version: 0.4
name: {name}
tested-groups: [{group}]
dbconfig:
  preload_tool:
    tool: memtier_benchmark
    arguments: >-
      --data-size 10 --ratio 1:0 --key-pattern P:P --key-minimum 1 --key-maximum 1000
      -n allkeys -c 1 -t 1 --pipeline 50 --hide-histogram
clientconfig:
  tool: memtier_benchmark
  arguments: >-
    --data-size 10 --ratio {ratio} --key-pattern R:R --key-minimum 1 --key-maximum 1000
    --test-time 1 -c 4 -t 1 --pipeline 16 --hide-histogram
"""


def _corpus(root: Path) -> None:
    """Two definitions that run and one refused before any work (its memory request)."""
    (root / "defs").mkdir(parents=True)
    for name, group, ratio in (("set-heavy", "string", "1:0"), ("get-only", "generic", "0:1"),
                               ("too-big", "generic", "1:1")):
        text = DEFINITION.format(name=name, group=group, ratio=ratio)
        if name == "too-big":
            text = text.replace("dbconfig:\n", "dbconfig:\n  resources:\n    requests:\n"
                                "      memory: 4000g\n")
        (root / "defs" / f"{name}.yml").write_text(text)


def _report(db: str, cwd: Path, commit: str, baseline: str, *extra: str) -> tuple[int, str]:
    done = run_kvperf("report", "--definitions", "--commit", commit[:10], "--baseline",
                      baseline[:10], "--water-line", WATER_LINE, "--db", db, *extra, cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


@pytest.mark.alone  # judges an A/A and a slowdown by timing
def test_report_flags_the_slowed_definition_and_an_aa_passes(tmp_path: Path,
                                                             build_cache: Path) -> None:
    repo = steps_repo()
    sha = {n: step_sha(repo, n) for n in (0, 2, 3)}
    _corpus(tmp_path)
    db = f"sqlite:///{tmp_path / 'corpus.db'}"
    env = {"KVPERF_BUILD_CACHE": str(build_cache)}
    for branch, count in (("steps-3", 2), ("base", 1)):  # steps-3 and steps-2; base
        done = run_kvperf("track", "determine", "--repo", repo, "--branch", branch,
                          "--max-commits", str(count), "--definitions", "defs", "--corpus",
                          ".", "--db", db, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    done = run_kvperf("track", "run", "--runner", "r1", "--db", db, cwd=tmp_path, env=env,
                      timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    code, out = _report(db, tmp_path, sha[3], sha[2], "--markdown", "r.md", "--html", "r.html")
    assert code == 1, out
    lines = {line.split("|")[1].strip(): line for line in
             (tmp_path / "r.md").read_text().splitlines() if line.startswith("| ")}
    assert "regression" in lines["set-heavy"], lines
    assert "regression" not in lines["get-only"], lines
    assert [k for k in lines if k in ("set-heavy", "get-only")] == ["set-heavy", "get-only"]
    assert "1 regression(s)" in out and "set-heavy" in out
    refusal = "refused too-big [oss-standalone]: "
    assert refusal in out and "needs 4000 GiB of memory" in out.split(refusal, 1)[1]
    assert refusal in (tmp_path / "r.md").read_text().split("### Refused or not run")[1]
    page = (tmp_path / "r.html").read_text()
    assert '<tr class="regression"><td>set-heavy</td>' in page
    code, out = _report(db, tmp_path, sha[2], sha[0])
    assert code == 0, out
    assert "0 regression(s)" in out
    status = run_kvperf("track", "status", "--json", "--db", db)
    assert [p["done"] for p in json.loads(status.stdout)] == [True, True, True]
