"""`kvperf run --definitions … --dry-run` through the CLI entry point: plans printed (exit 0),
bad input (exit 2) with one clear message and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvperf.cli.main import main

GOOD = """
version: 0.4
name: memtier_benchmark-get-10B
tested-groups: [string]
tested-commands: [get]
priority: 5
redis-topologies: [oss-standalone, oss-standalone-with-redisearch]
dbconfig:
  configuration-parameters: {save: '""'}
  check: {keyspacelen: 1000}
  preload_tool:
    tool: memtier_benchmark
    arguments: --ratio 1:0 --key-pattern P:P -n allkeys --key-maximum 1000 -c 1 -t 1
clientconfig:
  tool: memtier_benchmark
  arguments: --command "GET __key__" --command-key-pattern R --test-time 60 -c 2 -t 1
"""


@pytest.fixture
def defs(tmp_path: Path) -> Path:
    (tmp_path / "get.yml").write_text(GOOD)
    return tmp_path


def test_dry_run_prints_plans_and_refusals(defs: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--definitions", str(defs), "--dry-run", "--override-test-time", "2"])
    out = capsys.readouterr().out
    assert code == 0
    assert "plan    memtier_benchmark-get-10B [oss-standalone: 1 primary]" in out
    assert "--test-time=2" in out and "keyspacelen 1000" in out
    assert "refused memtier_benchmark-get-10B [oss-standalone-with-redisearch]: " in out
    assert "1 definition file(s): 0 planned, 1 partly, 0 refused" in out


def test_dry_run_exits_as_the_run_when_nothing_can_run(
        defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A refusal table alone exits 2, as the run does (CI validates a corpus with it)."""
    only = ["--definitions", str(defs), "--topologies", "oss-standalone-with-redisearch"]
    assert main(["run", *only, "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert "refused memtier_benchmark-get-10B [oss-standalone-with-redisearch]" in captured.out
    assert "none of the selected test(s) can run here" in captured.err
    assert main(["run", *only, "--results-dir", str(defs / "r"), "--no-db"]) == 2


def test_dataset_rdb_gives_a_url_dataset_its_local_file(
        defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A definition whose dataset is a URL is refused (nothing downloads) unless
    --dataset-rdb NAME=PATH names its file; bad values exit 2 naming the flag."""
    (defs / "get.yml").write_text(GOOD.replace(
        "  check: {keyspacelen: 1000}\n",
        "  check: {keyspacelen: 1000}\n  dataset: https://example.invalid/d/keys-1k.rdb\n"))
    rdb = defs / "mine.rdb"
    rdb.write_bytes(b"REDIS0011")
    args = ["run", "--definitions", str(defs / "get.yml"), "--dry-run", "--topologies",
            "oss-standalone"]
    assert main(args) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert "give it with --dataset-rdb keys-1k.rdb=PATH" in out
    assert main([*args, "--dataset-rdb", f"keys-1k.rdb={rdb}"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"dataset {rdb}" in out and "1 run(s) planned" in out
    for bad, says in (("keys-1k.rdb", "give NAME=PATH"),
                      (f"keys-1k.rdb={defs}/none.rdb", "no such file")):
        assert main([*args, "--dataset-rdb", bad]) == 2
        assert says in capsys.readouterr().err


TOO_NEW_TOOL = """\
version: 0.4
name: needs-a-newer-benchmark
redis-topologies: [oss-standalone]
dbconfig:
  configuration-parameters: {save: '""'}
clientconfig:
  tool: redis-benchmark
  min-tool-version: "99.0.0"
  parameters:
    - clients: 5
    - requests: 2000
"""


def test_dry_run_refuses_what_this_host_lacks_as_the_run_does(
        defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A client tool older than min-tool-version is refused by the run before any server;
    the dry run lists it as refused with the reason and exits 2 too."""
    (defs / "get.yml").unlink()
    (defs / "new.yml").write_text(TOO_NEW_TOOL)
    assert main(["run", "--definitions", str(defs), "--dry-run"]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert "refused needs-a-newer-benchmark [oss-standalone]: redis-benchmark " in out
    assert "is older than min-tool-version 99.0.0" in out and "1 refused" in out


def test_selection_narrows(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--definitions", str(defs / "get.yml"), "--dry-run", "--topologies",
                 "oss-standalone", "--tested-groups", "String", "--tests-regexp", "get"])
    out = capsys.readouterr().out
    assert code == 0 and "1 planned" in out and "refused memtier" not in out


@pytest.mark.parametrize(("args", "says"), [
    (["--definitions", "{d}/missing.yml", "--dry-run"], "no such file or directory"),
    (["--definitions", "{d}/bad.yml", "--dry-run"], "not valid YAML at line"),
    (["--definitions", "{d}", "--dry-run", "--tested-groups", "strings"],
     "--tested-groups 'strings': no loaded definition has it"),
    (["--definitions", "{d}", "--dry-run", "--topologies", "oss-standalone-3"],
     "not a known topology"),
    (["--definitions", "{d}", "--dry-run", "--tests-regexp", "("], "--tests-regexp"),
    (["--definitions", "{d}", "--dry-run", "--tests-regexp", "^nothing$"],
     "matches none of the 1 loaded"),
    (["--definitions", "{d}", "--dry-run", "--override-test-time", "0"], "at least 1"),
    (["--definitions", "{d}", "--dry-run", "--config", "{d}/x.json"],
     "--config does not apply with --definitions"),
    (["--definitions", "{d}", "--topologies", "oss-standalone-with-redisearch", "--results-dir",
      "{d}/results", "--no-db"], "can run here"),
    (["--tests-regexp", "get", "--dry-run"], "apply only with --definitions"),
    (["--ignore-resources", "--dry-run"], "apply only with --definitions"),
])
def test_bad_input_exits_2(defs: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                           says: str) -> None:
    (defs / "bad.yml").write_text("name: [unclosed\n")
    given = [a.replace("{d}", str(defs)) for a in args]
    if "bad.yml" not in " ".join(given):
        (defs / "bad.yml").unlink()
    code = main(["run", *given])
    err = capsys.readouterr().err
    assert code == 2 and says in " ".join(err.split()), err
    assert "Traceback" not in err


def test_memory_beyond_the_machine_is_refused_and_ignore_resources_plans_it(
        defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (defs / "get.yml").write_text(GOOD.replace(
        "  check: {keyspacelen: 1000}\n",
        "  check: {keyspacelen: 1000}\n  resources: {requests: {memory: 64Ti}}\n"))
    args = ["run", "--definitions", str(defs), "--dry-run", "--topologies", "oss-standalone"]
    assert main(args) == 2  # as the run: nothing can run here
    out = " ".join(capsys.readouterr().out.split())
    assert "refused memtier_benchmark-get-10B [oss-standalone]: needs 65536 GiB of memory " \
           "(server), this machine has" in out
    assert main([*args, "--ignore-resources"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "plan memtier_benchmark-get-10B [oss-standalone" in out
    assert "resources not checked (--ignore-resources): server memory 64Ti" in out
