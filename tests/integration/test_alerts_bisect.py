"""An alert from step to resolution on SQLite (docs/guide/alerts.md), over the real history
test_regressions_bisect.py builds (the fixture's ``steps`` branch measured at every commit
but the slow ``steps-3`` and ``steps-4``): `regressions --store` records the SET step as an
alert; `regressions --bisect` builds and times the unmeasured commits for real and its answer
moves the alert to ``culprit`` naming steps-3 (parent steps-2) and runs the culprit's
instruction compare against its parent; `alerts report` holds the culprit, its parent, the
moved series, the instruction diff (setCommand's spin) and the differential flamegraph, and
the commands that reproduce it; with a fake `gh`
on PATH (a script that records its arguments: no GitHub here) `--open-issue` files the
report through it; `resolve --as fixed` is refused while the later commits are slow, and
`resolve --as expected` closes it.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from tests.fixtures.valkey_steps import SLOW_STEP, step_sha, steps_repo
from tests.helpers import run_kvperf, write_config
from tests.integration.test_regressions_bisect import CONFIG, _history

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1200),
              pytest.mark.alone]

FAKE_GH = """#!/bin/sh
# a fake gh (no GitHub here): records its arguments, one per line, and answers as gh does
printf '%s\\n' "$@" >> "{log}"
echo ---- >> "{log}"
if [ "$1" = issue ]; then echo https://github.invalid/valkey-io/valkey/issues/1; fi
"""


def _fake_gh(directory: Path) -> Path:
    """A fake gh in ``directory``; returns the file its calls are recorded in."""
    log = directory / "gh-calls.txt"
    gh = directory / "gh"
    gh.write_text(FAKE_GH.format(log=log))
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    return log


def _check_report(report: str, sha: dict[int, str], repo_config: str, diffs: Path) -> None:
    """The report names the culprit and its parent, the step, the culprit's instruction diff
    (run when the alert reached culprit: setCommand's spin) and its differential flamegraph,
    and the commands that reproduce it (``repo_config``: as the bisection's log names them)."""
    assert report.startswith(f"# Regression at {sha[SLOW_STEP][:12]}: SET "), report
    assert f"`{sha[SLOW_STEP]}` setCommand: spin" in report, report  # the culprit, named
    assert f"Parent: `{sha[SLOW_STEP - 1]}`" in report, report
    assert "| rps | regression | -60.0% |" in report, report
    assert "setCommand" in (diffs / "instructions.md").read_text()
    assert "#### kvperf instructions: `B " in report, report
    # setCommand's inclusive instructions per request grew (the spin): the diff's top row
    assert re.search(r"\| setCommand \| [\d,.]+ \| [\d,.]+ \| \+[\d,.]+ \| \+\d+\.\d+% \|",
                     report), report
    (svg,) = diffs.glob("**/flamediff/*.svg")
    assert f"]({svg})" in report and "<svg" in svg.read_text()[:2000], report
    assert (f"kvperf compare --repo {repo_config} --measure instructions "
            f"{sha[SLOW_STEP - 1]} {sha[SLOW_STEP]}") in report, report


@pytest.mark.usefixtures("no_strays")
def test_alert_from_step_to_culprit_report_and_resolution(tmp_path: Path,
                                                          build_cache: Path) -> None:
    repo = steps_repo()
    sha = {n: step_sha(repo, n) for n in range(10)}
    write_config(tmp_path, [CONFIG])
    db = _history(tmp_path, repo)
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    calls = _fake_gh(bin_dir)
    env = {"KVPERF_BUILD_CACHE": str(build_cache),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}

    def kv(*args: str | Path) -> tuple[int, str]:
        done = run_kvperf(*args, "--db", db, cwd=tmp_path, env=env, timeout=900)
        return done.returncode, " ".join((done.stdout + done.stderr).split())

    code, out = kv("regressions", "--metric", "rps", "--where", "command=SET", "--store")
    assert code == 0 and "alerts: 1 new summary(ies), 1 new alert(s)" in out, out
    (alert,) = json.loads(run_kvperf("alerts", "list", "--json", "--db", db,
                                     cwd=tmp_path).stdout)
    ident = str(alert["id"])
    assert (alert["state"], alert["last_before_sha"], alert["first_after_sha"]) == \
        ("new", sha[2], sha[5]), alert
    code, out = kv("alerts", "ack", ident, "--owner", "ana")
    assert code == 0 and f"alert {ident}: acknowledged, owner ana" in out, out

    code, out = kv("regressions", "--metric", "rps", "--where", "command=SET", "--bisect",
                   "--repo", repo, "--config", "config.json", "--runs", "3")
    assert code == 0 and f"first bad (regression) commit: {sha[SLOW_STEP]}" in out, out
    shown = json.loads(run_kvperf("alerts", "show", ident, "--json", "--db", db,
                                  cwd=tmp_path).stdout)
    assert (shown["state"], shown["culprit_sha"], shown["parent_sha"]) == \
        ("culprit", sha[SLOW_STEP], sha[SLOW_STEP - 1]), shown
    assert Path(shown["bisect_log"]).is_file() and shown["stamps"]["culprit_at"], shown

    code, out = kv("alerts", "report", ident, "--open-issue")
    assert code == 0 and "filed: https://github.invalid/valkey-io/valkey/issues/1" in out, out
    report = (tmp_path / f"alert-{ident}.md").read_text()
    _check_report(report, sha, f"{repo} --config {tmp_path / 'config.json'}",
                  Path(shown["bisect_log"]).parent / "culprit-vs-parent")
    argv = calls.read_text().split("\n----\n")
    assert argv[0].splitlines() == ["auth", "status"], argv
    assert argv[1].splitlines() == ["issue", "create", "--title", report.splitlines()[0][2:],
                                    "--body-file", f"alert-{ident}.md"], argv

    code, out = kv("alerts", "resolve", ident, "--as", "fixed")
    assert code == 2 and "not back within the noise" in out and "-60.0%" in out, out
    code, out = kv("alerts", "resolve", ident, "--as", "expected", "--note", "a test spin")
    assert code == 0 and f"alert {ident}: expected" in out, out
    code, out = kv("alerts", "ack", ident)
    assert code == 2 and f"alert {ident} is expected" in out, out
