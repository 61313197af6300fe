"""The environment diff where two runs meet, on real runs: a compare of two builds that
differ only in one make argument lists it (terminal, markdown, report), and a
compare-results whose new side ran under another CPU governor warns about it.

The builds are of tests/unit/sourcebuild/toy_repo.py's repository (as test_build_flags.py
builds it: real make, a second each), its Makefile at a commit `wrap` making
src/valkey-server a two-line script that execs the machine's real valkey-server — so the
trials are real and no Valkey is compiled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvperf.sourcebuild.builder import Builder
from tests.helpers import require_binary, run_kvperf, run_main, write_config
from tests.unit.sourcebuild.toy_repo import git, make_toy_repo

pytestmark = pytest.mark.integration

ONE = [{"commands": ["SET"], "data_sizes": [64], "pipelines": [16], "clients": [10],
        "duration": [1], "keyspacelen": 1000, "warmup": [0],
        "server_cpu_range": "0", "client_cpu_range": "1"}]


def _wrapping_build(tmp: Path, flavor: str, toy: Path) -> Path:
    builder = Builder(tmp / "cache", f"file://{toy}", (f"FLAVOR={flavor}",), jobs=1)
    built = builder.build("wrap", builder.resolve("wrap"))
    assert built.ok and built.server_bin is not None, built.error
    return built.server_bin


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """`compare --server-bin A --server-bin B` of the toy's `wrap` built with FLAVOR=a and
    FLAVOR=b (everything else alike): the scratch dir and the finished process."""
    tmp = tmp_path_factory.mktemp("envdiff")
    toy = make_toy_repo(tmp / "toy")
    real = require_binary("valkey-server")
    makefile = (toy / "Makefile").read_text().replace(
        '''printf '#!/bin/sh\\necho "Valkey server v=0.0.1 sha=toy"\\n' ''',
        f'''printf '#!/bin/sh\\nexec {real} "$$@"\\n' ''')
    assert makefile != (toy / "Makefile").read_text()
    (toy / "Makefile").write_text(makefile)
    (toy / "src" / "server.c").write_text("int x = 3;\n")  # the toy's HEAD is `broken`
    git(toy, "commit", "-qam", "wrap the machine's valkey-server")
    git(toy, "tag", "wrap")
    bins = [_wrapping_build(tmp, flavor, toy) for flavor in ("a", "b")]
    write_config(tmp, ONE, "one.json")
    done = run_kvperf("compare", "--server-bin", bins[0], "--server-bin", bins[1], "--config",
                      "one.json", "--runs", "2", "--label", "flags", "--no-db", "--output",
                      "ab.md", cwd=tmp, env={"KVPERF_QUICK": "1"})
    return tmp, done


@pytest.mark.usefixtures("no_strays")
def test_a_compare_of_two_builds_lists_the_build_flag(compared: tuple[Path, Any]) -> None:
    tmp, done = compared
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {side: json.loads((tmp / "results" / "flags" / side / "metrics.json").read_text())
            for side in "AB"}
    assert {r["env"]["build"]["make_args"] for r in rows["A"]} == {"FLAVOR=a"}
    assert {r["env"]["build"]["make_args"] for r in rows["B"]} == {"FLAVOR=b"}
    assert all(r["status"] == "ok" and r["env"]["build"]["compiler"] for r in rows["A"])
    table = [line for line in done.stdout.splitlines() if "build.make_args" in line]
    assert len(table) == 1 and "FLAVOR=a" in table[0] and "FLAVOR=b" in table[0], done.stdout
    assert "build.compiler" not in done.stdout  # the same compiler: not a difference
    assert "! environment: build.make_args differs (FLAVOR=a vs FLAVOR=b)" in done.stderr
    markdown = (tmp / "ab.md").read_text()
    assert "### Environment: what differs" in markdown
    assert "| build.make_args | FLAVOR=a | FLAVOR=b |" in markdown
    report = run_main("report", tmp / "results" / "flags", "-o", tmp / "r.html",
                      "--json", tmp / "r.json")
    assert report.returncode == 0, report.stderr
    page = (tmp / "r.html").read_text()
    assert "<h2>What differs</h2>" in page
    assert "make_args: FLAVOR=a; compiler: " in page  # the summary table's build row
    facts = json.loads((tmp / "r.json").read_text())["environment"]["facts"]
    assert [f["fact"] for f in facts] == ["build.make_args"]


def test_compare_results_warns_about_a_changed_governor(compared: tuple[Path, Any]) -> None:
    """B's stored rows edited as if B had run under the powersave governor."""
    tmp = compared[0]
    side = tmp / "results" / "flags"
    rows = json.loads((side / "B" / "metrics.json").read_text())
    for row in rows:
        row["env"]["governor"] = "powersave"
    edited = tmp / "powersave.json"
    edited.write_text(json.dumps(rows))
    done = run_main("compare-results", side / "A" / "metrics.json", edited)
    assert done.returncode == 0, done.stderr
    assert "! environment: governor differs" in done.stderr
    assert "powersave" in done.stderr and "set both to performance" in done.stderr
    same = run_main("compare-results", side / "A" / "metrics.json", side / "A" / "metrics.json")
    assert "governor" not in same.stdout + same.stderr
    assert "environment: the sides' recorded facts are the same" in same.stdout
