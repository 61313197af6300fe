"""Client libraries as subjects (docs/CLIENTS.md) against a real valkey-server: the shipped
harnesses installed by `kvperf clients install` (scripts/test installs them first) and run
by `kvperf run --client`, each pipelining on the wire, reporting its CPU in its measured
window and its bytes allocated per operation in an untimed pass after it (Jedis's CPU the
same over a short and a long trial; Lettuce's async batches worth 3× single calls); fakes
(tests/fixtures/clients) for what a real harness must never do — under-report its
operations, fake its pipeline, crash, print invalid JSON, hang — each caught with its
message and no process left behind."""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from kvperf.clients.manifest import discover, shipped_dirs
from tests.helpers import KVPERF, ROOT, read_metrics, run_kvperf, write_config

pytestmark = pytest.mark.integration

FAKES = ROOT / "tests" / "fixtures" / "clients"
EXACT = {"go", "java", "c"}  # the runtimes whose allocation pass counts bytes exactly


def _config(tmp_path: Path, **overrides: Any) -> Path:
    spec = {"commands": ["SET"], "pipelines": [1], "clients": [1], "data_sizes": [100],
            "keyspacelen": [1000], "requests": [3000], "warmup": [0],
            "server_cpu_range": "0", "client_cpu_range": "1", **overrides}
    return write_config(tmp_path, [{k: v for k, v in spec.items() if v is not None}])


def _fake_run(tmp_path: Path, name: str, config: dict[str, Any] | None = None,
              **env: str) -> tuple[Any, list[dict[str, Any]]]:
    cache = {"KVPERF_CLIENTS_CACHE": str(tmp_path / "cache"), **env}
    done = run_kvperf("clients", "install", "--clients-dir", FAKES, name, cwd=tmp_path,
                      env=cache)
    assert done.returncode == 0, done.stderr
    done = run_kvperf("run", "--config", _config(tmp_path, **(config or {})), "--client",
                      name, "--clients-dir", FAKES, "--no-db", cwd=tmp_path, env=cache)
    return done, read_metrics(tmp_path / "results")


def _gone(pids_file: Path) -> None:
    pids = [int(p) for p in pids_file.read_text().split()]
    alive = [p for p in pids if Path(f"/proc/{p}").exists()
             and "Z" not in Path(f"/proc/{p}/stat").read_text().split(")")[-1][:3]]
    assert pids and not alive, f"harness processes left behind: {alive}"


@pytest.mark.usefixtures("no_strays")
def test_an_under_reporting_harness_fails_its_trial_naming_the_command(tmp_path: Path) -> None:
    done, rows = _fake_run(tmp_path, "fake-underreporting")
    assert done.returncode == 1, done.stdout + done.stderr
    (row,) = rows
    assert row["status"] == "failed", row
    assert "accounting" in row["error"] and "SET" in row["error"], row["error"]
    assert "+150 (+5.3%)" in row["error"], row["error"]  # 3000 sent, 2850 reported
    assert row["harness"]["accounting"]["set"] == {"reported": 2850, "server": 3000}


@pytest.mark.usefixtures("no_strays")
def test_a_harness_faking_its_pipeline_fails_its_trial_naming_calls_per_read(
        tmp_path: Path) -> None:
    """P=10 sent as ten writes, each answered before the next: every call is accounted
    for, but the server's INFO stats count one call per read, so the trial fails."""
    done, rows = _fake_run(tmp_path, "fake-pipelining",
                           {"commands": ["MIX_READ_HEAVY"], "pipelines": [10]})
    assert done.returncode == 1, done.stdout + done.stderr
    (row,) = rows
    assert row["status"] == "failed", row
    assert row["error"].startswith("client fake-pipelining: the server saw 1.0"), row["error"]
    assert "calls per read" in row["error"] and "below 1.25 for P=10" in row["error"]
    wire = row["harness"]["wire"]
    assert wire["batching"] == "not pipelined" and wire["calls_per_read"] < 1.2, wire
    assert wire["calls"] >= 3000 and wire["pipeline"] == 10
    counted = row["harness"]["accounting"]
    assert all(c["reported"] == c["server"] for c in counted.values()), counted
    assert row["harness"]["cpu_window"]["source"] == "getrusage(RUSAGE_SELF)"
    assert row["harness"]["cpu_us_per_op"] > 0


