"""A gapped trace end to end (issue 41): `kvload record --queue-bytes` in front of a real
valkey-server with its trace writer held back — the trace is a FIFO this test reads only
once the client is done, a disk that fell behind — while one client pipelines more than the
queue holds. The recording drops what does not fit, counts it and marks it with gap
records; `kvperf trace stats` says how many commands were lost and counts the rest; `kvperf
run --trace` and `kvperf compare --trace` replay the rest and say the trace is incomplete.
What the server ran is what the trace kept plus what its gaps count."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from kvperf.core.installed import find_program
from tests.helpers import (
    free_port,
    plain_valkey,
    read_metrics,
    require_binary,
    run_kvperf,
    run_main,
    wait_listening,
)

pytestmark = [pytest.mark.integration]

SETS, VALUE = 4000, 1000  # 4 MB pipelined in one write
QUEUE = 1 << 20  # --queue-bytes: a quarter of it


def _pipeline(port: int) -> None:
    """SETS SETs of VALUE bytes in one write to the proxy; returns once every +OK is read."""
    value = b"v" * VALUE
    body = b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\nk:%d\r\n$%d\r\n%s\r\n"
                    % (len(b"k:%d" % i), i, VALUE, value) for i in range(SETS))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(body)
        got = b""
        while got.count(b"+OK\r\n") < SETS:
            chunk = s.recv(1 << 16)
            assert chunk, f"the proxy closed after {got.count(b'+OK')} replies"
            got += chunk


def _set_calls(port: int) -> int:
    """The server's SET calls (INFO commandstats, its bulk reply read whole)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"INFO commandstats\r\n")
        data = b""
        while b"\r\n" not in data:
            data += s.recv(1 << 16)
        head, _, text = data.partition(b"\r\n")
        while len(text) < int(head[1:]) + 2:
            text += s.recv(1 << 16)
    found = re.search(rb"cmdstat_set:calls=(\d+),", text)
    assert found is not None, text
    return int(found.group(1))


def _record_behind(kvload: Path, upstream: int, fifo: Path, trace: Path) -> str:
    """The pipeline through `kvload record --queue-bytes QUEUE` writing to ``fifo``, read
    into ``trace`` only after the client is done; kvload record's stderr."""
    done = threading.Event()

    def drain() -> None:  # kvload's open of the FIFO waits for this reader
        with fifo.open("rb") as f:
            done.wait(30)
            trace.write_bytes(f.read())

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    proxy_port = free_port()
    proxy = subprocess.Popen([str(kvload), "record", "--listen", f"127.0.0.1:{proxy_port}",
                              "--upstream", f"127.0.0.1:{upstream}", "--out", str(fifo),
                              "--queue-bytes", str(QUEUE)],
                             stderr=subprocess.PIPE, text=True)
    try:
        wait_listening(proxy_port)
        _pipeline(proxy_port)
        done.set()
        proxy.send_signal(signal.SIGINT)
        _, stderr = proxy.communicate(timeout=30)
        assert proxy.returncode == 0, stderr
    finally:
        done.set()
        if proxy.poll() is None:
            proxy.kill()
            proxy.wait()
    reader.join(30)
    assert not reader.is_alive(), "the trace was read to its end"
    return stderr


@pytest.mark.usefixtures("no_strays")
def test_a_gapped_recording_is_counted_by_trace_stats_and_replayed(tmp_path: Path) -> None:
    kvload = find_program("kvload")
    assert kvload is not None, "kvload is installed with kvperf"
    fifo, trace = tmp_path / "t.fifo", tmp_path / "gapped.kvt"
    os.mkfifo(fifo)
    with plain_valkey() as (_, port):
        stderr = _record_behind(kvload, port, fifo, trace)
        ran = _set_calls(port)
    assert ran == SETS, "the proxy forwarded every command"
    said = re.search(r"the trace is incomplete: (\d+) commands", stderr)
    assert said is not None, stderr

    done = run_main("trace", "stats", trace, "--json", tmp_path / "s.json")
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads((tmp_path / "s.json").read_text())
    kept, dropped = found["mix"].get("SET", 0), found["dropped"]
    assert dropped > 0 and kept > 0, found
    assert dropped == int(said.group(1)) and found["dropped_connections"] == 1
    assert found["commands"] == kept and kept + dropped == ran, (kept, dropped, ran)
    assert f"incomplete: {dropped} commands of 1 connections were dropped" in done.stdout

    replayed = run_kvperf("run", "--trace", trace, "--speed", "max", "--runs", "1",
                          "--server-bin", require_binary("valkey-server"), cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert f"incomplete: {dropped} commands were dropped" in replayed.stderr, replayed.stderr
    (row,) = read_metrics(tmp_path / "results")
    assert row["status"] == "ok" and row["requests"] == kept, row
    assert row["server"]["commands"]["set"]["calls"] == kept, row["server"]

    server_bin = require_binary("valkey-server")
    (tmp_path / "compare").mkdir()
    compared = run_kvperf("compare", "--trace", trace, "--server-bin", server_bin,
                          "--server-bin", server_bin, "--speed", "max", "--runs", "2",
                          cwd=tmp_path / "compare")
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert f"incomplete: {dropped} commands were dropped" in compared.stderr, compared.stderr
    sides = read_metrics(tmp_path / "compare" / "results")
    assert sorted(r["label"] for r in sides) == ["trace-A"] * 2 + ["trace-B"] * 2, sides
    assert all(r["requests"] == kept for r in sides), [r["requests"] for r in sides]
