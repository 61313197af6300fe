"""`kvperf run --trace` (issue 27): a trace recorded through `kvload record` from a known
kvload workload, replayed by kvperf on fresh servers as one more kind of work of the run
engine; its rows are stored like every trial's (one series per trace digest). A bad trace
exits 2 naming the byte offset, before any server starts."""

from __future__ import annotations

import hashlib
import json
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from kvperf.core.installed import find_program
from tests.helpers import read_metrics, require_binary, run_kvperf

pytestmark = [pytest.mark.integration]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on {port}"
            time.sleep(0.05)


def _record(kvload: Path, server_bin: str, trace: Path) -> dict[str, int]:
    """A 1 s kvload workload (SET+GET pipelined, 500 requests/s) through the recording
    proxy; the recorded server's SET/GET calls."""
    port, proxy_port = _port(), _port()
    server = subprocess.Popen([server_bin, "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = None
    try:
        _wait_port(port)
        proxy = subprocess.Popen([str(kvload), "record", "--listen", f"127.0.0.1:{proxy_port}",
                                  "--upstream", f"127.0.0.1:{port}", "--out", str(trace)],
                                 stderr=subprocess.PIPE, text=True)
        _wait_port(proxy_port)
        subprocess.run([str(kvload), "-p", str(proxy_port), "-c", "2", "--rps", "500",
                        "--duration", "1", "-r", "300", "-q",
                        "SET k:__rand_int__ __data__ ; GET k:__rand_int__"],
                       check=True, stdout=subprocess.DEVNULL)
        proxy.send_signal(signal.SIGINT)
        assert proxy.wait(timeout=10) == 0, proxy.stderr.read() if proxy.stderr else ""
        info = subprocess.run([str(kvload), "trace-info", str(trace)], check=True,
                              capture_output=True, text=True)
        return dict(json.loads(info.stdout)["command_counts"])
    finally:
        for child in (proxy, server):
            if child is not None and child.poll() is None:
                child.kill()
                child.wait()


@pytest.mark.usefixtures("no_strays")
def test_run_trace_replays_a_recorded_workload_as_trials(tmp_path: Path) -> None:
    kvload = find_program("kvload")
    assert kvload is not None, "kvload is installed with kvperf"
    server_bin = require_binary("valkey-server")
    trace = tmp_path / "app.kvt"
    counts = _record(kvload, server_bin, trace)
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
def test_run_trace_rejects_a_truncated_trace_with_its_byte_offset(tmp_path: Path) -> None:
    kvload = find_program("kvload")
    assert kvload is not None
    trace = tmp_path / "cut.kvt"
    _record(kvload, require_binary("valkey-server"), trace)
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


def _replay_dbsize(kvload: Path, server_bin: str, trace: Path) -> int:
    """Keys on a fresh server after replaying ``trace`` (closed loop)."""
    port = _port()
    server = subprocess.Popen([server_bin, "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_port(port)
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
def test_trace_stats_and_anonymize(tmp_path: Path) -> None:
    kvload = find_program("kvload")
    assert kvload is not None
    server_bin = require_binary("valkey-server")
    trace, anon = tmp_path / "app.kvt", tmp_path / "anon.kvt"
    counts = _record(kvload, server_bin, trace)
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
    bad = tmp_path / "bad.kvt"
    bad.write_bytes(trace.read_bytes()[:40])
    done = run_kvperf("trace", "stats", bad, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert re.search(r"at byte \d+: truncated record", done.stderr), done.stderr


@pytest.mark.usefixtures("no_strays")
def test_compare_trace_gives_verdicts_on_the_replayed_workload(tmp_path: Path) -> None:
    kvload = find_program("kvload")
    assert kvload is not None
    server_bin = require_binary("valkey-server")
    trace = tmp_path / "app.kvt"
    counts = _record(kvload, server_bin, trace)
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
