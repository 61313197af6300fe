"""`kvperf run --definitions … --override-test-time 2` on real valkey-server with kvload's
memtier front end, from a scratch directory with relative paths and the default results
directory, as users run it: corpus definitions (a SET/GET mix, a hash, a --command-ratio
mix) give ok rows whose preloaded keyspace is check.keyspacelen, whose INFO commandstats mix
is the one asked for and whose exporter paths are numbers; redisbench-admin 0.2 KPIs pass
(exit 0) and fail (exit 1) as their bounds say; ``--cap-request-bound`` ends request-bound
clients at the override time."""

from __future__ import annotations

import contextlib
import json
import math
import signal
import socket
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from kvperf.server.resp import ConnectionLost, Endpoint, RespClient
from tests.fixtures.corpus import copy_definitions
from tests.helpers import (
    KVPERF,
    ROOT,
    read_metrics,
    require_binary,
    run_kvperf,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900),
              pytest.mark.usefixtures("no_strays")]

CORPUS_TESTS = {  # file stem → the commands and shares it asks for
    "memtier_benchmark-1Mkeys-string-mixed-50-50-set-get-32B": {"set": 0.5, "get": 0.5},
    "memtier_benchmark-1Kkeys-hash-listpack-500-fields-update-20-fields-with-1B-to-64B-values":
        {"hset": 1.0},
    "memtier_benchmark-playbook-session-caching-string-100k-sessions": {"get": 0.9, "set": 0.1},
}
MIX_TOLERANCE = 0.05  # executed share of each command vs the share asked for


def _scratch_corpus(corpus: Path, scratch: Path) -> Path:
    defs = copy_definitions(corpus, scratch / "defs", *CORPUS_TESTS)
    return defs