@pytest.mark.parametrize(("name", "message"), [
    ("fake-crashing", "failed (exit 3): fake-crashing: lost the connection on purpose"),
    ("fake-invalid-json", "stdout is not one JSON document"),
    ("fake-hanging", "did not finish within its deadline"),
])
@pytest.mark.usefixtures("no_strays")
def test_a_broken_harness_fails_its_trial_with_its_message_and_leaves_no_process(
        tmp_path: Path, name: str, message: str) -> None:
    done, rows = _fake_run(tmp_path, name, KVPERF_CLIENT_GRACE="2")
    assert done.returncode == 1, done.stdout + done.stderr
    (row,) = rows
    assert row["status"] == "failed" and message in row["error"], row["error"]
    (pids,) = (tmp_path / "results").glob("*/trials/*/scratch/pids")
    _gone(pids)


def test_an_unknown_or_uninstalled_client_exits_2_naming_what_to_do(tmp_path: Path) -> None:
    config = _config(tmp_path)
    done = run_kvperf("run", "--config", config, "--client", "no-such-client", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "unknown client 'no-such-client'" in done.stderr and "redis-py" in done.stderr
    done = run_kvperf("run", "--config", config, "--client", "fake-crashing",
                      "--clients-dir", FAKES, cwd=tmp_path,
                      env={"KVPERF_CLIENTS_CACHE": str(tmp_path / "empty")})
    assert done.returncode == 2, done.stderr
    assert "kvperf clients install fake-crashing" in done.stderr, done.stderr
    assert not (tmp_path / "results").exists()  # refused before any server or file


def test_clients_lists_the_shipped_python_harnesses_installed(tmp_path: Path) -> None:
    done = run_kvperf("clients", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = {c["name"]: c for c in json.loads(done.stdout)}
    for name in ("redis-py", "redis-py-asyncio", "valkey-glide"):
        assert listed[name]["language"] == "python" and listed[name]["installed"], (
            f"{name} is not installed: scripts/test runs kvperf clients install --all")
    again = run_kvperf("clients", "install", "redis-py", cwd=tmp_path)
    assert again.returncode == 0 and "already installed" in again.stderr, again.stderr


@pytest.mark.usefixtures("no_strays")
def test_redis_py_runs_a_mix_whose_commandstats_match(tmp_path: Path) -> None:
    config = _config(tmp_path, commands=["MIX_READ_HEAVY"], requests=[4000], warmup=[1])
    done = run_kvperf("run", "--config", config, "--client", "redis-py", "--no-db",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok" and row["rps"] > 0, row
    assert row["tool"] == "redis-py" and row["config_set"]["client"] == "redis-py"
    assert row["config_set"]["concurrency"] == "single"
    harness = row["harness"]
    for command in ("get", "set"):
        counted = harness["accounting"][command]
        assert counted["reported"] == counted["server"] > 0, harness["accounting"]
    assert harness["ops"] == 4000 and harness["cpu_us_per_op"] > 0
    assert harness["max_rss_kib"] > 0 and row["server"]["cpu_us_per_request"] > 0
    assert row["p99_latency_ms"] >= row["p50_latency_ms"] > 0


@pytest.mark.usefixtures("no_strays")
def test_async_and_pool_models_and_kvload_reference_in_one_run(tmp_path: Path) -> None:
    config = _config(tmp_path, clients=[4], requests=[4000], pipelines=[4])
    done = run_kvperf("run", "--config", config, "--client", "redis-py-asyncio",
                      "--client", "valkey-glide", "--client", "kvload",
                      "--concurrency", "async", "--no-db", cwd=tmp_path,
                      env={"KVPERF_INTERFERENCE": os.environ.get("KVPERF_INTERFERENCE", "")})
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_metrics(tmp_path / "results")
    assert [r["tool"] for r in rows] == ["kvload", "redis-py-asyncio", "valkey-glide"]
    for row in rows[1:]:
        assert row["harness"]["model"] == "async" and row["harness"]["workers"] == 4
        assert row["harness"]["accounting"]["set"]["reported"] == \
            row["harness"]["accounting"]["set"]["server"]
    table = " ".join(done.stdout.split())  # the client table, ratios to kvload
    assert "Client libraries (ratios to kvload on the same workload)" in table, done.stdout
    for client in ("redis-py-asyncio 8.1.0 async", "valkey-glide 2.6.0 async"):
        assert re.search(rf"│ SET d=100 P=4 c=4 │ {client} │ 1 │ [\d,]+ │ [\d.]+× │", table), table
    (label,) = (tmp_path / "results").iterdir()
    done = run_kvperf("report", label, "--markdown", "clients.md", cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # the HTML report's client section, markdown
    markdown = (tmp_path / "clients.md").read_text()
    assert markdown.startswith("### Client libraries") and "kvload 0.1.0" in markdown
    assert re.search(r"\| SET d=100 P=4 c=4 \| valkey-glide 2\.6\.0 async \| 1 \| [\d,]+ \| – "
                     r"\| [\d.]+× \|", markdown), markdown
    page = (tmp_path / "report.html").read_text()
    assert "<h2>Client libraries</h2>" in page and "Client throughput per run" in page
    assert re.search(r"<td>valkey-glide 2\.6\.0 async</td><td class=\"num\">1</td>"
                     r"<td class=\"num\">[\d,]+</td><td class=\"num\">–</td>"
                     r"<td class=\"num\">[\d.]+×</td>", page), page


@pytest.mark.usefixtures("no_strays")
def test_allocations_are_bytes_per_operation_of_an_untimed_pass_in_every_table(
        tmp_path: Path) -> None:
    """Each harness runs its allocation pass after the measured window: 1,000 more
    operations (the spec's allocation_ops) that reach the server — the accounting check
    counts them — but not the measured ones (ops stay the requests), with its runtime's
    allocation counter on; the row holds bytes per operation, how they were counted and
    whether exactly (C's malloc counter: exact; tracemalloc: a lower bound), and the
    client table's allocation cell is never empty (≈ marks an approximation)."""
    config = _config(tmp_path, commands=["MIX_READ_HEAVY"], requests=[2000], warmup=[0])
    done = run_kvperf("run", "--config", config, "--client", "hiredis", "--client",
                      "redis-py", "--client", "kvload", "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {r["tool"]: r for r in read_metrics(tmp_path / "results")}
    for name, exact in (("hiredis", True), ("redis-py", False)):
        harness = rows[name]["harness"]
        allocations, accounting = harness["allocations"], harness["accounting"]
        assert allocations["unit"] == "bytes" and allocations["exact"] is exact, allocations
        assert allocations["ops"] == 1000 and 50 < allocations["per_op"] < 1e6, allocations
        assert allocations["method"].startswith("malloc" if exact else "tracemalloc")
        assert harness["ops"] == 2000 and harness["warmup"]["GET"] == 0, harness
        served = accounting["get"]["server"] + accounting["set"]["server"]
        assert served == 2000 + 1000 and accounting["get"]["reported"] == \
            accounting["get"]["server"], accounting  # the pass's calls, accounted
    (label,) = (tmp_path / "results").iterdir()
    done = run_kvperf("report", label, "--markdown", "clients.md", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    markdown = (tmp_path / "clients.md").read_text()
    cells = {line.split(" | ")[1]: line.rstrip(" |").split(" | ")[-1]
             for line in markdown.splitlines() if line.startswith("| MIX")}
    assert re.fullmatch(r"[\d,]+ B", cells["hiredis 0.14.1 single"]), cells
    assert re.fullmatch(r"≈[\d,]+ B", cells["redis-py 8.1.0 single"]), cells
    assert cells[next(c for c in cells if c.startswith("kvload"))] == "not measured", cells


@pytest.mark.usefixtures("no_strays")
def test_a_client_swept_at_fixed_rates_runs_open_loop_trials_stored_as_corrected(
        tmp_path: Path) -> None:
    """kvload's rate key for clients: a config's ``rate_sweep`` with fixed ``rates`` runs
    each client's closed-loop trial (uncorrected latency) and one open-loop trial per rate —
    a series of its own (``config_set.rate``), the spec's ``rate`` echoed in the row, its
    histogram stored as ``corrected`` (from intended send times), its rate the target's."""
    config = _config(tmp_path, commands=["GET"], requests=[2000], warmup=[1],
                     rate_sweep={"rates": [800], "point_seconds": 2})
    done = run_kvperf("run", "--config", config, "--client", "hiredis", "--client",
                      "redis-py", "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = read_metrics(tmp_path / "results")
    out = tmp_path / "results" / "valkey-8.0.1"
    paced = [r for r in rows if (r["config_set"] or {}).get("rate")]
    assert sorted(r["tool"] for r in paced) == ["hiredis", "redis-py"], rows
    for row in paced:
        assert row["config_set"]["rate"] == "800/s" and row["duration"] == 2, row
        assert row["harness"]["rate"] == {"rps": 800.0, "arrivals": "poisson"}, row
        assert 400 <= row["rps"] <= 880, row["rps"]  # paced: never beyond the target
        assert set(json.loads((out / row["histogram_file"]).read_text())) >= {"corrected"}
    closed = [r for r in rows if r not in paced]
    assert all(r["rps"] > 880 and not r["harness"].get("rate") for r in closed), closed
    (label,) = (tmp_path / "results").iterdir()
    done = run_kvperf("report", label, "--markdown", "clients.md", cwd=tmp_path)
    lines = [ln for ln in (tmp_path / "clients.md").read_text().splitlines()
             if ln.startswith("| GET")]
    kinds = {ln.split(" | ")[0] + ln.split(" | ")[1]: ln.split(" | ")[7] for ln in lines}
    assert kinds == {"| GET d=100 P=1 c=1hiredis 0.14.1 single": "uncorrected",
                     "| GET d=100 P=1 c=1redis-py 8.1.0 single": "uncorrected",
                     "| GET d=100 P=1 c=1 at 800/shiredis 0.14.1 single": "corrected",
                     "| GET d=100 P=1 c=1 at 800/sredis-py 8.1.0 single": "corrected"}, lines


@pytest.mark.usefixtures("no_strays")
def test_compare_two_clients_prints_a_verdict_table(tmp_path: Path) -> None:
    config = _config(tmp_path, commands=["SET", "GET"], requests=[2000])
    done = run_kvperf("compare", "--config", config, "--client", "redis-py",
                      "--client", "redis-py-asyncio", "--runs", "2", "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "B redis-py-asyncio vs A redis-py" in " ".join(done.stdout.split()), done.stdout
    for series in ("SET d=100 P=1 c=1", "GET d=100 P=1 c=1"):
        assert re.search(rf"│ {series} +│ rps +│", done.stdout), done.stdout
    rows = {side: json.loads(p.read_text())
            for side in ("A", "B") for p in tmp_path.glob(f"results/compare-*/{side}/metrics.json")}
    assert {r["tool"] for r in rows["A"]} == {"redis-py"}
    assert {r["tool"] for r in rows["B"]} == {"redis-py-asyncio"}
    assert [r["trial_id"] for r in rows["A"]] == [r["trial_id"] for r in rows["B"]]


def test_compare_refuses_one_client_and_duet(tmp_path: Path) -> None:
    done = run_kvperf("compare", "--client", "redis-py", cwd=tmp_path)
    assert done.returncode == 2 and "at least two clients" in done.stderr, done.stderr
    done = run_kvperf("compare", "--client", "redis-py", "--client", "redis-py:bogus",
                      cwd=tmp_path)
    assert done.returncode == 2 and "'bogus' is not a concurrency model" in done.stderr
    swept = _config(tmp_path, rate_sweep={"rates": [500]})  # open loops are run --client's
    done = run_kvperf("compare", "--config", swept, "--client", "redis-py", "--client",
                      "hiredis", cwd=tmp_path)
    assert done.returncode == 2 and "compare's client sides run closed loop" in done.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.usefixtures("no_strays")
def test_a_pool_versus_single_gate_passes_and_fails(tmp_path: Path) -> None:
    """The seed's pool overhead bound, as a gate between two series named by their labels:
    one run, redis-py under both models (the config's concurrency)."""
    config = _config(tmp_path, concurrency=["single", "pool"], requests=[3000])
    common = ("run", "--config", config, "--client", "redis-py", "--no-db")
    done = run_kvperf(*common, "--gate", "pool.rps>=0.2*single.rps", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Gates: 1 passed, 0 failed" in " ".join(done.stdout.split()), done.stdout
    done = run_kvperf(*common, "--label", "again", "--gate", "pool.rps>=5*single.rps",
                      cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"│ pool\.rps>=5\*single\.rps +│ SET d=100 P=1 c=1 redis-py:pool .*FAIL",
                     done.stdout), done.stdout
    done = run_kvperf(*common, "--gate", "async.rps>=1*single.rps", cwd=tmp_path)
    assert done.returncode == 2 and "no series of this run is" in done.stderr, done.stderr


def _manifest(root: Path, name: str, **fields: Any) -> None:
    folder = root / "python" / name
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({
        "name": name, "language": "python", "library": "fake", "version": "0",
        "summary": "a fake for the installer's tests", "install": [],
        "run": ["{python}", "-c", "pass"], **fields}))


def test_install_failures_name_the_step_and_missing_runtimes_are_skipped_only_when_asked(
        tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    _manifest(mine, "fake-failing-install", install=[
        ["{python}", "-c", "print('step one ran')"],
        ["{python}", "-c", "import sys; print('no wheel for this platform'); sys.exit(3)"]])
    _manifest(mine, "fake-missing-runtime", requires=[["kvperf-no-such-runtime", "--version"]])
    env = {"KVPERF_CLIENTS_CACHE": str(tmp_path / "cache")}
    done = run_kvperf("clients", "install", "--clients-dir", mine, "fake-failing-install",
                      cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stderr
    assert "fake-failing-install: step 2/2:" in done.stderr
    assert "failed (exit 3)" in done.stderr and "no wheel for this platform" in done.stderr
    assert not list((tmp_path / "cache").glob("*/.installed"))  # no stamp: not installed
    done = run_kvperf("clients", "install", "--clients-dir", mine, "fake-missing-runtime",
                      cwd=tmp_path, env=env)
    assert done.returncode == 1 and "kvperf-no-such-runtime not found" in done.stderr
    (mine / "python" / "fake-failing-install" / "manifest.json").unlink()
    for manifest in discover(shipped_dirs()).values():  # --all: the shipped ones, as installed
        (tmp_path / "cache" / manifest.install_dir.name).symlink_to(manifest.install_dir)
    done = run_kvperf("clients", "install", "--all", "--available", "--clients-dir", mine,
                      "--clients-dir", FAKES, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "skipped fake-missing-runtime: kvperf-no-such-runtime not found" in done.stderr
    assert "fake-crashing: installed" in done.stderr
    assert "redis-py: already installed" in done.stderr


@pytest.mark.usefixtures("no_strays")
def test_transactions_and_incr_account_for_multi_exec_and_every_call(tmp_path: Path) -> None:
    config = _config(tmp_path, commands=["MULTI_EXEC_5", "INCR"], requests=[2000],
                     warmup=[1])
    done = run_kvperf("run", "--config", config, "--client", "valkey-glide", "--no-db",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    tx, incr = read_metrics(tmp_path / "results")
    counted = tx["harness"]["accounting"]
    assert set(counted) == {"set", "multi", "exec"}, counted
    passed = tx["harness"]["allocations"]["ops"]  # the allocation pass's transactions too
    assert counted["multi"]["reported"] == counted["multi"]["server"] == 2000 // 5 + \
        tx["harness"]["warmup"]["MULTI"] + passed // 5
    assert counted["set"]["reported"] == counted["set"]["server"]
    assert incr["harness"]["accounting"]["incr"]["reported"] == \
        incr["harness"]["accounting"]["incr"]["server"] > 2000


@pytest.mark.usefixtures("no_strays")
def test_sigint_during_a_harness_kills_its_process_group_and_exits_130(tmp_path: Path) -> None:
    env = {**os.environ, "KVPERF_CLIENTS_CACHE": str(tmp_path / "cache")}
    done = run_kvperf("clients", "install", "--clients-dir", FAKES, "fake-hanging",
                      cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    proc = subprocess.Popen([str(KVPERF), "run", "--config", str(_config(tmp_path)),
                             "--client", "fake-hanging", "--clients-dir", str(FAKES),
                             "--no-db"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("results/*/trials/*/scratch/pids")):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    (pids,) = tmp_path.glob("results/*/trials/*/scratch/pids")
    time.sleep(0.5)  # the grandchild started too
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err
    _gone(pids)


@pytest.mark.usefixtures("no_strays")
def test_compare_one_client_under_two_models_pairs_its_sides(tmp_path: Path) -> None:
    """The seed's pool overhead as a comparison: redis-py:single vs redis-py:pool."""
    config = _config(tmp_path, requests=[2000])
    done = run_kvperf("compare", "--config", config, "--client", "redis-py:single",
                      "--client", "redis-py:pool", "--runs", "2", "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "B redis-py:pool vs A redis-py:single" in " ".join(done.stdout.split())
    assert re.search(r"│ SET d=100 P=1 c=1 +│ rps +│", done.stdout), done.stdout


@pytest.mark.usefixtures("no_strays")
def test_every_shipped_harness_runs_through_kvperf_with_its_calls_accounted(
        tmp_path: Path) -> None:
    """All shipped clients (Python, Node, Go, Java, C, Ruby; scripts/test installs them) in one
    `kvperf run`: SET/GET 1:10 at P=1 and P=10 on one connection, warmup included. kvperf
    checks each result against the schema, the server's commandstats against what the
    harness reported (within 1%) and its calls per read against the pipeline (P=10 must
    reach the server as pipelines), so an ok row is a harness that honoured the contract;
    each reports its CPU in its measured window and the bytes it allocates per operation
    in an untimed pass after it."""
    shipped = sorted(discover(shipped_dirs()))
    assert {"go-redis", "rueidis", "ioredis", "node-redis", "iovalkey", "valkey-glide-node",
            "jedis", "lettuce", "hiredis", "redis-rb", "redis-rb-hiredis",
            "redis-py", "redis-py-asyncio", "valkey-glide"} <= set(shipped), shipped
    config = _config(tmp_path, commands=["MIX_READ_HEAVY"], pipelines=[1, 10],
                     requests=[2000], warmup=[0])
    args = [arg for name in shipped for arg in ("--client", f"{name}:single")]
    done = run_kvperf("run", "--config", config, *args, "--no-db", cwd=tmp_path, timeout=900)
    rows = read_metrics(tmp_path / "results")
    by_client: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_client.setdefault(row["config_set"]["client"], []).append(row)
    assert sorted(by_client) == shipped, done.stdout[-3000:] + done.stderr[-3000:]
    failed = {name: [r["error"] for r in got if r["status"] != "ok"]
              for name, got in by_client.items()}
    assert not {k: v for k, v in failed.items() if v}, failed
    assert done.returncode == 0, done.stderr[-3000:]
    for name, got in by_client.items():
        assert sorted(r["pipeline"] for r in got) == [1, 10], (name, got)
        for row in got:
            accounting = row["harness"]["accounting"]
            assert accounting["get"]["reported"] == accounting["get"]["server"] > 0, name
            assert row["harness"]["ops"] == 2000 and row["rps"] > 0, (name, row["harness"])
            # every kit reads its own CPU around its measured window (issue 37)
            assert row["harness"]["cpu_window"]["source"], (name, row["harness"])
            assert row["client"]["client_cpu_us_per_request"] == row["harness"]["cpu_us_per_op"]
            # … and its bytes per operation in an untimed pass after it (issue 37): exact
            # where the runtime counts bytes (Go, the JVM, C's malloc counter)
            allocations = row["harness"]["allocations"]
            assert allocations["unit"] == "bytes" and allocations["per_op"] > 0, (name, row)
            assert allocations["exact"] is (row["harness"]["language"] in EXACT), allocations
            wire = row["harness"]["wire"]  # redis-rb writes a batch command by command
            batched = {"pipelined", "written per command"} if name == "redis-rb" else {
                "pipelined"}
            assert wire["batching"] in (batched if row["pipeline"] == 10
                                        else {"one call per read"}), (name, wire)


def test_a_model_outside_the_manifest_exits_2_and_each_harness_refuses_it_too(
        tmp_path: Path) -> None:
    """A manifest's ``models`` are what its harness runs: kvperf refuses another model before
    any server starts, and every shipped harness, given one outside its list, refuses it
    itself (exit 2, "not supported") — so no manifest claims less or more than its harness.
    No server is needed: a harness checks its model before it connects."""
    done = run_kvperf("run", "--config", _config(tmp_path), "--client", "redis-py:async",
                      cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "client redis-py runs concurrency models single, pool, not async" in done.stderr
    assert not (tmp_path / "results").exists()
    spec = {"format": "kvperf-client-workload", "version": 1,
            "endpoint": {"host": "127.0.0.1", "port": 1, "tls": False, "ca_file": None,
                         "cert_file": None, "key_file": None},
            "commands": [{"command": "GET", "ratio": 1}],
            "keys": {"prefix": "key:", "count": 10, "pattern": "random"},
            "value_size": 10, "pipeline": 1, "transaction": False,
            "requests": 10, "duration_s": None, "warmup_s": 0, "seed": 1, "noop": False}
    refused = {}
    for name, manifest in sorted(discover(shipped_dirs()).items()):
        assert manifest.models, f"{name}: shipped manifests declare their models"
        for model in {"single", "pool", "async"} - {m.value for m in manifest.models}:
            path = tmp_path / f"{name}-{model}.json"
            path.write_text(json.dumps({**spec, "concurrency": {"model": model,
                                                                "workers": 4}}))
            ran = subprocess.run([*manifest.expand(manifest.run), str(path)], cwd=tmp_path,
                                 env=manifest.environment(), capture_output=True, text=True,
                                 timeout=120, stdin=subprocess.DEVNULL)
            refused[(name, model)] = (ran.returncode, "not supported" in ran.stderr)
    assert len(refused) >= 10, refused  # the 14 harnesses lack 10 models between them
    assert all(v == (2, True) for v in refused.values()), refused


@pytest.mark.usefixtures("no_strays")
def test_profile_names_each_runtime_s_frames_of_the_library(tmp_path: Path) -> None:
    """``--profile`` records a harness's process tree from its exec (beside the server
    node): Go's native frames, and the JIT frames of Node.js and the JVM through the perf
    maps kvperf asks their runtimes for (clients/profiling.py), moved out of /tmp into the
    trial's directory."""
    config = _config(tmp_path, commands=["GET"], requests=[5000], warmup=[0])
    done = run_kvperf("run", "--config", config, "--client", "go-redis", "--client",
                      "ioredis", "--client", "jedis", "--profile", "--no-db", cwd=tmp_path,
                      timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "results" / "valkey-8.0.1"
    frames = {"go-redis": "github.com/redis/go-redis/v9.(*Client).Process",
              "ioredis": "node_modules/ioredis/built/Redis.js",
              "jedis": "redis.clients.jedis.Connection.executeCommand"}
    for row in read_metrics(tmp_path / "results"):
        name = row["config_set"]["client"]
        clients = [n for n in row["profile"]["nodes"] if n.get("role") == "client"]
        assert len(clients) == 1 and len(row["profile"]["nodes"]) == 2, (name, row["profile"])
        folded = (out / clients[0]["files"]["folded stacks"]).read_text()
        assert frames.pop(name) in folded, (name, folded[:2000])
        maps = [f for f in clients[0]["files"] if f.startswith("perf-")
                and f.endswith(".map")]
        assert bool(maps) == (name != "go-redis"), (name, clients[0]["files"])
        for m in maps:
            assert not (Path("/tmp") / m).exists() and (out / clients[0]["files"][m]).is_file()
    assert not frames, frames  # every client had its row
    assert "jedis single GET d=100" in done.stdout, done.stdout[-3000:]


@pytest.mark.alone  # judges CPU per operation, which other processes' load would blur
@pytest.mark.usefixtures("no_strays")
def test_jedis_cpu_per_operation_is_the_measured_window_s_whatever_the_trial_s_length(
        tmp_path: Path) -> None:
    """The harness reads its own CPU when warmup ends and when its last worker is done, so
    a 2 s and a 6 s trial give the same client CPU per operation (within 15%, medians of 7
    rounds' undisturbed trials); the process total (wait4: the JVM's start-up, its JIT's
    first compilations and the warmup in it) — what format 9 called the client's CPU per
    operation — is larger, and what it adds is larger per operation the shorter the trial.
    One round's window figure moved by up to 23% between trials on a quiet machine (the
    JVM's JIT and GC threads are the process's too), and between 18 and 30 µs on an EPYC VM
    (fewer calls a second, more CPU each: a blocking read that finds no reply sleeps), hence
    the medians of 7; docs/PERFORMANCE.md has 3 s against 30 s after the table's 1 s, run
    by hand.

    Warmup books its calls like the window and forgets them at its end: when it recorded
    nothing, the window's first calls ran the histogram code for the first time and C2
    compiled it (and recompiled the loop) inside the window: 2-11 ticks of the compiler
    threads' /proc/PID/task/*/stat there against the worker's ~50 a second on an EPYC VM,
    and CI's medians read 28.4 µs for 2 s trials against 23.8 for 6 s (2 s higher in 4 of 5
    rounds with a 4 s warmup too). With the fix: 0-1 tick, medians 21.5 and 21.8, then 21.3
    and 23.3 (5 rounds).

    The ceiling is the JVM's fork-to-fork spread: each trial is a new JVM whose JIT settles
    into its own speed (at P=10 one EPYC VM run's 2 s trials fell into two groups, 2.7-2.9
    and 3.4-3.6 µs a call). Over four 5- and 7-round runs there, with the fix, the 2 s
    median differed from the 6 s one by −8.4%, −1.5%, +5.0% and +9.3% (the last in CI,
    after leaving out the 4 of 14 trials with 11-17% of a core stolen, which kvperf marks
    disturbed); 15% holds that spread. The process total differs by +50% and more, and the
    JIT compiling in the window added +9 to +19%."""
    config = _config(tmp_path, commands=["GET"], requests=None, duration=[2, 6], warmup=[2])
    # a trial other processes disturbed (their CPU, not the harness's window) runs once more
    done = run_kvperf("run", "--config", config, "--client", "jedis", "--no-db", "--runs",
                      "7", "--retry-disturbed", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # trials still disturbed after their retry (the hypervisor stole > 10%) are left out
    rows = [r for r in read_metrics(tmp_path / "results") if not r["interference"]["disturbed"]]
    counts = [sum(r["duration"] == seconds for r in rows) for seconds in (2, 6)]
    assert min(counts) >= 4, f"undisturbed trials of 2 s and 6 s: {counts} of 7 each"
    window, total = ([statistics.median(pick(r) for r in rows if r["duration"] == seconds)
                      for seconds in (2, 6)]
                     for pick in (lambda r: r["client"]["client_cpu_us_per_request"],
                                  lambda r: r["harness"]["process_cpu_us_per_op"]))
    assert abs(window[0] / window[1] - 1) <= 0.15, (window, total)
    assert total[0] > window[0] and total[1] > window[1], (window, total)
    # the process total was not like for like: what it adds to the window (start-up, JIT,
    # warmup) weighs more per operation in the short trial — 1.66× in the run where the
    # ratio of the totals, diluted by the ~23 µs/op both share, was only 1.09
    excess = [t - w for t, w in zip(total, window, strict=True)]
    assert excess[0] / excess[1] > 1.3, (window, total)


@pytest.mark.alone  # judges a throughput ratio
@pytest.mark.usefixtures("no_strays")
def test_lettuce_async_batches_reach_the_server_as_pipelines(tmp_path: Path) -> None:
    """Lettuce's async model writes each batch with one flush (auto-flush off), so the server
    reads a P=10 batch whole: at least 9 calls per read in every trial (measured 11.3-11.6;
    one write per command, as before issue 37, gave 1.7-6.4: docs/PERFORMANCE.md), and with
    50 batches in flight P=10 makes at least 1.8× the rate of single calls (medians of 3
    rounds; the per-command writer made 0.8-1.5×).

    The rate ratio is this host's JIT and steal too, so it is the looser check: the fix made
    3.5-3.9× on the earlier hosts and 2.1-4.3× on an EPYC VM half as fast, where each trial's
    new JVM settles into its own speed (one CI run's P=10 clients spent 8.6-10.1 µs a call,
    others' 5.9-6.2). The warmup is 10 s: there the C2 compiler thread held half of the
    client's pinned core for the JVM's first 9-11 s (/proc/PID/task/*/stat sampled every
    second), and a 3 s warmup measured a half-compiled client: P=1 19k, P=10 35k rps."""
    config = _config(tmp_path, pipelines=[1, 10], clients=[50], requests=None,
                     duration=[2], warmup=[10], keyspacelen=[10000])
    done = run_kvperf("run", "--config", config, "--client", "lettuce:async", "--no-db",
                      "--runs", "3", "--retry-disturbed", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = read_metrics(tmp_path / "results")
    wires = [(r["pipeline"], r["rps"], r["harness"]["wire"]) for r in rows]
    assert all(w["calls_per_read"] >= 9 and w["batching"] == "pipelined"
               for p, _, w in wires if p == 10), wires
    single, batched = (statistics.median(r["rps"] for r in rows if r["pipeline"] == p)
                       for p in (1, 10))
    assert batched >= 1.8 * single, wires
