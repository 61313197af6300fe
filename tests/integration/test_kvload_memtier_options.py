"""``kvload memtier`` options whose effect a careless implementation would lose silently:
each test asserts a value that would differ if the option were ignored (or, for
``--pipeline``, implemented as batches). Real valkey-servers; where it is cheap the real
memtier_benchmark (the vendored oracle) runs the same arguments as a control, so the test
is known to tell memtier's behaviour from the wrong one.

``--pipeline N`` is memtier's sliding window: each connection keeps N requests in flight
and sends the next one as soon as any reply arrives. Batches of N (send N, wait for all N)
give the same throughput against a server that answers a batch at once, so the test puts a
proxy between the tool and the server that hands the replies over one at a time, ``DELAY``
apart, and records how many requests of the connection were unanswered each time the tool
sent one: N - 1 with a window, 0 at the start of every batch. Each request's latency is
measured from its own send: about N × DELAY with a window.
"""

from __future__ import annotations

import contextlib
import json
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kvperf.plan.trial import ServerSetup
from kvperf.server.binary import inspect
from kvperf.server.instance import ServerGroup
from kvperf.server.resp import Endpoint, RespClient
from kvperf.server.tls import TlsFiles, make_tls_files
from tests.helpers import require_binary
from tests.integration.test_memtier_conformance import child_servers

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

PIPELINE = 4
DELAY = 0.004  # seconds between two replies handed over by the proxy


@pytest.fixture(autouse=True)
def no_servers_left() -> Iterator[None]:
    """Servers this process started are all gone (``no_strays`` would also count the
    servers of other suites sharing the machine)."""
    yield
    assert not child_servers(), f"servers left running: {sorted(child_servers())}"


@contextlib.contextmanager
def server(tmp: Path, tls: TlsFiles | None = None) -> Iterator[Endpoint]:
    setup = ServerSetup(False, tls is not None, None, 1, None, (), (), ())
    binary = inspect(Path(require_binary("valkey-server")), "test")
    with ServerGroup(binary, setup, tmp / "server", tls) as group:
        yield group.endpoints[0]


def kvload() -> list[str]:
    return [require_binary("kvload"), "memtier"]


