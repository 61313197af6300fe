"""docs/CLIENTS.md's worked example, as written there: a library's authors add a harness for
their own library (valkey-py, from PyPI) in a folder of their own, install it beside a
shipped one, run both with kvload's reference line and compare them with a gate."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.helpers import ROOT, read_metrics, run_kvperf, write_config

pytestmark = pytest.mark.integration

DOC = ROOT / "docs" / "CLIENTS.md"
SECTION = "### Worked example: your new library against the shipped ones"


def _example() -> tuple[dict[str, str], list[list[str]]]:
    """The files the example names (path → text) and its commands, from the doc."""
    text = DOC.read_text()
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ")]
    files = dict(re.findall(r"^`(my-clients/[^`]+)`:\n\n```\w+\n(.*?)```", section,
                            re.M | re.S))
    (commands,) = re.findall(r"^```\n(kvperf .*?)```", section, re.M | re.S)
    return files, [shlex.split(line)[1:] for line in commands.splitlines()]


@pytest.mark.usefixtures("no_strays")
def test_the_worked_example_adds_a_library_and_compares_it_with_a_shipped_one(
        tmp_path: Path) -> None:
    files, commands = _example()
    assert set(files) == {"my-clients/python/valkey-py/manifest.json",
                          "my-clients/python/valkey-py/harness.py"}, files
    for path, body in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body)
    write_config(tmp_path, [{"commands": ["SET", "GET"], "pipelines": [1], "clients": [1],
                             "data_sizes": [100], "keyspacelen": [1000], "requests": [2000],
                             "warmup": [0], "server_cpu_range": "0", "client_cpu_range": "1"}])
    listed, install, run, compare = commands
    done = run_kvperf(*listed, cwd=tmp_path)
    assert done.returncode == 0 and "valkey-py" in done.stdout, done.stdout + done.stderr
    done = run_kvperf(*install, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    done = run_kvperf(*run, "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = read_metrics(tmp_path / "results")
    assert {(r["tool"], r["status"]) for r in rows} == {
        ("valkey-py", "ok"), ("redis-py", "ok"), ("kvload", "ok")}, rows
    assert all(a["reported"] == a["server"] for r in rows if r["tool"] != "kvload"
               for a in r["harness"]["accounting"].values()), rows
    done = run_kvperf(*compare, "--no-db", cwd=tmp_path, timeout=600)
    # the gate: 0, or 1 when valkey-py read slower somewhere; never a usage or run error
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    assert "B valkey-py vs A redis-py" in " ".join(done.stdout.split()), \
        done.stdout[-3000:]
