"""Real modules: valkey-bloom and valkey-json (built once from the vendored snapshots,
tests/fixtures/modules_vendor.py) run their scenario sets (configs/modules/) on a real
valkey-server, with their memory per document and per filter capacity unit (--measure
memory); ``compare base slow --module-repo <valkey-bloom repo>`` builds the module at both
commits (kvperf's module builder, cached in the tests' build cache) on one server and flags
BF.ADD, not BF.EXISTS — by timing, by callgrind instructions, in the per-DSO profile table and
as the module PR template runs it; a module commit that does not compile fails only its side;
bad input is exit 2 before any server starts; valkey-json builds through --module-repo with
{server_src}; ``track determine --module-repo`` queues module commits that runners build and
run on one server."""

from __future__ import annotations

import csv
import json
import os
import socket
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvperf.analysis.comparison import compare_paired
from kvperf.analysis.verdict import Verdict
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient
from tests.fixtures.modules_vendor import bloom_repo, bloom_so, json_build, json_repo, json_so
from tests.helpers import KVPERF, read_metrics, require_binary, run_kvperf

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1800),
              pytest.mark.usefixtures("no_strays")]

ROOT = Path(__file__).resolve().parents[2]
BLOOM_CONFIG = ROOT / "configs" / "modules" / "bloom.json"
JSON_CONFIG = ROOT / "configs" / "modules" / "json.json"


def _short(config: Path, dest: Path, groups: tuple[str, ...] | None = None) -> Path:
    """The config with 1 s scenarios and no warm-up (and only ``groups``): tests stay short."""
    data: dict[str, Any] = json.loads(config.read_text())
    data["test_groups"] = [g for g in data["test_groups"]
                           if groups is None or str(g["group"]) in groups]
    for group in data["test_groups"]:
        for scenario in group["scenarios"]:
            if "duration" in scenario:
                scenario["duration"], scenario["warmup"] = 1, 0
    out = dest / config.name
    out.write_text(json.dumps(data))
    return out


def _calls(row: dict[str, Any], command: str) -> int:
    """A command's calls in the row's commandstats (a module keeps its own case: BF.ADD)."""
    found = {n.lower(): v["calls"] for n, v in row["server"]["commands"].items()}
    return int(found.get(command, 0))


def _rows(results: Path) -> dict[str, dict[str, Any]]:
    return {r["command"]: r for r in read_metrics(results)}


