"""`kvperf run --trace` (issue 27): a trace recorded through `kvload record` from a known
kvload workload, replayed by kvperf on fresh servers as one more kind of work of the run
engine; its rows are stored like every trial's (one series per trace digest). A bad trace
exits 2 naming the byte offset, before any server starts. `record --replies` gives every
command its reply's size and latency (RESP2 pipelines, RESP3, pushes skipped, none after
SUBSCRIBE); seeding, `trace stats` and its emitted workloads, and `anonymize --keep-slots`
work on real recordings."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kvperf.core.installed import find_program
from kvperf.core.keyslot import key_slot
from kvperf.driver import trace_format
from tests.helpers import (
    free_port,
    read_metrics,
    recording_proxy,
    require_binary,
    run_kvperf,
    wait_listening,
)

pytestmark = [pytest.mark.integration]


def _record(kvload: Path, trace: Path) -> dict[str, int]:
    """A 1 s kvload workload (SET+GET pipelined, 500 requests/s) through the recording
    proxy; the recorded server's SET/GET calls."""
    with recording_proxy(kvload, trace) as proxy_port:
        subprocess.run([str(kvload), "-p", str(proxy_port), "-c", "2", "--rps", "500",
                        "--duration", "1", "-r", "300", "-q",
                        "SET k:__rand_int__ __data__ ; GET k:__rand_int__"],
                       check=True, stdout=subprocess.DEVNULL)
    info = subprocess.run([str(kvload), "trace-info", str(trace)], check=True,
                          capture_output=True, text=True)
    return dict(json.loads(info.stdout)["command_counts"])


Recorded = tuple[Path, dict[str, int]]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """One recording of the known workload (`_record`), shared by this file's tests: each
    copies the trace into its own directory."""
    kvload = find_program("kvload")
    assert kvload is not None, "kvload is installed with kvperf"
    trace = tmp_path_factory.mktemp("recorded") / "app.kvt"
    return trace, _record(kvload, trace)


def _copy(recorded: Recorded, to: Path) -> tuple[Path, dict[str, int]]:
    shutil.copyfile(recorded[0], to)
    return to, dict(recorded[1])


