"""The dataset snapshot cache of `kvperf run --definitions` on real valkey-server with
kvload's memtier front end, tiny definitions written in the corpus format in a scratch dir:
a second test with the same preload starts from the first one's snapshot (log, row, no
preload stage, DBSIZE); a corrupt snapshot and one whose sampled key differs fall back to a
real preload and say so; `kvperf cache list|prune`; and, over a stratified preload (strings
embstr and raw, hashes, lists, sets, zsets in their small and large encodings, streams), a
loaded snapshot holds what the preload made: OBJECT ENCODING and DBSIZE read back by a
server the test starts itself from the cached RDB. Replicas of a snapshot start from its
RDB and resync partially (nothing copied), and no replica waits the diskless-sync delay."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from kvperf.server.resp import ConnectionLost, Endpoint, RespClient
from tests.helpers import read_metrics, require_binary, run_kvperf, run_main

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600),
              pytest.mark.usefixtures("no_strays")]

DEFINITION = """\
version: 0.4
name: {name}
tested-groups: [{group}]
redis-topologies: [{topologies}]
dbconfig:
  configuration-parameters:
    save: '""'
{settings}{check}  preload_tool:
    tool: memtier_benchmark
    arguments: {preload}
clientconfig:
  tool: memtier_benchmark
  arguments: {client} -c 1 -t 1 --test-time 60 --hide-histogram