def _scenarios(tmp_path: Path, config: Path, name: str, module: Path
               ) -> tuple[dict[str, dict[str, Any]], str]:
    """The config (1 s scenarios) run with the module loaded and --measure memory (the
    scenarios stay timed); every row ok. The rows by scenario, and the output."""
    done = run_kvperf("run", "--module-config", _short(config, tmp_path), "--module", name,
                      "--module-path", module, "--server-bin", require_binary("valkey-server"),
                      "--measure", "memory", "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(tmp_path / "results")
    assert all(r["status"] == "ok" and r["rps"] > 0 for r in rows.values())
    return rows, done.stdout


def test_bloom_scenarios_run_on_the_real_module(tmp_path: Path) -> None:
    """The bloom set, timed, with its memory: bytes per filter capacity unit — a filter of
    1% error costs 9.6 bits per unit plus its overhead, whether reserved in the scenario's
    setup (bf-add; INFO memory read before the setup's BF.RESERVE) or by the scenario
    itself (5,000 × BF.RESERVE … 1000)."""
    rows, out = _scenarios(tmp_path, BLOOM_CONFIG, "bloom", bloom_so())
    assert list(rows) == ["bf-add", "bf-exists", "bf-reserve"]
    assert _calls(rows["bf-add"], "bf.add") > 100
    assert _calls(rows["bf-exists"], "bf.exists") > 100
    assert rows["bf-reserve"]["checks"]["dbsize"] == 5000  # one filter per dataset row
    assert rows["bf-add"]["scenario"]["loaded_modules"] == [{"name": "bf", "version": "1"}]
    assert "B/filter capacity (100,000; MEMORY USAGE" in out, out
    # 20,000 distinct items never fill 100,000: the filter did not scale out
    assert rows["bf-add"]["memory"]["items"] == 100_000
    assert rows["bf-reserve"]["memory"]["items"] == 5000 * 1000
    assert rows["bf-exists"]["memory"]["bytes_per_key"] is None  # a read adds nothing
    for name in ("bf-add", "bf-reserve"):
        memory = rows[name]["memory"]
        assert memory["unit"] == "filter capacity", memory
        assert 1 < memory["bytes_per_key"] < 4, (name, memory)
        # the keys' own MEMORY USAGE: 9.6 bits per unit at 1% (+ a filter's ~80 B overhead)
        assert 1.15 < memory["sample_bytes_per_key"] < 1.8, (name, memory)


def _mean_doc_bytes(results: Path) -> float:
    """The mean length of the generated dataset's JSON documents (the text JSON.SET sent)."""
    (path,) = (results / "datasets").glob("json-docs-*.csv")
    with path.open(newline="") as handle:
        docs = [row["doc"] for row in csv.DictReader(handle)]
    return sum(map(len, docs)) / len(docs)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _connect(endpoint: Endpoint, server: subprocess.Popen[bytes]) -> RespClient:
    deadline = time.monotonic() + 30
    while True:
        try:
            return RespClient(endpoint, timeout=30)
        except ConnectionLost:
            assert server.poll() is None, "valkey-server with valkey-bloom exited"
            assert time.monotonic() < deadline, "valkey-server did not listen in 30 s"
            time.sleep(0.1)


def test_bloom_false_positive_rate_is_within_the_reserved_error(tmp_path: Path) -> None:
    """BF.RESERVE 0.01 and 10,000 items: absent items answer 1 for about 1% of queries,
    and BF.INFO ITEMS reads back what BF.ADD inserted."""
    port = _free_port()
    server = subprocess.Popen([require_binary("valkey-server"), "--port", str(port),
                               "--bind", "127.0.0.1", "--save", "", "--loadmodule",
                               str(bloom_so())], cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        with _connect(Endpoint("127.0.0.1", port), server) as client:
            client.call("BF.RESERVE", "bf:fp", "0.01", "10000")
            added = client.pipeline([("BF.ADD", "bf:fp", f"in:{i}") for i in range(10000)])
            info = client.call("BF.INFO", "bf:fp", "ITEMS")
            absent = client.pipeline([("BF.EXISTS", "bf:fp", f"out:{i}")
                                      for i in range(20000)])
    finally:
        server.terminate()
        server.wait(10)
    # an item the filter already "had" (a false positive while filling) is not inserted
    assert info == sum(1 for r in added if r == 1) > 9900, info
    rate = sum(1 for r in absent if r == 1) / len(absent)
    assert 0.002 < rate < 0.02, rate


def test_json_scenarios_run_on_the_real_module(tmp_path: Path) -> None:
    """The JSON set, timed, with its memory: a document of 5,000 costs a few times its
    text (valkey-json keeps a parsed tree); JSON.ARRAPPEND's growth per call."""
    rows, out = _scenarios(tmp_path, JSON_CONFIG, "json", json_so())
    assert list(rows) == ["json-set", "json-get-path", "json-arrappend"]
    assert _calls(rows["json-set"], "json.set") == 5000
    assert rows["json-set"]["checks"]["dbsize"] == 5000
    assert _calls(rows["json-get-path"], "json.get") > 100  # 1 s on a loaded machine
    assert _calls(rows["json-arrappend"], "json.arrappend") > 100
    assert "B/document (5,000; MEMORY USAGE" in out, out
    memory, doc = rows["json-set"]["memory"], _mean_doc_bytes(tmp_path / "results")
    assert memory["unit"] == "document" and memory["items"] == 5000
    assert doc < memory["bytes_per_key"] < 8 * doc, (memory, doc)
    assert doc < memory["sample_bytes_per_key"] < 8 * doc, (memory, doc)
    appended = rows["json-arrappend"]["memory"]  # one number into an array: a value's bytes
    assert appended["unit"] == "call" and appended["items"] == _calls(
        rows["json-arrappend"], "json.arrappend")
    assert 4 < appended["bytes_per_key"] < 200, appended


@pytest.mark.alone
def test_compare_module_commits_flags_bf_add_not_bf_exists(tmp_path: Path) -> None:
    bloom_so()  # base built (the fixture), so this test builds only `slow`, warm
    config = _short(BLOOM_CONFIG, tmp_path, groups=("1",))
    server = require_binary("valkey-server")
    done = run_kvperf("compare", "base", "slow", "--module-repo", bloom_repo(),
                      "--module-config", config, "--server-bin", server, "--runs", "5",
                      "--seed", "3", "--no-db", "--label", "ab", "--output", "report.md",
                      "--build-cache", Path.home() / ".cache" / "kvperf-tests" / "build-cache",
                      cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "B slow vs A base" in done.stdout and "regression" in done.stdout
    report = (tmp_path / "report.md").read_text()
    assert "regression" in report and "bf-add" in report
    rows = {side: [r for r in json.loads((tmp_path / "results" / "ab" / side /
                                          "metrics.json").read_text())]
            for side in ("A", "B")}
    for side, ref in (("A", "base"), ("B", "slow")):
        assert len(rows[side]) == 10 and all(r["status"] == "ok" for r in rows[side])
        module = rows[side][0]["env"]["module"]
        assert module["ref"] == ref and module["recipe"] == "cargo"
        assert rows[side][0]["commit"] == module["commit"]
        assert rows[side][0]["env"]["server_binary"] == server
        assert rows[side][0]["server_version"]
        assert {r["run"] for r in rows[side]} == {1, 2, 3, 4, 5}
    # the verdicts over every metric: BF.ADD's server time per call (commandstats, the
    # sharpest signal on a loaded machine) a regression; nothing of BF.EXISTS one
    verdicts = {(dict(c.group)["command"], c.metric): c.decision.verdict
                for c in compare_paired(rows["A"], rows["B"], "all")}
    assert verdicts["bf-add", "server.usec_per_call"] is Verdict.REGRESSION, verdicts
    flagged = [k for k, v in verdicts.items() if k[0] == "bf-exists" and
               v is Verdict.REGRESSION]
    assert not flagged, verdicts
    added = [r["server"]["usec_per_call"] for r in rows["B"] if r["command"] == "bf-add"]
    base = [r["server"]["usec_per_call"] for r in rows["A"] if r["command"] == "bf-add"]
    assert min(added) > 3 * max(base), (base, added)


def test_a_module_commit_that_does_not_compile_fails_only_its_side(tmp_path: Path) -> None:
    bloom_so()
    config = _short(BLOOM_CONFIG, tmp_path, groups=("1",))
    done = run_kvperf("compare", "base", "broken", "--module-repo", bloom_repo(),
                      "--module-config", config, "--runs", "1", "--no-db", "--label", "ab",
                      "--server-bin", require_binary("valkey-server"),
                      "--build-cache", Path.home() / ".cache" / "kvperf-tests" / "build-cache",
                      cwd=tmp_path, timeout=900)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "undefined_name_kvperf" in done.stderr and "error[E0425]" in done.stderr
    results = tmp_path / "results" / "ab"
    a = json.loads((results / "A" / "metrics.json").read_text())
    b = json.loads((results / "B" / "metrics.json").read_text())
    assert [r["status"] for r in a] == ["ok", "ok"]
    assert [r["status"] for r in b] == ["failed", "failed"]
    assert all("error[E0425]" in r["error"] for r in b)


@pytest.mark.parametrize(("extra", "message"), [
    (["base", "no-such-ref"], "'no-such-ref' names no commit"),
    (["base", "slow", "--module-artifact", "target/release/*.dylib"], "matched no file"),
    (["base", "slow", "--module-build", "make {nope}"], "unknown placeholder {nope}"),
    (["base", "slow", "--measure", "perf-instructions"], "does not apply to module scenarios"),
])
def test_bad_module_input_is_exit_2_before_any_server(tmp_path: Path, extra: list[str],
                                                      message: str) -> None:
    config = _short(BLOOM_CONFIG, tmp_path, groups=("1",))
    done = run_kvperf("compare", *extra, "--module-repo", bloom_repo(), "--module-config",
                      config, "--runs", "1", "--no-db",
                      "--build-cache", Path.home() / ".cache" / "kvperf-tests" / "build-cache",
                      cwd=tmp_path, timeout=900)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert not (tmp_path / "results").exists() or not list(
        (tmp_path / "results").glob("*/*/metrics.json"))


def test_run_commits_of_a_module(tmp_path: Path) -> None:
    bloom_so()
    config = _short(BLOOM_CONFIG, tmp_path, groups=("1",))
    done = run_kvperf("run", "--commits", "base", "neutral", "slow", "--module-repo",
                      bloom_repo(), "--module-config", config, "--groups", "1", "--no-db",
                      "--label", "three", "--server-bin", require_binary("valkey-server"),
                      "--build-cache", Path.home() / ".cache" / "kvperf-tests" / "build-cache",
                      cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    commits = set()
    for side in ("base", "neutral", "slow"):
        rows = json.loads((tmp_path / "results" / "three" / side / "metrics.json").read_text())
        assert [r["command"] for r in rows] == ["bf-add", "bf-exists"]
        assert all(r["status"] == "ok" and r["env"]["module"]["ref"] == side for r in rows)
        commits.add(rows[0]["commit"])
    assert len(commits) == 3


def test_the_fixed_server_can_be_a_build_of_a_server_ref(tmp_path: Path,
                                                         valkey_repo: Path) -> None:
    """``--repo R --server-ref REF``: every module build runs on that server (Valkey 8.1.1's
    fixture build, cached), recorded in each row; two servers at once is exit 2."""
    bloom_so()
    config = _short(BLOOM_CONFIG, tmp_path, groups=("1",))
    cache = Path.home() / ".cache" / "kvperf-tests" / "build-cache"
    done = run_kvperf("run", "--commits", "base", "--module-repo", bloom_repo(),
                      "--module-config", config, "--no-db", "--label", "on-811", "--repo",
                      valkey_repo, "--server-ref", "base", "--build-cache", cache,
                      cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads((tmp_path / "results" / "on-811" / "base" / "metrics.json").read_text())
    sha = subprocess.run(["git", "-C", str(valkey_repo), "rev-parse", "base"], check=True,
                         capture_output=True, text=True).stdout.strip()
    assert all(r["status"] == "ok" for r in rows)
    assert {r["env"]["server_commit"] for r in rows} == {sha}
    assert all("8.1.1" in r["server_version"] for r in rows), rows[0]["server_version"]
    clash = run_kvperf("run", "--commits", "base", "--module-repo", bloom_repo(),
                       "--module-config", config, "--no-db", "--repo", valkey_repo,
                       "--server-ref", "base", "--server-bin", require_binary("valkey-server"),
                       cwd=tmp_path)
    assert clash.returncode == 2 and "--server-bin or --server-ref" in clash.stderr


def test_a_profiled_module_compare_shows_the_modules_function(tmp_path: Path) -> None:
    """The config's profiling_sets on both sides: perf's stacks of B's BF.ADD hold the
    fixture's spin function (a frame of libvalkey_bloom.so) and the differential flamegraph
    of B vs A is written with it."""
    bloom_so()
    data = json.loads(_short(BLOOM_CONFIG, tmp_path, groups=("1",)).read_text())
    data["profiling_sets"] = [{"enabled": True}]
    config = tmp_path / "profiled.json"
    config.write_text(json.dumps(data))
    done = run_kvperf("compare", "base", "slow", "--module-repo", bloom_repo(),
                      "--module-config", config, "--scenarios", "bf-add", "--runs", "1",
                      "--no-db", "--label", "prof", "--server-bin",
                      require_binary("valkey-server"),
                      "--build-cache", Path.home() / ".cache" / "kvperf-tests" / "build-cache",
                      cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    results = tmp_path / "results" / "prof"
    # the per-DSO table: BF.ADD's time partly in the module's .so (B's spin loop: mostly)
    assert "on-cpu share per shared object" in done.stdout and "libvalkey_bloom.so" in \
        done.stdout, done.stdout
    for side in ("A", "B"):
        (row,) = json.loads((results / side / "metrics.json").read_text())
        shares = {e["name"]: e["self_pct"] for e in row["profile"]["dsos"]}
        assert shares.get("libvalkey_bloom.so", 0) > 0, (side, shares)
        assert "valkey-server" in shares, shares  # named as started, not valkey-check-rdb
    assert "libvalkey_bloom.so" in (results / "profile.md").read_text()
    folded = [p for p in (results / "B").rglob("*folded*") if p.is_file()]
    assert folded and any("kvperf_fixture_spin" in p.read_text(errors="replace")
                          for p in folded), folded
    diffs = list(results.rglob("*.svg"))
    differential = [p for p in diffs if "flamediff" in p.parts]
    assert differential, diffs
    assert any("kvperf_fixture_spin" in p.read_text(errors="replace") for p in differential)


def test_module_instruction_counts_flag_bf_add_not_bf_exists(tmp_path: Path) -> None:
    """``compare base slow --module-repo … --measure instructions``: both builds' servers
    under callgrind (the group's shared server too), 2,000 requests per scenario; BF.ADD's
    instructions per request grow by the spin loop (20,000 iterations), BF.EXISTS's stay
    within 2%, and the differential instruction flamegraph of bf-add holds the spin."""
    bloom_so()
    data = json.loads(_short(BLOOM_CONFIG, tmp_path, groups=("1",)).read_text())
    for scenario in data["test_groups"][0]["scenarios"]:
        del scenario["duration"], scenario["warmup"]
        scenario["requests"] = 2000
    config = tmp_path / "counted.json"
    config.write_text(json.dumps(data))
    done = run_kvperf("compare", "base", "slow", "--module-repo", bloom_repo(),
                      "--module-config", config, "--measure", "instructions", "--runs", "1",
                      "--no-db", "--label", "ir", "--server-bin",
                      require_binary("valkey-server"),
                      "--build-cache", Path.home() / ".cache" / "kvperf-tests" / "build-cache",
                      cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "instructions: B slow vs A base" in done.stdout, done.stdout
    results = tmp_path / "results" / "ir"
    per = {}
    for side in ("A", "B"):
        for row in json.loads((results / side / "metrics.json").read_text()):
            assert row["measure"] == "instructions" and row["instructions"]["requests"] == 2000
            per[side, row["command"]] = row["instructions"]["total_per_request"]
    assert per["B", "bf-add"] - per["A", "bf-add"] > 40_000, per
    assert abs(per["B", "bf-exists"] / per["A", "bf-exists"] - 1) < 0.02, per
    spins = sorted(p.read_text(errors="replace").count("kvperf_fixture_spin")
                   for p in (results / "flamediff").glob("*.svg"))
    assert len(spins) == 2 and spins[0] == 0 < spins[1], spins  # bf-add's only


@pytest.mark.alone
def test_bisect_over_module_commits_names_the_slow_one(tmp_path: Path) -> None:
    """base..bisect-bad holds neutral, slow and another neutral commit: bisect on BF.ADD's
    server time per call names slow. A neutral commit must read "no change" to be marked
    good, and two builds of one source need not run alike: a stop's CI read a neutral step
    +2.55% [+1.69%, +3.42%] after 9 runs a side, past the metric's own ±2% margin (each
    commit builds in its own tree, so code and data lie differently). The slowdown sought
    is ~24×, so ``--min-effect 10`` (a ±10% no-change margin) settles the neutral steps."""
    bloom_so()
    config = _short(BLOOM_CONFIG, tmp_path, groups=("1",))
    repo = bloom_repo()
    done = run_kvperf("bisect", "base", "bisect-bad", "--module-repo", repo,
                      "--module-config", config, "--scenarios", "bf-add", "--metric",
                      "server.usec_per_call", "--min-effect", "10", "--runs", "3", "--seed",
                      "5", "--no-db",
                      "--label", "bis", "--server-bin", require_binary("valkey-server"),
                      "--build-cache", Path.home() / ".cache" / "kvperf-tests" / "build-cache",
                      cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    slow = subprocess.run(["git", "-C", str(repo), "rev-parse", "slow"], check=True,
                          capture_output=True, text=True).stdout.strip()
    assert slow[:12] in done.stdout, done.stdout
    log = json.loads((tmp_path / "results" / "bis" / "bisect.json").read_text())
    assert log["series"].startswith("bf-add") and log["metric"] == "server.usec_per_call"


def _track(tmp_path: Path, db: str, *args: str | Path) -> Any:
    done = run_kvperf("track", *args, "--db", db, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_track_module_commits_on_a_fixed_server(tmp_path: Path) -> None:
    """``track determine --module-repo``: the module's last 2 commits of main enqueued with
    a module-test config; each claimed job (kind module) run as a runner does — ``run
    --commits SHA --module-repo REPO`` on one server, 1 quick round, rows to the database —
    and marked; a config of the wrong kind is exit 2."""
    bloom_so()
    repo, server = bloom_repo(), require_binary("valkey-server")
    config = _short(BLOOM_CONFIG, tmp_path, groups=("1",))
    db = f"sqlite:///{tmp_path / 'track.db'}"
    wrong = run_kvperf("track", "determine", "--repo", repo, "--config", config, "--db", db,
                       cwd=tmp_path)
    assert wrong.returncode == 2 and "tracked with --module-repo" in wrong.stderr
    determined = _track(tmp_path, db, "determine", "--module-repo", repo, "--branch", "main",
                        "--max-commits", "2", "--config", config)
    shas = subprocess.run(["git", "-C", str(repo), "rev-parse", "bisect-bad", "slow"],
                          check=True, capture_output=True, text=True).stdout.split()
    assert sorted(determined["enqueued"]) == sorted(shas)
    for _ in shas:
        job = _track(tmp_path, db, "claim", "--runner", "t")
        assert job["kind"] == "module" and job["repo"] == str(repo.resolve())
        (tmp_path / "claimed.json").write_text(job["config_content"])
        done = run_kvperf("run", "--commits", job["sha"], "--module-repo", job["repo"],
                          "--module-config", "claimed.json", "--scenarios", "bf-add",
                          "--server-bin", server,
                          "--label", job["sha"], "--db", db, "--build-cache",
                          Path.home() / ".cache" / "kvperf-tests" / "build-cache",
                          cwd=tmp_path, timeout=900, env={"KVPERF_QUICK": "1"})
        assert done.returncode == 0, done.stdout + done.stderr
        _track(tmp_path, db, "mark", "--id", str(job["id"]), "--attempt",
               str(job["attempt"]), "complete")
    assert _track(tmp_path, db, "claim", "--runner", "t") is None
    jobs = _track(tmp_path, db, "query", "--json")
    assert sorted(j["sha"] for j in jobs) == sorted(shas)
    assert {j["state"] for j in jobs} == {"complete"}
    with sqlite3.connect(tmp_path / "track.db") as conn:
        stored = conn.execute("SELECT commit_sha, count(*) FROM trials GROUP BY commit_sha"
                              ).fetchall()
    assert sorted(stored) == sorted((sha, 1) for sha in shas)  # bf-add of each
    for sha in shas:
        rows = json.loads((tmp_path / "results" / sha / sha / "metrics.json").read_text())
        assert all(r["commit"] == sha and r["env"]["server_binary"] == server for r in rows)


def test_valkey_json_built_through_module_repo_on_the_servers_tree(tmp_path: Path,
                                                                  valkey_repo: Path) -> None:
    """The CMake case end to end: valkey-json at ``base`` built by kvperf's module builder
    with ``--module-build`` whose ``{server_src}`` is the fixed server's source tree
    (``--repo R --server-ref base``: Valkey 8.1.1's valkeymodule.h), cached by commit — a
    second run builds nothing — and its JSON.SET scenario run on that server."""
    config = _short(JSON_CONFIG, tmp_path)
    cache = Path.home() / ".cache" / "kvperf-tests" / "build-cache"
    runs = []
    for label in ("first", "second"):
        done = run_kvperf("run", "--commits", "base", "--module-repo", json_repo(),
                          "--module-build", json_build(), "--module-config", config,
                          "--scenarios", "json-set", "--repo", valkey_repo, "--server-ref",
                          "base", "--build-cache", cache, "--no-db", "--label", label,
                          cwd=tmp_path, timeout=1500, env={"KVPERF_QUICK": "1"})
        assert done.returncode == 0, done.stdout + done.stderr
        (row,) = json.loads((tmp_path / "results" / label / "base" / "metrics.json"
                             ).read_text())
        runs.append(row)
    first, second = runs
    for row in runs:
        assert row["status"] == "ok" and _calls(row, "json.set") == 5000
        assert "8.1.1" in row["server_version"]
        assert row["scenario"]["loaded_modules"] == [{"name": "json", "version": "999999"}]
        module = row["env"]["module"]
        assert module["recipe"] == "given" and "{server_src}" in module["build"]
        assert module["artifact"].endswith("libjson.so")
    assert second["env"]["module"]["cached"] is True
    assert first["commit"] == second["commit"]


def test_the_module_pr_template_compares_base_and_head_of_a_module_checkout(
        tmp_path: Path) -> None:
    """What .github/workflows/module-pr-benchmark.yml does: its compare step, as written,
    in a clone of the valkey-bloom repository (``working-directory: module``, kvperf's
    checkout beside it) with BASE_SHA/HEAD_SHA the fixture's base and slow: kvperf builds
    both (cached), report.md lands beside the checkout with bf-add's metrics, and
    results/module-pr holds the rows and the differential flamegraph the config's profiled
    pass gives (the spin loop in it)."""
    bloom_so()
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "module-pr-benchmark.yml"
                               ).read_text())
    job = workflow["jobs"]["compare"]
    (step,) = [s for s in job["steps"] if "--module-repo" in s.get("run", "")]
    checkout = tmp_path / step["working-directory"]
    subprocess.run(["git", "clone", "-q", str(bloom_repo()), str(checkout)], check=True)
    base, head = subprocess.run(["git", "-C", str(bloom_repo()), "rev-parse", "base", "slow"],
                                check=True, capture_output=True, text=True).stdout.split()
    bin_dir = tmp_path / "kvperf" / ".venv" / "bin"  # the template's ../kvperf checkout
    bin_dir.mkdir(parents=True)
    (bin_dir / "kvperf").symlink_to(KVPERF)
    data = json.loads(_short(BLOOM_CONFIG, tmp_path, groups=("1",)).read_text())
    data["test_groups"][0]["scenarios"] = data["test_groups"][0]["scenarios"][:1]  # bf-add
    data["profiling_sets"] = [{"enabled": False}, {"enabled": True}]
    config = checkout / job["env"]["CONFIG"]
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(data))
    env = {**job["env"], "BASE_SHA": base, "HEAD_SHA": head, "RUNS": "2",
           "SERVER": require_binary("valkey-server"),
           "KVPERF_BUILD_CACHE": str(Path.home() / ".cache" / "kvperf-tests" / "build-cache")}
    done = subprocess.run(["bash", "-c", step["run"]], cwd=checkout, capture_output=True,
                          text=True, timeout=900, env={**os.environ, **env})
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / "report.md").read_text()
    assert "bf-add P=16 c=4 | server.usec_per_call" in report, report  # 2 runs: no verdict
    results = tmp_path / "results" / "module-pr"
    for side, sha in (("A", base), ("B", head)):
        rows = json.loads((results / side / "metrics.json").read_text())
        assert len(rows) == 4 and {r["env"]["module"]["commit"] for r in rows} == {sha}
    (svg,) = (results / "flamediff").glob("*.svg")
    assert "kvperf_fixture_spin" in svg.read_text(errors="replace")