def run(program: list[str], endpoint: Endpoint | tuple[str, int], *args: str,
        out: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    host, port = (endpoint.host, endpoint.port) if isinstance(endpoint, Endpoint) else endpoint
    argv = [*program, "--server", host, "--port", str(port), "--hide-histogram", *args]
    if out:
        argv.append(f"--json-out-file={out}")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if check:
        assert done.returncode == 0, f"{' '.join(argv)}: {done.stderr[-1500:]}"
    return done


def run_json(program: list[str], endpoint: Endpoint | tuple[str, int], tmp: Path,
             *args: str) -> dict[str, Any]:
    out = tmp / f"out-{time.monotonic_ns()}.json"
    run(program, endpoint, *args, out=out)
    document: dict[str, Any] = json.loads(out.read_text())
    return document


def key_numbers(endpoint: Endpoint, prefix: bytes = b"memtier-") -> list[int]:
    with RespClient(endpoint) as client:
        keys = client.call("KEYS", b"*")
        client.call("FLUSHALL")
    assert isinstance(keys, list)
    return sorted(int(k[len(prefix):]) for k in keys
                  if isinstance(k, bytes) and k.startswith(prefix))


# ---------- --pipeline: a sliding window ----------

def _resp_end(buf: bytes, pos: int) -> int | None:
    """End of the one RESP2 value starting at ``pos`` in ``buf`` (None: incomplete)."""
    line_end = buf.find(b"\r\n", pos)
    if line_end < 0:
        return None
    kind, head = buf[pos:pos + 1], buf[pos + 1:line_end]
    if kind in (b"+", b"-", b":"):
        return line_end + 2
    if kind == b"$":
        size = int(head)
        end = line_end + 2 + max(size, 0) + (2 if size >= 0 else 0)
        return end if end <= len(buf) else None
    if kind == b"*":
        at: int | None = line_end + 2
        for _ in range(max(int(head), 0)):
            at = _resp_end(buf, at) if at is not None else None
        return at
    raise AssertionError(f"not RESP2: {buf[pos:pos + 40]!r}")


def _split(buf: bytearray) -> Iterator[bytes]:
    """Complete RESP values at the head of ``buf``, removed from it."""
    while buf:
        end = _resp_end(bytes(buf), 0)
        if end is None:
            return
        yield bytes(buf[:end])
        del buf[:end]


@dataclass
class ProxiedConnection:
    sent: int = 0
    answered: int = 0
    in_flight_at_send: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class OneReplyAtATimeProxy:
    """A loopback TCP proxy to ``upstream`` that hands each reply to the client on its own,
    ``DELAY`` after the previous one, and records, per connection, how many requests were
    unanswered whenever the client sent one."""

    def __init__(self, upstream: Endpoint) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()[:2]
        self.connections: list[ProxiedConnection] = []
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection((self.upstream.host, self.upstream.port))
            state = ProxiedConnection()
            self.connections.append(state)
            self._sockets += [client, upstream]
            for target in (self._requests, self._replies):
                threading.Thread(target=target, args=(client, upstream, state),
                                 daemon=True).start()

    @staticmethod
    def _requests(client: socket.socket, upstream: socket.socket,
                  state: ProxiedConnection) -> None:
        buf = bytearray()
        with contextlib.suppress(OSError):
            while chunk := client.recv(65536):
                buf += chunk
                for request in _split(buf):
                    with state.lock:
                        state.in_flight_at_send.append(state.sent - state.answered)
                        state.sent += 1
                    upstream.sendall(request)
        with contextlib.suppress(OSError):
            upstream.shutdown(socket.SHUT_WR)

    @staticmethod
    def _replies(client: socket.socket, upstream: socket.socket,
                 state: ProxiedConnection) -> None:
        buf = bytearray()
        with contextlib.suppress(OSError):
            while chunk := upstream.recv(65536):
                buf += chunk
                for reply in _split(buf):
                    time.sleep(DELAY)
                    with state.lock:  # counted before the client can see it
                        state.answered += 1
                    client.sendall(reply)
        with contextlib.suppress(OSError):
            client.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()


def _window_of(program: list[str], endpoint: Endpoint, tmp: Path) -> tuple[list[int], float]:
    """In-flight counts at each send after the first window (the benchmark's connection
    only, not a setup probe) and the tool's p50 latency in seconds."""
    proxy = OneReplyAtATimeProxy(endpoint)
    try:
        doc = run_json(program, proxy.address, tmp, "-c", "1", "-t", "1", "--ratio", "1:0",
                       "-n", "80", "--pipeline", str(PIPELINE))
    finally:
        proxy.close()
    (bench,) = [c for c in proxy.connections if c.sent >= 80]
    p50 = float(doc["ALL STATS"]["Totals"]["Percentile Latencies"]["p50.00"]) / 1000
    return bench.in_flight_at_send[PIPELINE:], p50


@pytest.mark.alone  # a latency bound
def test_pipeline_keeps_a_sliding_window_of_requests_in_flight(memtier_oracle: Path,
                                                               tmp_path: Path) -> None:
    with server(tmp_path) as endpoint:
        for name, program in (("memtier", [str(memtier_oracle)]), ("kvload", kvload())):
            in_flight, p50 = _window_of(program, endpoint, tmp_path)
            assert max(in_flight) <= PIPELINE - 1, f"{name}: more than {PIPELINE} in flight"
            refills_at_empty = sum(1 for n in in_flight if n == 0) / len(in_flight)
            assert refills_at_empty < 0.05, (
                f"{name} waited for every reply before sending ({refills_at_empty:.0%} of "
                f"its sends found nothing in flight: batches, not a window)")
            assert statistics.median(in_flight) == PIPELINE - 1, (name, in_flight)
            # its own send to its reply: the N - 1 replies queued ahead of it, then its own
            assert p50 >= 0.8 * PIPELINE * DELAY, f"{name}: p50 {p50 * 1000:.1f} ms"


# ---------- seeds ----------

def test_randomize_draws_other_keys_in_each_run(tmp_path: Path) -> None:
    args = ("-c", "1", "-t", "1", "--ratio", "1:0", "--key-pattern", "R:R", "-n", "50",
            "--key-maximum", "10000000", "-d", "4")
    with server(tmp_path) as endpoint:
        fixed = []
        for extra in ((), (), ("--randomize",), ("--randomize",)):
            run(kvload(), endpoint, *args, *extra)
            fixed.append(key_numbers(endpoint))
    assert len(fixed[0]) == 50
    assert fixed[0] == fixed[1], "without --randomize every run draws the same keys"
    assert len(set(fixed[2]) & set(fixed[3])) < 5, "--randomize: a new seed in each run"
    assert len(set(fixed[2]) & set(fixed[0])) < 5


def test_distinct_client_seed_gives_each_client_its_own_keys(tmp_path: Path) -> None:
    args = ("-c", "4", "-t", "2", "--ratio", "1:0", "--key-pattern", "R:R", "-n", "50",
            "--key-maximum", "10000000", "-d", "4")
    with server(tmp_path) as endpoint:
        run(kvload(), endpoint, *args)
        shared = key_numbers(endpoint)
        run(kvload(), endpoint, *args, "--distinct-client-seed")
        distinct = key_numbers(endpoint)
    assert len(shared) == 50, "memtier's default: every client draws the same 50 keys"
    assert len(distinct) >= 390, f"8 clients × 50 keys each: {len(distinct)}"


# ---------- reports ----------

def _sections(doc: dict[str, Any]) -> list[str]:
    return [k for k in doc if k not in ("configuration", "run information")]


def test_print_all_runs_adds_each_runs_section_as_memtier_does(memtier_oracle: Path,
                                                               tmp_path: Path) -> None:
    args = ("-c", "2", "-t", "1", "-n", "200", "-x", "2", "--key-maximum", "1000")
    with server(tmp_path) as endpoint:
        plain = run_json(kvload(), endpoint, tmp_path, *args)
        every = run_json(kvload(), endpoint, tmp_path, *args, "--print-all-runs")
        oracle = run_json([str(memtier_oracle)], endpoint, tmp_path, *args, "--print-all-runs")
    assert _sections(plain) == ["BEST RUN RESULTS", "WORST RUN RESULTS",
                                "AGGREGATED AVERAGE RESULTS (2 runs)"]
    assert _sections(every) == _sections(oracle) == [
        "RUN #1 RESULTS", "RUN #2 RESULTS", *_sections(plain)]
    for run_section in ("RUN #1 RESULTS", "RUN #2 RESULTS"):
        assert int(every[run_section]["Totals"]["Count"]) == 400
    assert every["configuration"]["print-all-runs"] == "true"


# ---------- TLS ----------

def test_tls_skip_verify_accepts_a_server_whose_ca_is_not_given(tmp_path: Path) -> None:
    tls = make_tls_files(tmp_path / "tls")
    args = ("--tls", "-c", "1", "-t", "1", "-n", "100", "--key-maximum", "100")
    with server(tmp_path, tls) as endpoint:
        refused = run(kvload(), endpoint, *args, check=False)
        run(kvload(), endpoint, *args, "--tls-skip-verify")
        with RespClient(endpoint) as client:
            calls = client.call("INFO", "commandstats")
    assert refused.returncode == 1, "an unknown CA must fail the handshake"
    assert isinstance(calls, bytes) and b"cmdstat_get:calls=" in calls


# ---------- key distribution ----------

def test_key_median_centres_the_gaussian_keys_as_memtier_does(memtier_oracle: Path,
                                                             tmp_path: Path) -> None:
    args = ("-c", "1", "-t", "1", "--ratio", "1:0", "--key-pattern", "G:G", "-n", "2000",
            "--key-minimum", "1", "--key-maximum", "100000", "--key-stddev", "500", "-d", "4")
    medians = {}
    with server(tmp_path) as endpoint:
        for name, program, extra in (("kvload", kvload(), ()),
                                     ("kvload median", kvload(), ("--key-median", "20000")),
                                     ("memtier median", [str(memtier_oracle)],
                                      ("--key-median", "20000"))):
            run(program, endpoint, *args, *extra)
            medians[name] = statistics.median(key_numbers(endpoint))
    assert abs(medians["kvload"] - 50_000) < 200, medians  # the range's middle by default
    assert abs(medians["kvload median"] - 20_000) < 200, medians
    assert abs(medians["memtier median"] - 20_000) < 200, medians


# ---------- SCAN cursors ----------

def test_scan_incremental_max_iterations_bounds_each_walk_as_memtier_does(
        memtier_oracle: Path, tmp_path: Path) -> None:
    scan = ("--command", "SCAN 0 COUNT 10", "--scan-incremental-iteration", "-c", "1", "-t",
            "1", "--pipeline", "1", "-n", "400")
    counts = {}
    with server(tmp_path) as endpoint:
        with RespClient(endpoint) as client:
            client.pipeline([("SET", f"k{i}", "v") for i in range(2000)])
        for name, program, extra in (
                ("kvload", kvload(), ()),
                ("kvload max 3", kvload(), ("--scan-incremental-max-iterations", "3")),
                ("memtier max 3", [str(memtier_oracle)],
                 ("--scan-incremental-max-iterations", "3"))):
            stats = run_json(program, endpoint, tmp_path, *scan, *extra)["ALL STATS"]
            counts[name] = (int(stats["Scan 0s"]["Count"]), int(stats["Scan <cursor>s"]["Count"]))
    # 400 requests in walks of one SCAN 0 and 3 continuations: 100 walks
    assert counts["kvload max 3"] == counts["memtier max 3"] == (100, 300), counts
    first, rest = counts["kvload"]
    assert first <= 3 and rest >= 397, f"unbounded: walks run to cursor 0 ({counts})"


# ---------- --rate-limiting: requests per second per connection ----------

def _calls(endpoint: Endpoint) -> int:
    with RespClient(endpoint) as client:
        text = client.call("INFO", "commandstats")
        client.call("CONFIG", "RESETSTAT")
    assert isinstance(text, bytes)
    return sum(int(line.split(b"calls=")[1].split(b",")[0])
               for line in text.splitlines() if line.startswith((b"cmdstat_set", b"cmdstat_get")))


@pytest.mark.alone  # counts calls made at a rate in a timed run
@pytest.mark.parametrize("io", ["epoll", "uring"])
def test_rate_limiting_paces_each_connection_as_memtier_does(memtier_oracle: Path,
                                                             tmp_path: Path, io: str) -> None:
    """10 connections × 120 requests/s for 3 s: 3,600 calls, for memtier as for kvload (at
    full speed one connection alone sends tens of thousands); memtier's ticks of 3 requests
    every 25 ms, none carried over."""
    args = ("-c", "5", "-t", "2", "--ratio", "1:1", "--test-time", "3", "-d", "8",
            "--rate-limiting", "120")
    calls, rates = {}, {}
    with server(tmp_path) as endpoint:
        _calls(endpoint)
        for name, program in (("kvload", [*kvload(), f"--io={io}"]),
                              ("memtier", [str(memtier_oracle)])):
            stats = run_json(program, endpoint, tmp_path, *args)["ALL STATS"]
            calls[name], rates[name] = _calls(endpoint), float(stats["Totals"]["Ops/sec"])
    expected = 10 * 120 * 3
    assert abs(calls["memtier"] / expected - 1) < 0.03, calls  # the control
    assert abs(calls["kvload"] / expected - 1) < 0.03, calls
    assert abs(rates["kvload"] / 1200 - 1) < 0.03, rates