@pytest.mark.usefixtures("no_strays")
def test_run_trace_replays_a_recorded_workload_as_trials(tmp_path: Path,
                                                         recorded: Recorded) -> None:
    server_bin = require_binary("valkey-server")
    trace, counts = _copy(recorded, tmp_path / "app.kvt")
    assert counts["SET"] >= 200 and counts["SET"] == counts["GET"], counts
    done = run_kvperf("run", "--trace", trace, "--runs", "2", "--server-bin", server_bin,
                      "--label", "traced", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_metrics(tmp_path / "results")
    assert len(rows) == 2, rows
    digest = hashlib.sha256(trace.read_bytes()).hexdigest()
    for number, row in enumerate(rows, 1):
        assert row["status"] == "ok" and row["rps"] > 0, row
        assert row["command"] == "REPLAY app.kvt" and row["run"] == number
        assert row["config_set"]["trace_sha256"] == digest, row["config_set"]
        assert row["config_set"]["speed"] == "1"
        commands = row["server"]["commands"]
        assert commands["set"]["calls"] == counts["SET"], commands
        assert commands["get"]["calls"] == counts["GET"], commands
        assert row["client"]["mode"] == "open" and row["client"]["errors"]["err"] == 0
    assert rows[0]["trial_id"] == rows[1]["trial_id"], "one series: the trace's digest"
    assert "REPLAY app.kvt" in done.stdout


@pytest.mark.usefixtures("no_strays")
def test_run_trace_rejects_a_truncated_trace_with_its_byte_offset(
        tmp_path: Path, recorded: Recorded) -> None:
    trace, _ = _copy(recorded, tmp_path / "cut.kvt")
    data = trace.read_bytes()
    trace.write_bytes(data[:-3])
    done = run_kvperf("run", "--trace", trace, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "at byte " in done.stderr and "truncated record" in done.stderr, done.stderr
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").rglob(
        "metrics.json")), "nothing ran"
    pubsub = tmp_path / "pubsub.txt"  # replies of a subscribed connection match no command
    pubsub.write_text('1700000000.1 [0 a:1] "GET" "k"\n1700000000.2 [0 b:2] "SUBSCRIBE" "c"\n')
    done = run_kvperf("run", "--trace", pubsub, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "SUBSCRIBE on connection 1" in done.stderr, done.stderr


def _check_keep_slots(kvload: Path, trace: Path, anon: Path, cwd: Path) -> None:
    """--keep-slots: the stand-ins of a recorded trace's keys land in the same cluster slots
    (the anonymized trace's slot histogram is the original's), with the same lengths; kvload
    reads the header's flags."""
    done = run_kvperf("trace", "anonymize", trace, anon, "--keep-slots", cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cluster slot kept" in done.stdout
    original, masked = trace_format.read(trace), trace_format.read(anon)
    keys = [r.args[i] for r in original.records for i in trace_format.key_positions(r)]
    standins = [r.args[i] for r in masked.records for i in trace_format.key_positions(r)]
    assert len(keys) >= 400 and all(k != s for k, s in zip(keys, standins, strict=True))
    assert Counter(map(key_slot, standins)) == Counter(map(key_slot, keys))
    assert sorted(map(len, standins)) == sorted(map(len, keys))
    info = json.loads(subprocess.run([str(kvload), "trace-info", str(anon)], check=True,
                                     capture_output=True, text=True).stdout)
    assert info["anonymized"] and info["keep_slots"]


def _replay_dbsize(kvload: Path, server_bin: str, trace: Path) -> int:
    """Keys on a fresh server after replaying ``trace`` (closed loop)."""
    port = free_port()
    server = subprocess.Popen([server_bin, "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port)
        subprocess.run([str(kvload), "replay", str(trace), "-p", str(port), "--speed", "max",
                        "-q"], check=True, stdout=subprocess.DEVNULL)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"DBSIZE\r\n")
            reply = s.recv(64)
        assert reply.startswith(b":"), reply
        return int(reply[1:].strip())
    finally:
        server.kill()
        server.wait()


@pytest.mark.usefixtures("no_strays")
def test_trace_stats_and_anonymize(tmp_path: Path, recorded: Recorded) -> None:
    kvload = find_program("kvload")
    assert kvload is not None
    server_bin = require_binary("valkey-server")
    (trace, counts), anon = _copy(recorded, tmp_path / "app.kvt"), tmp_path / "anon.kvt"
    done = run_kvperf("trace", "stats", trace, "--json", tmp_path / "s.json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads((tmp_path / "s.json").read_text())
    info = json.loads(subprocess.run([str(kvload), "trace-info", str(trace)], check=True,
                                     capture_output=True, text=True).stdout)
    assert found["mix"] == counts and found["commands"] == info["commands"]
    assert found["per_second"] == info["per_second"]
    assert found["connections"] == info["connections"] and not found["anonymized"]
    assert 0 < found["keys"] <= 300 and found["zipf_s"] is not None
    assert found["value_sizes"] == {"≤4": counts["SET"]}  # kvload's 3-byte __data__
    assert "Command mix" in done.stdout and "Zipf exponent" in done.stdout

    done = run_kvperf("trace", "anonymize", trace, anon, "--salt", "s3cret", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    done = run_kvperf("trace", "stats", anon, "--json", tmp_path / "a.json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    masked = json.loads((tmp_path / "a.json").read_text())
    assert masked["anonymized"] and "(anonymized)" in done.stdout
    for same in ("mix", "commands", "per_second", "connections", "keys", "zipf_s",
                 "value_sizes"):
        assert masked[same] == found[same], same
    originals = [k for k, _ in found["top_keys"]]
    assert not set(originals) & {k for k, _ in masked["top_keys"]}, "keys replaced"
    assert sorted(len(k) for k in originals) == sorted(len(k) for k, _ in masked["top_keys"])
    assert all(k.startswith("k:") for k, _ in masked["top_keys"]), "prefix kept"
    # The anonymized trace replays into the same number of keys.
    assert _replay_dbsize(kvload, server_bin, anon) == _replay_dbsize(kvload, server_bin, trace)
    _check_keep_slots(kvload, trace, tmp_path / "slots.kvt", tmp_path)
    bad = tmp_path / "bad.kvt"
    bad.write_bytes(trace.read_bytes()[:40])
    done = run_kvperf("trace", "stats", bad, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert re.search(r"at byte \d+: truncated record", done.stderr), done.stderr


@pytest.mark.usefixtures("no_strays")
def test_compare_trace_gives_verdicts_on_the_replayed_workload(tmp_path: Path,
                                                               recorded: Recorded) -> None:
    server_bin = require_binary("valkey-server")
    trace, counts = _copy(recorded, tmp_path / "app.kvt")
    done = run_kvperf("compare", "--trace", trace, "--server-bin", server_bin, "--server-bin",
                      server_bin, "--runs", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_metrics(tmp_path / "results")  # results/trace-compare/metrics.json
    assert sorted((r["label"], r["run"]) for r in rows) == [
        ("trace-A", 1), ("trace-A", 2), ("trace-B", 1), ("trace-B", 2)]
    for row in rows:
        assert row["status"] == "ok", row
        assert row["server"]["commands"]["set"]["calls"] == counts["SET"]
    assert len({r["trial_id"] for r in rows}) == 1, "one series on both sides"
    assert "REPLAY app.kvt" in done.stdout and "rps" in done.stdout  # the verdict table
    one = run_kvperf("compare", "--trace", trace, "--server-bin", server_bin, cwd=tmp_path)
    assert one.returncode == 2 and "two --server-bin" in one.stderr, one.stderr


@pytest.mark.usefixtures("no_strays")
def test_run_trace_replays_a_monitor_capture_seeded(tmp_path: Path) -> None:
    """A MONITOR capture (memtier's --monitor-input format) is a trace too; with
    --seed-from-trace the keys it reads before writing exist, so no GET misses."""
    capture = tmp_path / "monitor.txt"
    lines = ["OK"]
    for i in range(200):
        t = 1_700_000_000 + i / 400
        lines.append(f'{t:.6f} [0 127.0.0.1:{5000 + i % 3}] "GET" "user:{i % 50}"')
        lines.append(f'{t + 0.0001:.6f} [0 127.0.0.1:{5000 + i % 3}] "SET" "new:{i}" "v\\x41lue"')
    capture.write_text("\n".join(lines) + "\n")
    done = run_kvperf("run", "--trace", capture, "--seed-from-trace", "--speed", "2",
                      "--server-bin", require_binary("valkey-server"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok" and row["clients"] == 3 and row["requests"] == 400, row
    commands = row["server"]["commands"]
    assert commands["get"]["calls"] == 200
    assert commands["set"]["calls"] == 200 + 50, "50 keys seeded, then the 200 SETs"
    assert row["checks"]["dbsize"] == 250 and row["config_set"]["seed_from_trace"] == "yes"


def _start(server_bin: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    server = subprocess.Popen([server_bin, "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port)
    return server, port


def _call(port: int, *args: str) -> bytes:
    """One command's whole reply (RESP2), read until the server has sent it."""
    body = b"".join(b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"*%d\r\n" % len(args) + body)
        time.sleep(0.05)
        reply = s.recv(1 << 20)
    return reply


def _commandstats(port: int) -> dict[str, int]:
    text = _call(port, "INFO", "commandstats").decode()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"cmdstat_([a-z|]+):calls=(\d+)",
                                                               text)}


def _record_replies(kvload: Path, upstream: int, trace: Path) -> None:
    """Through `kvload record --replies`: a pipelined RESP2 SET/GET workload (100-byte
    values, 8 commands per write) and a RESP3 connection reading 50 keys that were on the
    server before the recording (700-byte values, never written in the trace)."""
    with _replies_proxy(kvload, upstream, trace) as proxy_port:
        subprocess.run([str(kvload), "-p", str(proxy_port), "-c", "2", "-P", "4", "--rps",
                        "2000", "--duration", "1", "-r", "200", "-d", "100", "-q",
                        "SET k:__rand_int__ __data__ ; GET k:__rand_int__"],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([str(kvload), "-p", str(proxy_port), "-3", "-c", "1", "-n", "50",
                        "-r", "50", "--sequential", "-q", "GET pre:__rand_int__"],
                       check=True, stdout=subprocess.DEVNULL)


@contextlib.contextmanager
def _replies_proxy(kvload: Path, upstream: int, trace: Path) -> Iterator[int]:
    """`kvload record --replies` in front of ``upstream`` for the body (its port), then
    stopped with SIGINT (exit 0: the trace written whole); killed by pid on any failure."""
    proxy_port = free_port()
    proxy = subprocess.Popen([str(kvload), "record", "--listen", f"127.0.0.1:{proxy_port}",
                              "--upstream", f"127.0.0.1:{upstream}", "--out", str(trace),
                              "--replies"], stderr=subprocess.PIPE, text=True)
    try:
        wait_listening(proxy_port)
        yield proxy_port
        proxy.send_signal(signal.SIGINT)
        assert proxy.wait(timeout=10) == 0, proxy.stderr.read() if proxy.stderr else ""
    finally:
        if proxy.poll() is None:
            proxy.kill()
            proxy.wait()


@pytest.mark.usefixtures("no_strays")
def test_replies_of_a_client_that_hung_up_are_still_recorded(tmp_path: Path) -> None:
    """A client that goes away with commands in flight (an open loop's end, a killed client):
    the server still runs them and replies, and `record --replies` matches those replies
    although it can no longer forward them (it used to stop reading that connection at the
    failed write: CI once saw 2,053 replies for 2,054 commands after a --rps run)."""
    kvload = find_program("kvload")
    assert kvload is not None
    server, port = _start(require_binary("valkey-server"))
    trace = tmp_path / "gone.kvt"
    busy = "local i = 0 while i < 100000000 do i = i + 1 end return i"  # keeps the server busy
    try:
        with _replies_proxy(kvload, port, trace) as proxy_port:
            client = socket.create_connection(("127.0.0.1", proxy_port))
            client.sendall(b"EVAL \"%s\" 0\r\nSET gone 1\r\n" % busy.encode())
            time.sleep(0.1)  # forwarded; the server is in the script (~0.7 s here)
            # closed with a reset: the proxy's next write to it fails at once
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
            assert _call(port, "GET", "gone") == b"$1\r\n1\r\n"  # after the script
            time.sleep(0.2)  # the replies reached the proxy
        info = json.loads(subprocess.run([str(kvload), "trace-info", str(trace)], check=True,
                                         capture_output=True, text=True).stdout)
        assert info["command_counts"] == {"EVAL": 1, "SET": 1}, info
        assert (info["recorded_replies"] or {}).get("count") == 2, info["recorded_replies"]
    finally:
        server.kill()
        server.wait()


def _push_and_pubsub_replies(kvload: Path, upstream: int, trace: Path) -> list[list[object]]:
    """Through `record --replies`: a RESP3 client-tracking connection that gets an
    invalidation push between two GETs, a writer, and a subscriber; each connection's
    recorded (command, reply size) in order."""
    with _replies_proxy(kvload, upstream, trace) as proxy_port:
        step = 0.2
        with socket.create_connection(("127.0.0.1", proxy_port)) as tracked, \
                socket.create_connection(("127.0.0.1", proxy_port)) as writer, \
                socket.create_connection(("127.0.0.1", proxy_port)) as subscriber:
            time.sleep(step)  # accepted (numbered) in this order
            tracked.sendall(b"HELLO 3\r\nCLIENT TRACKING ON\r\nGET t:1\r\n")
            time.sleep(step)
            writer.sendall(b"SET t:1 abc\r\n")  # an invalidation push to `tracked`
            time.sleep(step)
            tracked.sendall(b"GET t:1\r\n")
            subscriber.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\nPING\r\n")
            time.sleep(step)
            writer.sendall(b"PUBLISH ch hi\r\n")
            time.sleep(step)
    found = trace_format.read(trace)
    assert found.has_replies
    ids = sorted({r.conn for r in found.records})  # (_wait_port's probe took an id)
    conns: list[list[object]] = [[] for _ in ids]
    for r in found.records:
        conns[ids.index(r.conn)].append([r.args[0].decode(),
                                         None if r.reply is None else r.reply[0]])
    return conns


def _run_emitted(kvload: Path, argv: list[str], port: int) -> None:
    """An emitted workload for 1 s against ``port`` (its port and duration replaced)."""
    assert argv[0] == "kvload", argv
    at = 2 if argv[1] == "memtier" else 1
    argv = [str(kvload), *argv[1:at], "-p", str(port), *argv[at:]]
    for flag in ("--duration", "--test-time"):
        if flag in argv:
            argv[argv.index(flag) + 1] = "1"
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=60)


def _check_replay_auth(kvload: Path, trace: Path, port: int) -> None:
    """On a server with a password, every replay connection AUTHs first ($KVLOAD_AUTH):
    no error replies; a wrong password fails before the replay, naming AUTH."""
    assert _call(port, "CONFIG", "SET", "requirepass", "s3cret") == b"+OK\r\n"
    report = trace.with_suffix(".json")
    replay = [str(kvload), "replay", str(trace), "-p", str(port), "--speed", "max", "-q",
              "--json", str(report)]
    subprocess.run(replay, check=True, stdout=subprocess.DEVNULL, timeout=60,
                   env={**os.environ, "KVLOAD_AUTH": "s3cret"})
    (test,) = json.loads(report.read_text())["tests"]
    assert test["errors"]["err"] == 0, test["errors"]
    wrong = subprocess.run([*replay, "-a", "nope"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 1 and "AUTH failed" in wrong.stderr, wrong.stderr


@pytest.mark.usefixtures("no_strays")
def test_recorded_replies_stats_seeding_and_emitted_workloads(tmp_path: Path) -> None:
    """`record --replies` on RESP2 pipelines and a RESP3 connection: every command gets its
    reply's size and latency; trace-info and `kvperf trace stats` show them; seeding takes
    the value size of keys only ever read from their recorded GET replies; the workloads
    `trace stats --emit-workload` prints reproduce the trace's command mix on a real server."""
    kvload = find_program("kvload")
    assert kvload is not None
    server_bin = require_binary("valkey-server")
    trace = tmp_path / "replies.kvt"
    (upstream, up_port), (target, port) = _start(server_bin), _start(server_bin)
    try:
        for i in range(50):
            assert _call(up_port, "SET", f"pre:{i:012d}", "p" * 700) == b"+OK\r\n"
        _record_replies(kvload, up_port, trace)
        replies = _check_trace_info_replies(kvload, trace)
        found = _check_trace_stats_replies(trace, tmp_path, replies)

        # Seeding: pre:* are only read, so their size comes from the recorded replies.
        subprocess.run([str(kvload), "replay", str(trace), "-p", str(port), "--speed", "max",
                        "--seed-from-trace", "-q"], check=True, stdout=subprocess.DEVNULL)
        assert _call(port, "STRLEN", "pre:000000000007") == b":700\r\n"

        _check_emitted_workloads(kvload, trace, port, tmp_path, found)
        _check_push_and_pubsub(kvload, up_port, tmp_path / "push.kvt")
        _check_replay_auth(kvload, trace, port)
    finally:
        for server in (upstream, target):
            server.kill()
            server.wait()
    _check_monitor_capture_has_no_replies(kvload, tmp_path)


def _check_trace_info_replies(kvload: Path, trace: Path) -> dict[str, Any]:
    """kvload trace-info of the replies trace: every command's reply matched, with sizes
    and latencies; its ``recorded_replies``."""
    info = json.loads(subprocess.run([str(kvload), "trace-info", str(trace)], check=True,
                                     capture_output=True, text=True).stdout)
    counts = info["command_counts"]
    replies: dict[str, Any] = info["recorded_replies"]
    assert info["replies"] and not info["monitor"]
    assert replies["count"] == info["commands"], "every command's reply was matched"
    sizes = replies["size_histogram"]
    assert sizes["≤1024"] == 50, "the 50 GETs of 700-byte values ($700 CRLF … CRLF)"
    assert sizes["≤128"] <= counts["GET"] - 50 and sizes["≤8"] >= counts["SET"], sizes
    assert 0 < replies["latency_p50_us"] <= replies["latency_p99_us"]
    return replies


def _check_trace_stats_replies(trace: Path, tmp_path: Path,
                               replies: dict[str, Any]) -> dict[str, Any]:
    """`kvperf trace stats --json` shows the replies trace-info found; its document."""
    sizes = replies["size_histogram"]
    done = run_kvperf("trace", "stats", trace, "--json", tmp_path / "s.json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    found: dict[str, Any] = json.loads((tmp_path / "s.json").read_text())
    assert found["replies"]["size_histogram"] == sizes
    assert found["replies"]["latency_p50_us"] == replies["latency_p50_us"]
    assert found["replies"]["latency_p99_us"] == replies["latency_p99_us"]
    assert "latency at the proxy p50" in done.stdout and "Reply sizes" in done.stdout
    assert 4 < found["pipeline_depth"] <= 8, found["pipeline_depth"]  # + 51 single reads
    return found


def _check_emitted_workloads(kvload: Path, trace: Path, port: int, tmp_path: Path,
                             found: dict[str, Any]) -> None:
    """Each workload `trace stats --emit-workload` prints reproduces the trace's command mix
    (``found``: trace stats' document) on the server at ``port``."""
    mix = {name.lower(): n / found["commands"] for name, n in found["mix"].items()}
    for tool in ("kvload", "memtier"):
        done = run_kvperf("trace", "stats", trace, "--emit-workload", tool, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        argv = shlex.split(done.stdout.strip())
        assert _call(port, "FLUSHALL") == b"+OK\r\n"
        assert _call(port, "CONFIG", "RESETSTAT") == b"+OK\r\n"
        _run_emitted(kvload, argv, port)
        calls = _commandstats(port)
        ran = sum(calls.get(name, 0) for name in mix)
        assert ran > 100, (tool, calls)
        for name, share in mix.items():
            assert abs(calls.get(name, 0) / ran - share) <= 0.05, (tool, name, calls, mix)


def _check_push_and_pubsub(kvload: Path, up_port: int, trace: Path) -> None:
    conns = _push_and_pubsub_replies(kvload, up_port, trace)
    hello = conns[0][0]
    assert hello[0] == "HELLO" and isinstance(hello[1], int) and hello[1] > 50, hello
    # `_` CRLF (a RESP3 null), then `$3` CRLF abc CRLF: the push between them is skipped.
    assert conns[0][1:] == [["CLIENT", 5], ["GET", 3], ["GET", 9]], conns[0]
    assert conns[1] == [["SET", 5], ["PUBLISH", 4]], conns[1]
    assert conns[2] == [["SUBSCRIBE", None], ["PING", None]], "no matching from SUBSCRIBE on"


def _check_monitor_capture_has_no_replies(kvload: Path, tmp_path: Path) -> None:
    monitor = tmp_path / "monitor.txt"
    monitor.write_text('1700000000.1 [0 a:1] "GET" "k"\n')
    info = json.loads(subprocess.run([str(kvload), "trace-info", str(monitor)], check=True,
                                     capture_output=True, text=True).stdout)
    assert info["monitor"] and not info["replies"] and info["recorded_replies"] is None