def _metric_names(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {name for (name,) in conn.execute("SELECT DISTINCT name FROM metrics")}


def test_corpus_definitions_run_on_standalone(corpus: Path, tmp_path: Path) -> None:
    _scratch_corpus(corpus, tmp_path)
    done = run_kvperf("run", "--definitions", "defs", "--override-test-time", "2",
                      "--topologies", "oss-standalone", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    for position in (1, 2, 3):
        assert f"[{position}/3] " in done.stderr, done.stderr
    rows = read_metrics(tmp_path / "results")
    assert sorted(r["definition"]["file"].rsplit("/", 1)[1][:-4] for r in rows) == sorted(
        CORPUS_TESTS)
    for row in rows:
        _check_row(row, CORPUS_TESTS[Path(row["definition"]["file"]).stem])
    exported = _metric_names(tmp_path / "results" / "kvperf.db")
    assert '$."ALL STATS".Totals."Ops/sec"' in exported and "rps" in exported


def _check_row(row: dict[str, Any], mix: dict[str, float]) -> None:
    name = row["command"]
    assert row["status"] == "ok", (name, row["error"])
    assert row["kvperf_format"] == 10 and row["config_set"] == {"topology": "oss-standalone"}
    assert row["definition"]["override_test_time"] == 2 and row["duration"] == 2
    assert row["rps"] > 0 and row["p50_latency_ms"] > 0, name
    assert row["checks"]["keyspacelen"] == row["keyspacelen"] > 0, name
    executed = row["definition"]["command_mix"]
    assert set(executed) == set(mix), (name, executed)
    for command, share in mix.items():
        assert executed[command]["expected"] == pytest.approx(share), (name, command)
        assert executed[command]["calls"] > 0, (name, command)
        assert abs(executed[command]["executed"] - share) <= MIX_TOLERANCE, (name, executed)
    metrics = row["definition"]["metrics"]
    all_stats = {path: v for path, v in metrics.items() if path.startswith('$."ALL STATS"')}
    assert len(all_stats) >= 4, metrics
    assert all(isinstance(v, float) for v in all_stats.values()), all_stats
    assert all_stats['$."ALL STATS".Totals."Ops/sec"'] == row["rps"]


KPI_DEFINITION = """\
version: 0.2
name: {name}
dbconfig:
  - configuration-parameters:
    - save: '""'
clientconfig:
  - tool: memtier_benchmark
  - parameters:
    - clients: 5
    - threads: 1
    - ratio: "1:0"
    - data-size: 32
    - key-maximum: 10000
    - test-time: 60
kpis:
  - ge: {{ $."ALL STATS".Totals."Ops/sec": {floor} }}
  - le: {{ $."ALL STATS".Totals."Percentile Latencies"."p50.00": 1000 }}
exporter:
  redistimeseries:
    metrics:
      - $."ALL STATS".Totals."Ops/sec"
"""


@pytest.mark.parametrize(("floor", "code", "verdict"), [(100, 0, "pass"), (1e12, 1, "fail")])
def test_redisbench_admin_kpis_gate_the_exit_code(tmp_path: Path, floor: float, code: int,
                                                  verdict: str) -> None:
    (tmp_path / "kpis.yml").write_text(KPI_DEFINITION.format(name="kvperf-kpi-set",
                                                              floor=floor))
    done = run_kvperf("run", "--definitions", "kpis.yml", "--override-test-time", "1",
                      cwd=tmp_path, timeout=300)
    assert done.returncode == code, done.stdout[-3000:] + done.stderr[-3000:]
    assert "KPIs" in done.stdout and verdict in done.stdout
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok"  # a failed KPI fails the gate, not the measurement
    passed = [k["passed"] for k in row["definition"]["kpis"]]
    assert passed == ([True, True] if code == 0 else [False, True])
    assert (f"{1 if code else 0} KPI(s) failed" in done.stderr) == bool(code)
    gates = json.loads(next((tmp_path / "results").glob("*/gates.json")).read_text())
    assert gates["passed"] == (code == 0) and [g["passed"] for g in gates["gates"]] == passed
    assert gates["gates"][0]["series"] == "kvperf-kpi-set [oss-standalone]"


GET_DEFINITION = """\
version: 0.4
name: {name}
dbconfig:
  configuration-parameters:
    save: '""'
{dataset}clientconfig:
  tool: memtier_benchmark
  arguments: >-
    --command "GET __key__" --command-key-pattern R --key-minimum 1
    --key-maximum {keys} --test-time {seconds} -c 2 -t 1 --hide-histogram
"""


def _rdb_with_keys(directory: Path, keys: int) -> Path:
    """dump.rdb holding ``keys`` memtier-named keys (memtier-1 … memtier-N)."""
    kvload = require_binary("kvload")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    server = subprocess.Popen([require_binary("valkey-server"), "--port", str(port), "--save",
                               "", "--dir", str(directory)], stdout=subprocess.DEVNULL)
    try:
        endpoint = Endpoint("127.0.0.1", port)
        for _ in range(100):
            with contextlib.suppress(OSError, ConnectionLost):
                with RespClient(endpoint) as client:
                    client.call("PING")
                break
            time.sleep(0.05)
        done = subprocess.run([kvload, "memtier", "--server", "127.0.0.1", "--port", str(port),
                               "--ratio", "1:0", "--key-pattern", "P:P", "--key-minimum", "1",
                               "--key-maximum", str(keys), "-n", "allkeys", "-c", "1", "-t",
                               "1", "--hide-histogram"], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        with RespClient(endpoint) as client:
            assert client.call("DBSIZE") == keys
            client.call("SAVE")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return directory / "dump.rdb"


def test_a_local_dataset_is_loaded_and_its_keyspace_checked(tmp_path: Path) -> None:
    rdb = _rdb_with_keys(tmp_path, 3000)
    (tmp_path / "defs").mkdir()
    rdb.rename(tmp_path / "defs" / "keys.rdb")
    for name, keys in (("ds-ok", 3000), ("ds-wrong", 2999)):
        (tmp_path / "defs" / f"{name}.yml").write_text(GET_DEFINITION.format(
            name=name, keys=keys, seconds=60,
            dataset=f"  dataset: keys.rdb\n  check:\n    keyspacelen: {keys}\n"))
    done = run_kvperf("run", "--definitions", "defs", "--override-test-time", "1",
                      cwd=tmp_path, timeout=300)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {r["command"]: r for r in read_metrics(tmp_path / "results")}
    assert rows["ds-ok"]["status"] == "ok" and rows["ds-ok"]["checks"]["keyspacelen"] == 3000
    assert rows["ds-ok"]["server"]["keyspace_misses"] == 0
    assert rows["ds-wrong"]["status"] == "failed"
    assert "expects 2999 keys, the server holds 3000" in rows["ds-wrong"]["error"]


CAPPED_DEFINITION = """\
version: 0.4
name: {name}
dbconfig:
  configuration-parameters:
    save: '""'
    enable-debug-command: 'yes'
clientconfig:
  tool: memtier_benchmark
  arguments: >-
    --command "{command}" --command-key-pattern R --key-minimum 1 --key-maximum 1000
    -n {requests} -c 1 -t 1 --hide-histogram
"""


def test_cap_request_bound_ends_request_bound_clients_at_the_override(tmp_path: Path) -> None:
    """``--cap-request-bound``: a client of 20M SETs (minutes whole) stops after the
    override's second with part of its requests; a one-shot ``DEBUG SLEEP 2`` (-n 1) still
    counts its one reply, which comes after the cap; both rows say they were capped. Without
    ``--override-test-time`` the flag is exit 2, naming what is missing."""
    (tmp_path / "defs").mkdir()
    for name, command, requests in (("many-sets", "SET __key__ __data__", 20_000_000),
                                    ("one-sleep", "DEBUG SLEEP 2", 1)):
        (tmp_path / "defs" / f"{name}.yml").write_text(CAPPED_DEFINITION.format(
            name=name, command=command, requests=requests))
    alone = run_kvperf("run", "--definitions", "defs", "--cap-request-bound", cwd=tmp_path)
    assert alone.returncode == 2 and "give --override-test-time S" in alone.stderr
    done = run_kvperf("run", "--definitions", "defs", "--override-test-time", "1",
                      "--cap-request-bound", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {r["command"]: r for r in read_metrics(tmp_path / "results")}
    assert {r["status"] for r in rows.values()} == {"ok"}
    assert 0 < rows["many-sets"]["server"]["commands"]["set"]["calls"] < 20_000_000
    assert rows["one-sleep"]["server"]["commands"]["debug"]["calls"] == 1
    for row in rows.values():
        assert any("capped at 1 s" in note for note in row["definition"]["notes"]), row


def test_sigint_keeps_finished_tests_and_stops_what_kvperf_started(tmp_path: Path) -> None:
    (tmp_path / "defs").mkdir()
    for name, seconds in (("first", 1), ("second", 60), ("third", 1)):
        (tmp_path / "defs" / f"{name}.yml").write_text(GET_DEFINITION.format(
            name=name, keys=100, seconds=seconds, dataset=""))
    proc = subprocess.Popen([str(KVPERF), "run", "--definitions", "defs"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if "[1/3]" in line:
            break
    time.sleep(2.0)  # into the second test's measure stage
    started = _children(proc.pid)
    assert len(started) >= 2, started  # the second test's server and kvload
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    err = "".join(lines) + err
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err and "interrupted" in err
    rows = read_metrics(tmp_path / "results")
    assert [(r["command"], r["status"]) for r in rows] == [("first", "ok")]
    assert not [pid for pid in started if Path(f"/proc/{pid}").exists()]


def _children(parent: int) -> set[int]:
    """Processes whose parent is ``parent`` (kvperf's servers, taskset'd kvload)."""
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and int((proc / "stat").read_text().rsplit(")", 1)[1]
                                           .split()[1]) == parent:
                found.add(int(proc.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_a_cluster_topology_runs_on_every_primary(corpus: Path, tmp_path: Path) -> None:
    stem = "memtier_benchmark-1Mkeys-load-string-with-10B-values-pipeline-100-nokeyprefix"
    copy_definitions(corpus, tmp_path / "defs", stem)
    done = run_kvperf("run", "--definitions", "defs", "--override-test-time", "1",
                      "--topologies", "oss-cluster-3-primaries", "--no-db", cwd=tmp_path,
                      timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok" and row["cluster_mode"] is True
    assert row["config_set"] == {"topology": "oss-cluster-3-primaries"}
    per_node = row["server"]["calls_per_node"]
    assert len(per_node) == 3 and min(per_node) > 0.2 * sum(per_node), per_node
    assert row["definition"]["command_mix"]["set"]["executed"] == 1.0


REPLICA_DEFINITION = """\
version: 0.4
name: kvperf-replica-setget
redis-topologies:
  - oss-standalone-01-replicas
  - oss-standalone-01-replicas-rdb
  - oss-standalone-01-replicas-aof-everysec
dbconfig:
  configuration-parameters:
    save: '""'
  preload_tool:
    tool: memtier_benchmark
    arguments: >-
      --data-size 10 --ratio 1:0 --key-pattern P:P --key-minimum 1 --key-maximum 2000
      -n allkeys -c 1 -t 1 --pipeline 50 --hide-histogram
  check:
    keyspacelen: 2000
clientconfig:
  tool: memtier_benchmark
  arguments: >-
    --data-size 10 --ratio 1:4 --key-pattern R:R --key-minimum 1 --key-maximum 2000
    --test-time 60 -c 4 -t 1 --hide-histogram
"""


def test_replica_topologies_with_their_persistence(tmp_path: Path) -> None:
    (tmp_path / "replicas.yml").write_text(REPLICA_DEFINITION)
    done = run_kvperf("run", "--definitions", "replicas.yml", "--override-test-time", "1",
                      "--no-db", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {r["config_set"]["topology"]: r for r in read_metrics(tmp_path / "results")}
    assert len(rows) == 3 and all(r["status"] == "ok" for r in rows.values()), rows
    for row in rows.values():
        assert row["checks"]["replicas_in_sync"] == 1 and row["checks"]["keyspacelen"] == 2000
        mix = row["definition"]["command_mix"]
        assert abs(mix["set"]["executed"] - 0.2) <= MIX_TOLERANCE, mix
    assert rows["oss-standalone-01-replicas-rdb"]["checks"]["server_config"]["save"] == "10 1000"
    aof = rows["oss-standalone-01-replicas-aof-everysec"]["checks"]["server_config"]
    assert (aof["appendonly"], aof["appendfsync"]) == ("yes", "everysec")


@pytest.mark.parametrize(("floor", "code"), [("1000", 0), ("1000000000", 1)])
def test_the_shipped_redis_benchmark_kpi_example_gates(tmp_path: Path, floor: str,
                                                       code: int) -> None:
    """configs/definitions/redis-benchmark-set-kpis.yml (redisbench-admin 0.2, redis-benchmark
    with `parameters`): its KPIs over redisbench-admin's `$.Tests.Overall` document."""
    text = (ROOT / "configs" / "definitions" / "redis-benchmark-set-kpis.yml").read_text()
    assert "$.Tests.Overall.rps: 1000 }" in text
    (tmp_path / "set-kpis.yml").write_text(text.replace("rps: 1000 }", f"rps: {floor} }}"))
    done = run_kvperf("run", "--definitions", "set-kpis.yml", cwd=tmp_path, timeout=300)
    assert done.returncode == code, done.stdout[-3000:] + done.stderr[-3000:]
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok" and row["definition"]["tools"][0].startswith("redis-benchmark")
    assert row["definition"]["metrics"]["$.Tests.Overall.rps"] == row["rps"] > 0
    assert row["definition"]["command_mix"]["set"]["calls"] >= 100_000
    assert [k["passed"] for k in row["definition"]["kpis"]] == [code == 0, True]


INIT_DEFINITION = """\
version: 0.4
name: kvperf-init
dbconfig:
  configuration-parameters:
    save: '""'
  init_commands:
    - '"SET" "init:a" "1"'
    - HSET init:h f v
    - BGSAVE
  init_lua: redis.call('SET', 'init:lua', '1')
  wait_for_bgsave: true
  check:
    keyspacelen: 3
clientconfig:
  tool: memtier_benchmark
  arguments: --command "GET init:a" --test-time 60 -c 1 -t 1 --hide-histogram
"""


def test_init_commands_lua_and_wait_for_bgsave(tmp_path: Path) -> None:
    (tmp_path / "init.yml").write_text(INIT_DEFINITION)
    bad = INIT_DEFINITION.replace("kvperf-init", "kvperf-init-bad").replace(
        "    - BGSAVE\n", "    - NOSUCHCOMMAND x\n")
    (tmp_path / "bad.yml").write_text(bad)
    done = run_kvperf("run", "--definitions", "init.yml", "bad.yml", "--override-test-time",
                      "1", "--no-db", cwd=tmp_path, timeout=300)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {r["command"]: r for r in read_metrics(tmp_path / "results")}
    good = rows["kvperf-init"]
    assert good["status"] == "ok" and good["checks"]["keyspacelen"] == 3, good["error"]
    assert "bgsave" in good["stage_seconds"] and good["server"]["keyspace_misses"] == 0
    assert rows["kvperf-init-bad"]["status"] == "failed"
    assert "NOSUCHCOMMAND x: the server answered" in rows["kvperf-init-bad"]["error"]


def test_compare_two_servers_over_a_corpus_definition(corpus: Path, tmp_path: Path) -> None:
    """`compare --server-bin A --server-bin B --definitions …`: each round runs the test on
    both sides in a seeded order; rows pair by round and the verdict table names the test.
    Each side's second round starts from a dataset snapshot (the first saved it, or an
    earlier test of the session did), not from a fresh preload."""
    stem = "memtier_benchmark-1Mkeys-string-mixed-50-50-set-get-32B"
    copy_definitions(corpus, tmp_path / "defs", stem)
    done = run_kvperf("compare", "--server-bin", require_binary("valkey-server"),
                      "--server-bin", require_binary("redis-server"), "--definitions", "defs",
                      "--override-test-time", "1", "--topologies", "oss-standalone",
                      "--runs", "2", "--seed", "5", "--label", "dc", "--output", "r.md",
                      "--no-db", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 test(s) × 2 sides × 2 round(s), order seed 5" in done.stdout + done.stderr
    sides = {side: json.loads((tmp_path / "results" / "dc" / side / "metrics.json").read_text())
             for side in ("A", "B")}
    for side, rows in sides.items():
        assert [(r["side"], r["run"], r["ab_seed"], r["status"]) for r in rows] == [
            (side, 1, 5, "ok"), (side, 2, 5, "ok")]
    assert sides["A"][0]["server_version"] != sides["B"][0]["server_version"]
    assert sides["A"][0]["trial_id"] == sides["B"][0]["trial_id"]
    assert [rows[1]["definition"]["preload"]["source"] for rows in sides.values()] == [
        "snapshot", "snapshot"]
    report = (tmp_path / "r.md").read_text()
    assert stem in report and "rps" in report


def test_compare_definitions_refuses_what_does_not_apply(tmp_path: Path) -> None:
    bins = ["--server-bin", require_binary("valkey-server"), "--server-bin",
            require_binary("valkey-server")]
    duet = run_kvperf("compare", *bins, "--definitions", "x.yml", "--schedule", "duet",
                      cwd=tmp_path)
    assert duet.returncode == 2 and "--schedule duet does not apply with --definitions" \
        in duet.stderr, duet.stderr
    stray = run_kvperf("compare", *bins, "--override-test-time", "1", cwd=tmp_path)
    assert stray.returncode == 2 and "apply only with --definitions" in stray.stderr


RDB_LOAD = "memtier_benchmark-rdb-load-256B-random"
TOO_BIG = "memtier_benchmark-playbook-feature-store-hash-1M-entities-300-features"  # 32g


def test_an_rdb_load_definition_times_a_real_reload(corpus: Path, tmp_path: Path) -> None:
    """DEBUG RELOAD NOSAVE NOFLUSH of the preloaded 2,000,000 keys: kvperf SAVEs them and
    empties the database first, so the reload loads them all and answers OK."""
    copy_definitions(corpus, tmp_path / "defs", RDB_LOAD)
    done = run_kvperf("run", "--definitions", "defs", "--topologies", "oss-standalone",
                      "--override-test-time", "1", "--no-db", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok", row["error"]
    assert 0 < row["rps"] < 10 and row["p50_latency_ms"] > 50, row  # a reload, not an error
    assert f"ok {row['rps']:.2f} ops/s" in done.stderr  # a slow rate is never shown as 0
    assert row["server"]["commands"]["debug"]["calls"] == 1
    assert "error_replies" not in row["checks"], row["checks"]
    assert row["checks"]["keyspacelen"] == row["checks"]["rdb_checks_keyspacelen"] == 2_000_000
    assert "save" in row["stage_seconds"]


def _too_big(corpus: Path, defs: Path) -> tuple[str, int]:
    """The corpus' 32g definition in ``defs``, its server's request raised to twice this
    machine's memory so that it fits on no machine the tests run on (on this 24 GiB one the
    corpus' own 32g already does not): the refusal's text and the request in GiB."""
    copy_definitions(corpus, defs, TOO_BIG)
    memory = int(Path("/proc/meminfo").read_text().split()[1]) * 1024  # MemTotal
    asked = 2 * math.ceil(memory / (1 << 30))
    path = defs / f"{TOO_BIG}.yml"
    assert "memory: 32g" in path.read_text()
    path.write_text(path.read_text().replace("memory: 32g", f"memory: {asked}g"))
    return (f"needs {asked + 2} GiB of memory (server {asked} GiB, memtier_benchmark 2 GiB), "
            "this machine has", asked)


def test_a_definition_too_big_for_this_machine_is_refused_before_any_server(
        corpus: Path, tmp_path: Path) -> None:
    """More memory asked than the machine has: refused in the dry run and the run (both
    exit 2 when it is the only test) before any server starts; --ignore-resources plans it (not
    run)."""
    reason, asked = _too_big(corpus, tmp_path / "defs")
    dry = run_kvperf("run", "--definitions", "defs", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 2, dry.stdout + dry.stderr  # as the run below
    assert f"refused {TOO_BIG} [oss-standalone]: {reason}" in " ".join(dry.stdout.split())
    ran = run_kvperf("run", "--definitions", "defs", "--override-test-time", "2", cwd=tmp_path,
                     timeout=120)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    flat = " ".join(ran.stderr.split())
    assert f"not run {TOO_BIG} [oss-standalone]: {reason}" in flat
    assert "none of the 1 selected test(s) can run here" in flat
    assert not (tmp_path / "results").exists()  # no trial dir, no server log
    ignored = run_kvperf("run", "--definitions", "defs", "--dry-run", "--ignore-resources",
                         cwd=tmp_path)
    assert ignored.returncode == 0, ignored.stdout + ignored.stderr
    out = " ".join(ignored.stdout.split())
    assert f"plan {TOO_BIG} [oss-standalone" in out and "1 planned, 0 partly, 0 refused" in out
    assert f"resources not checked (--ignore-resources): server memory {asked}g" in out


ERROR_DEFINITION = """\
version: 0.4
name: {name}
dbconfig:
  configuration-parameters:
    save: '""'
clientconfig:
  tool: memtier_benchmark
  arguments: --command "{command}" --test-time 60 -c 2 -t 1 --hide-histogram
"""


def test_a_definition_whose_replies_are_errors_fails_naming_the_error(
        corpus: Path, tmp_path: Path) -> None:
    """Every LPUSH is refused (wrong arity), every INCR of a string fails: each test fails
    naming the share, the command and the first error reply; a test too short for memtier's
    rotation to reach its SET fails saying so (it once blamed error replies there were not);
    a test that fits runs beside them, and the one that does not fit is listed as not run."""
    defs = tmp_path / "defs"
    reason, _ = _too_big(corpus, defs)
    for name, command in (("kvperf-lpush-arity", "LPUSH __key__"),
                          ("kvperf-incr-string", "INCR kvperf-string"),
                          ("kvperf-get", "GET __key__")):
        (defs / f"{name}.yml").write_text(ERROR_DEFINITION.format(name=name, command=command))
    # memtier's rotation: 10^8 GETs on each connection before its first SET
    (defs / "kvperf-rotation.yml").write_text(ERROR_DEFINITION.format(
        name="kvperf-rotation", command='GET __key__" --command-ratio 100000000 '
        '--command "SET __key__ __data__'))
    (defs / "kvperf-incr-string.yml").write_text(
        (defs / "kvperf-incr-string.yml").read_text().replace(
            "    save: '\"\"'\n", "    save: '\"\"'\n  init_commands:\n"
            "    - SET kvperf-string not-a-number\n"))
    done = run_kvperf("run", "--definitions", "defs", "--override-test-time", "1", "--no-db",
                      "--topologies", "oss-standalone", cwd=tmp_path, timeout=300)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"not run {TOO_BIG} [oss-standalone]: {reason}" in " ".join(done.stderr.split())
    rows = {r["command"]: r for r in read_metrics(tmp_path / "results")}
    assert set(rows) == {"kvperf-lpush-arity", "kvperf-incr-string", "kvperf-get",
                         "kvperf-rotation"}
    rotation = rows["kvperf-rotation"]
    assert rotation["status"] == "failed", rotation
    assert rotation["error"].startswith(
        "the clients sent no SET while they ran and the server answered no error: memtier "
        "sends each --command its --command-ratio of times in a row on every connection, and "
        ), rotation["error"]
    assert "over 2 connections" in rotation["error"], rotation["error"]
    assert "did not finish one rotation of 100,000,001: give the test more time " \
        "(--override-test-time)" in rotation["error"], rotation["error"]
    assert rows["kvperf-get"]["status"] == "ok" and rows["kvperf-get"]["rps"] > 0
    lpush, incr = rows["kvperf-lpush-arity"], rows["kvperf-incr-string"]
    assert lpush["status"] == incr["status"] == "failed"
    assert "calls of the load answered an error (100%; most: LPUSH; INFO errorstats: ERR ×" \
        in lpush["error"], lpush["error"]
    assert "first error reply: \"ERR wrong number of arguments for 'lpush' command\"" \
        in lpush["error"], lpush["error"]
    assert "(100%; most: INCR; INFO errorstats: ERR ×" in incr["error"], incr["error"]
    assert "first error reply: 'ERR value is not an integer or out of range'" in incr["error"]
    assert "beyond 1% error replies the numbers time errors" in incr["error"]


# redisbench-admin's redis-benchmark-full-suite-1Mkeys-100B (its tests/test_data), trimmed to
# 2000 requests per test so the whole default suite runs in seconds.
FULL_SUITE_DEFINITION = """\
version: 0.4
name: "redis-benchmark-full-suite-1Mkeys-100B"
description: "Runs the default redis-benchmark test suite (trimmed: 2000 requests a test)"
dbconfig:
  - configuration-parameters:
    - save: '""'
redis-topologies:
  - oss-standalone
clientconfig:
  tool: redis-benchmark
  min-tool-version: "6.2.0"
  parameters:
    - clients: 5
    - requests: 2000
    - threads: 2
    - pipeline: 1
    - r: 1000000
kpis:
  - ge: { $.Tests.SET.rps: 1000 }
exporter:
  redistimeseries:
    timemetric: "$.StartTime"
    metrics:
      - "$.Tests.*.rps"
      - "$.Tests.*.p50_latency_ms"
"""


def test_the_redis_benchmark_default_suite_gives_a_result_per_test(tmp_path: Path) -> None:
    """A redis-benchmark client with no -t and no command runs the tool's whole default
    suite once, on one server: each of its tests is a result of its own (numbers, exporter
    paths, a table line), and the server executed every test's command."""
    require_binary("redis-benchmark")
    (tmp_path / "full-suite.yml").write_text(FULL_SUITE_DEFINITION)
    done = run_kvperf("run", "--definitions", "full-suite.yml", cwd=tmp_path, timeout=300,
                      env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (row,) = read_metrics(tmp_path / "results")
    assert f"· {row['definition']['tools'][0]}" in done.stdout  # the title names its tool
    assert row["definition"]["tools"][0].startswith("redis-benchmark")
    tests = row["definition"]["tests"]
    assert {"PING_INLINE", "SET", "GET", "LRANGE_600 (first 600 elements)",
            "MSET (10 keys)"} <= tests.keys() and len(tests) >= 20
    for test, numbers in tests.items():
        assert numbers["rps"] > 0 and numbers["p50_latency_ms"] > 0, test
        assert row["definition"]["metrics"][f"$.Tests.{_step(test)}.rps"] == numbers["rps"]
        assert f"[{test}]" in done.stdout
    assert min(t["rps"] for t in tests.values()) < row["rps"] < max(
        t["rps"] for t in tests.values())
    assert [k["passed"] for k in row["definition"]["kpis"]] == [True]
    mix = row["definition"]["command_mix"]
    assert mix["lrange"]["calls"] == 4 * 2000 and mix["ping"]["calls"] == 2 * 2000
    for name, share in mix.items():
        assert share["calls"] >= 2000 and share["executed"] == pytest.approx(
            share["expected"], abs=0.01), name


def _step(name: str) -> str:
    """A test name as the exporter writes it in a concrete path."""
    return name if name.replace("_", "").isalnum() else f'"{name}"'