"""
STRINGS = ("--ratio 1:0 --key-pattern P:P --key-minimum 1 --key-maximum 1000 -n allkeys "
           "--data-size 10 -c 1 -t 1 --hide-histogram")
GET = "--ratio 0:1 --key-pattern R:R --key-minimum 1 --key-maximum 1000"
MIXED = ('--command "SET s:__key__ v" --command "SET r:__key__ __data__" --data-size 100 '
         '--command "HSET h:__key__ f1 v1 f2 v2" --command "RPUSH l:__key__ a b c" '
         '--command "SADD si:__key__ 1 2 3" --command "SADD sl:__key__ a b c" '
         '--command "ZADD z:__key__ 1 a 2 b" --command "XADD x:__key__ * f v" '
         "--command-key-pattern S --key-minimum 1 --key-maximum 100 -n 800 -c 1 -t 1 "
         "--hide-histogram")
LARGE = ("    hash-max-listpack-entries: 1\n    list-max-listpack-size: 1\n"
         "    set-max-intset-entries: 1\n    set-max-listpack-entries: 1\n"
         "    zset-max-listpack-entries: 1\n")
SMALL_ENCODINGS = {("string", "embstr"), ("string", "raw"), ("hash", "listpack"),
                   ("list", "listpack"), ("set", "intset"), ("set", "listpack"),
                   ("zset", "listpack"), ("stream", "stream")}
LARGE_ENCODINGS = {("string", "embstr"), ("string", "raw"), ("hash", "hashtable"),
                   ("list", "quicklist"), ("set", "hashtable"), ("zset", "skiplist"),
                   ("stream", "stream")}


def _write(defs: Path, name: str, preload: str, client: str, check: int | None = None,
           settings: str = "", group: str = "string", topologies: str = "oss-standalone"
           ) -> None:
    defs.mkdir(exist_ok=True)
    (defs / f"{name}.yml").write_text(DEFINITION.format(
        name=name, group=group, topologies=topologies, settings=settings,
        preload=json.dumps(preload),
        client=client, check=f"  check: {{keyspacelen: {check}}}\n" if check else ""))


def _run(tmp: Path, results: str, *more: str) -> tuple[subprocess.CompletedProcess[str],
                                                        dict[str, dict[str, Any]]]:
    done = run_kvperf("run", "--definitions", "defs", "--override-test-time", "1",
                      "--results-dir", results, "--no-db", *more, cwd=tmp, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done, {r["command"]: r for r in read_metrics(tmp / results)}


def _log(tmp: Path, results: str) -> str:
    return next((tmp / results).glob("*/logs.txt")).read_text()


def _only(cache: Path, suffix: str) -> Path:
    found = list(cache.glob(f"*{suffix}"))
    assert len(found) == 1, found
    return found[0]


def test_a_repeated_preload_starts_from_its_snapshot_and_a_bad_one_falls_back(
        tmp_path: Path) -> None:
    cache = tmp_path / "snapshots"
    env_cache = ("--snapshot-cache", str(cache))
    _write(tmp_path / "defs", "snap-a", STRINGS, GET.replace("0:1", "1:1"), check=1000)
    _write(tmp_path / "defs", "snap-b", STRINGS, GET, check=1000)  # after a writer: loads
    _, rows = _run(tmp_path, "r1", *env_cache)
    assert not rows["snap-b"]["definition"]["server_reused"]
    assert ("snap-a on oss-standalone: server not kept for the next test: the dataset "
            "changed (") in _log(tmp_path, "r1")
    first, second = rows["snap-a"]["definition"]["preload"], rows["snap-b"]["definition"]["preload"]
    snapshot = first["snapshot"]
    assert first["source"] == "fresh" and first["saved"] == snapshot
    assert second == {"source": "snapshot", "seconds": second["seconds"],
                      "snapshot": snapshot}
    assert "preload" in rows["snap-a"]["stage_seconds"]
    assert "preload" not in rows["snap-b"]["stage_seconds"]  # skipped
    assert rows["snap-b"]["checks"]["keyspacelen"] == 1000 and rows["snap-b"]["status"] == "ok"
    log = _log(tmp_path, "r1")
    assert "snap-a on oss-standalone: preloaded in" in log
    assert f"saved as snapshot {snapshot}" in log
    assert f"snap-b on oss-standalone: snapshot {snapshot} loaded (1000 keys)" in log
    listed = run_main("cache", "list", *env_cache)
    assert listed.returncode == 0 and snapshot in listed.stdout and "1,000" in listed.stdout

    rdb = _only(cache, ".rdb")  # corrupt: cut short
    rdb.write_bytes(rdb.read_bytes()[:len(rdb.read_bytes()) // 2])
    done, rows = _run(tmp_path, "r2", "--tests-regexp", "snap-b", *env_cache)
    said = f"snapshot {snapshot} unusable: the server did not load it"
    assert said in done.stderr and said in _log(tmp_path, "r2")
    preload = rows["snap-b"]["definition"]["preload"]
    assert preload["source"] == "fresh" and said in preload["note"]
    assert preload["saved"] == snapshot and rows["snap-b"]["checks"]["keyspacelen"] == 1000

    sidecar = _only(cache, ".json")  # a sampled key that loads differently
    record = json.loads(sidecar.read_text())
    record["sample"][0]["encoding"] = "raw"
    sidecar.write_text(json.dumps(record))
    done, rows = _run(tmp_path, "r3", "--tests-regexp", "snap-a", *env_cache)
    assert f"snapshot {snapshot} unusable: key " in done.stderr
    assert "(type, OBJECT ENCODING, digest); preloading" in done.stderr
    assert rows["snap-a"]["definition"]["preload"]["source"] == "fresh"
    assert (cache / f"{snapshot}.unusable").is_file() and not list(cache.glob("*.rdb"))
    listed = run_main("cache", "list", *env_cache)
    assert f"unusable {snapshot}: key " in " ".join(listed.stdout.split())

    pruned = run_main("cache", "prune", "--max-size", "0", *env_cache)
    assert pruned.returncode == 0 and "0 snapshot(s)" in pruned.stdout


def test_prune_evicts_the_least_recently_used_and_no_snapshots_preloads(
        tmp_path: Path) -> None:
    cache = tmp_path / "snapshots"
    _write(tmp_path / "defs", "lru-1", STRINGS, GET)
    _write(tmp_path / "defs", "lru-2", STRINGS.replace("1000", "500"), GET)
    _, rows = _run(tmp_path, "r1", "--snapshot-cache", str(cache))
    ids = {n: rows[n]["definition"]["preload"]["saved"] for n in ("lru-1", "lru-2")}
    _, rows = _run(tmp_path, "r2", "--snapshot-cache", str(cache), "--tests-regexp", "lru-1")
    assert rows["lru-1"]["definition"]["preload"]["source"] == "snapshot"  # used last
    keep = (cache / f"{ids['lru-1']}.rdb").stat().st_size
    pruned = run_main("cache", "prune", "--max-size", str(keep), "--snapshot-cache",
                      str(cache))
    assert pruned.returncode == 0, pruned.stderr
    assert (cache / f"{ids['lru-1']}.rdb").is_file()
    assert not (cache / f"{ids['lru-2']}.rdb").exists()
    assert "removed 1 snapshot(s)" in pruned.stdout
    _, rows = _run(tmp_path, "r3", "--snapshot-cache", str(cache), "--tests-regexp", "lru-1",
                   "--no-snapshots")
    assert "lru-1 on oss-standalone: preloaded in " in _log(tmp_path, "r3")
    assert "s (snapshots off (--no-snapshots))" in _log(tmp_path, "r3")
    assert rows["lru-1"]["definition"]["preload"] == {
        "source": "fresh", "seconds": rows["lru-1"]["definition"]["preload"]["seconds"],
        "note": "snapshots off (--no-snapshots)"}


def test_replicas_of_a_snapshot_start_from_it_and_resync_partially(tmp_path: Path) -> None:
    """The first topology preloads with its replica attached (its primary has a replication
    backlog, so the snapshot's RDB carries a replication id); the second starts its primary
    and its replica from that snapshot: a partial resync, nothing copied. Neither waits
    Valkey's 5 s diskless-sync delay. A snapshot a standalone topology saved carries no
    replication id: its replicated topology's replica gets a full sync, and the log says
    why."""
    _write(tmp_path / "defs", "snap-r", STRINGS, GET, check=1000,
           topologies="oss-standalone-01-replicas, oss-standalone-01-replicas-rdb")
    _write(tmp_path / "defs", "snap-s", STRINGS.replace("1000", "500"), GET, check=500,
           topologies="oss-standalone, oss-standalone-01-replicas")  # saved standalone
    _, _ = _run(tmp_path, "r", "--snapshot-cache", str(tmp_path / "snapshots"))
    found = read_metrics(tmp_path / "r")
    rows = {r["config_set"]["topology"]: r for r in found if r["command"] == "snap-r"}
    plain = next(r for r in found if r["command"] == "snap-s" and "replicas" in
                 r["config_set"]["topology"])
    assert plain["definition"]["preload"]["source"] == "snapshot"
    assert plain["checks"]["replica_sync"] == "full" and plain["checks"]["keyspacelen"] == 500
    fresh, loaded = rows["oss-standalone-01-replicas"], rows["oss-standalone-01-replicas-rdb"]
    assert fresh["definition"]["preload"]["source"] == "fresh"
    assert fresh["checks"]["replica_sync"] == "full"
    assert loaded["definition"]["preload"]["source"] == "snapshot"
    assert loaded["checks"]["replica_sync"] == "partial"
    assert loaded["checks"]["replicas_in_sync"] == 1 and loaded["checks"]["keyspacelen"] == 1000
    assert all(r["stage_seconds"]["replicas"] < 5.0 for r in (fresh, loaded))
    snapshot = loaded["definition"]["preload"]["snapshot"]
    assert (f"snap-r on oss-standalone-01-replicas-rdb: 1 replica(s) in sync by a partial "
            f"sync from snapshot {snapshot}") in _log(tmp_path, "r")
    assert ("snap-s on oss-standalone-01-replicas: 1 replica(s) in sync by a full sync "
            "(snapshot ") in _log(tmp_path, "r")
    assert "carries no replication id)" in _log(tmp_path, "r")


def _encodings_loaded(rdb: Path, settings: str, tmp: Path) -> tuple[int, dict[str, str]]:
    """DBSIZE and each key's OBJECT ENCODING of a server the test starts on a copy of
    ``rdb`` with ``settings`` (by pid, stopped at the end)."""
    work = tmp / f"load-{rdb.stem}"
    work.mkdir()
    shutil.copyfile(rdb, work / "dump.rdb")
    args = [f"--{line.split(':')[0].strip()}={line.split(':')[1].strip()}"
            for line in settings.splitlines() if line.strip()]
    server, endpoint = _start(work, [a for arg in args for a in arg.split("=", 1)])
    try:
        with RespClient(endpoint) as client:
            keys = client.call("DBSIZE")
            names = client.call("KEYS", "*")
            assert isinstance(keys, int) and isinstance(names, list)
            found = {}
            for name in names:
                assert isinstance(name, bytes)
                encoding = client.call("OBJECT", "ENCODING", name)
                assert isinstance(encoding, bytes)
                found[name.decode()] = encoding.decode()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return keys, found


def _start(work: Path, args: list[str]) -> tuple[subprocess.Popen[bytes], Endpoint]:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    server = subprocess.Popen([require_binary("valkey-server"), "--port", str(port), "--save",
                               "", "--dir", str(work), *args], stdout=subprocess.DEVNULL)
    endpoint = Endpoint("127.0.0.1", port)
    for _ in range(200):
        with contextlib.suppress(OSError, ConnectionLost), RespClient(endpoint) as client:
            if client.call("PING") == b"PONG":
                return server, endpoint
        time.sleep(0.05)
    server.terminate()
    raise AssertionError(f"valkey-server on {port} did not answer PING")


def test_loaded_equals_preloaded_over_every_type_and_encoding(tmp_path: Path) -> None:
    """Item 2 of issue 39: per stratum (small and large encodings of every type) the test
    started from the snapshot passed the check of its sampled keys (type, encoding, value
    digest as after the real preload); the sample covers every (type, encoding); a server
    loading the cached RDB holds the preload's DBSIZE and, for every key, the encoding
    the snapshot's sample recorded for its kind."""
    cache = tmp_path / "snapshots"
    for name, settings in (("small", ""), ("large", LARGE)):
        for copy in (1, 2):
            _write(tmp_path / "defs", f"mixed-{name}-{copy}", MIXED, GET, settings=settings)
    _, rows = _run(tmp_path, "r1", "--snapshot-cache", str(cache), "--no-server-reuse")
    for name, settings, expected in (("small", "", SMALL_ENCODINGS),
                                     ("large", LARGE, LARGE_ENCODINGS)):
        fresh = rows[f"mixed-{name}-1"]["definition"]["preload"]
        loaded = rows[f"mixed-{name}-2"]["definition"]["preload"]
        assert fresh["source"] == "fresh" and loaded["source"] == "snapshot", (fresh, loaded)
        record = json.loads((cache / f"{fresh['saved']}.json").read_text())
        sampled = {(s["type"], s["encoding"]) for s in record["sample"]}
        assert sampled == expected
        keys, encodings = _encodings_loaded(cache / f"{fresh['saved']}.rdb", settings,
                                            tmp_path)
        assert keys == record["dbsize"] == rows[f"mixed-{name}-2"]["checks"]["keyspacelen"]
        for sample in record["sample"]:
            assert encodings[sample["key"]] == sample["encoding"], sample


def _pids(log: str, test: str) -> str:
    return next(line.split("server pids ")[1].split(" at ")[0] for line in log.splitlines()
                if f"{test} on oss-standalone: server pids " in line)


def test_a_server_whose_data_a_test_left_unchanged_runs_the_next_test_of_its_dataset(
        tmp_path: Path) -> None:
    """Two read-only tests of one preload and one server spec: the second runs on the
    server the first left (no start, no load: the same pid; its data checked as a loaded
    snapshot's), its figures its own. A third of the same preload on another server
    configuration never shares a server with them (whichever runs first)."""
    _write(tmp_path / "defs", "keep-a", STRINGS, GET, check=1000)
    _write(tmp_path / "defs", "keep-b", STRINGS, GET, check=1000)
    _write(tmp_path / "defs", "keep-c", STRINGS, GET, check=1000,
           settings="    latency-tracking: 'no'\n")
    _, rows = _run(tmp_path, "r", "--snapshot-cache", str(tmp_path / "snapshots"))
    first, second, other = rows["keep-a"], rows["keep-b"], rows["keep-c"]
    log = _log(tmp_path, "r")
    assert "keep-b on oss-standalone: server reused from keep-a on oss-standalone " \
           "(dataset unchanged)" in log
    assert _pids(log, "keep-b") == _pids(log, "keep-a") != _pids(log, "keep-c")
    assert second["definition"]["server_reused"] is True
    assert second["definition"]["preload"] == {
        "source": "reused", "seconds": second["definition"]["preload"]["seconds"],
        "snapshot": first["definition"]["preload"]["snapshot"],
        "reused_from": "keep-a on oss-standalone"}
    assert "server_start" not in second["stage_seconds"]
    assert "preload" not in second["stage_seconds"]
    assert second["status"] == "ok" and second["rps"] > 0
    assert second["checks"]["keyspacelen"] == 1000
    calls = second["server"]["calls"]  # its own GETs only: the counters were reset
    assert 0 < calls <= second["rps"] * second["stage_seconds"]["measure"] * 1.2, calls
    assert not first["definition"]["server_reused"]
    assert not other["definition"]["server_reused"]
    assert other["definition"]["preload"]["source"] in ("fresh", "snapshot")
    assert "stopped, not reused (another dataset or server spec)" in log
