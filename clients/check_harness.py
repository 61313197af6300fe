#!/usr/bin/env python3
"""Check one client harness against a running Valkey/Redis server (contract v1, issue 23).

Standalone: Python stdlib plus `hdrh`. For each spec of a small set it preloads the keys,
resets the server's stats, runs the harness and checks
  (a) the result JSON has the contract's fields and types,
  (b) every histogram decodes with hdrh, has the contract's precision (µs, 1 to 60 s, 3
      significant figures) and its count equals the command's ops,
  (c) INFO commandstats calls equal warmup + measured ops (+ errors) + the allocation
      pass's calls per command within 1%.
One line per check: `PASS|FAIL|SKIP <spec> <check>: <detail>`. Exit 0 when nothing failed.

  check_harness.py --manifest clients/go/go-redis/manifest.json --install-dir DIR --port 6390
  check_harness.py --run 'node /abs/clients/node/ioredis/harness.js' --port 6390
  check_harness.py --manifest … --bench 5     SET P=1 single: ops/s, p99, noop cost %

A harness that exits 2 (a model it does not support) is reported as SKIP for that spec.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram

TOLERANCE = 0.01
OPEN_LOOP_RPS = 1000  # the open-loop spec's rate: far below any harness's closed loop
RESULT_FORMAT = "kvperf-client-result"


# ---------------------------------------------------------------- server (raw RESP over a socket)

@dataclass(frozen=True)
class Tls:
    ca_file: str | None
    cert_file: str | None
    key_file: str | None


class Server:
    """A minimal RESP2 connection: enough to preload, reset stats and read commandstats."""

    def __init__(self, host: str, port: int, password: str | None, tls: Tls | None = None) -> None:
        sock = socket.create_connection((host, port), timeout=10)
        if tls:
            ctx = ssl.create_default_context(cafile=tls.ca_file)
            if tls.cert_file:
                ctx.load_cert_chain(tls.cert_file, tls.key_file)
            sock = ctx.wrap_socket(sock, server_hostname=host)
        self.sock = sock
        self.buf = b""
        if password:
            self.call("AUTH", password)

    def send(self, *args: str | bytes) -> None:
        self.sock.sendall(encode(args))

    def call(self, *args: str | bytes) -> Any:
        self.send(*args)
        return self.read()

    def read(self) -> Any:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return int(rest) if kind == b":" else rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n + 2)[:-2]
        if kind == b"*":
            return [self.read() for _ in range(int(rest))]
        raise RuntimeError(f"unexpected RESP reply {line!r}")

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise RuntimeError("server closed the connection")
        self.buf += chunk

    def preload(self, prefix: str, count: int, value_size: int) -> None:
        value = b"v" * value_size
        for start in range(0, count, 1000):
            batch = range(start, min(count, start + 1000))
            self.sock.sendall(b"".join(encode(("SET", f"{prefix}{i}", value)) for i in batch))
            for _ in batch:
                self.read()

    def commandstats(self) -> dict[str, int]:
        text = self.call("INFO", "commandstats").decode()
        calls = {}
        for line in text.splitlines():
            if line.startswith("cmdstat_"):
                name, _, rest = line[len("cmdstat_"):].partition(":")
                fields = dict(kv.split("=", 1) for kv in rest.split(","))
                calls[name.upper()] = int(fields["calls"])
        return calls


def encode(args: tuple[str | bytes, ...]) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a.encode() if isinstance(a, str) else a
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


# ---------------------------------------------------------------- specs

def endpoint(host: str, port: int, tls: Tls | None) -> dict[str, Any]:
    return {"host": host, "port": port, "tls": tls is not None,
            "ca_file": tls and tls.ca_file, "cert_file": tls and tls.cert_file,
            "key_file": tls and tls.key_file}


def make_spec(ep: dict[str, Any], name: str, **over: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "format": "kvperf-client-workload", "version": 1,
        "endpoint": ep,
        "commands": [{"command": "SET", "ratio": 1}, {"command": "GET", "ratio": 10}],
        "keys": {"prefix": "key:", "count": 1000, "pattern": "random"},
        "value_size": 100, "pipeline": 1, "transaction": False,
        "concurrency": {"model": "single", "workers": 1},
        "requests": 4000, "duration_s": None, "warmup_s": 0.3, "seed": 1, "noop": False,
        "allocation_ops": 1000,
    }
    for key, value in over.items():
        spec[key] = value
    spec["_name"] = name
    return spec


def check_specs(ep: dict[str, Any], workers: int) -> list[dict[str, Any]]:
    single = {"model": "single", "workers": 1}
    pool = {"model": "pool", "workers": workers}
    aio = {"model": "async", "workers": workers}
    incr = [{"command": "SET", "ratio": 1}, {"command": "GET", "ratio": 1},
            {"command": "INCR", "ratio": 1}]
    return [
        make_spec(ep, "single-p1", concurrency=single),
        make_spec(ep, "single-p10", concurrency=single, pipeline=10),
        make_spec(ep, "single-p10-tx", concurrency=single, pipeline=10, transaction=True),
        make_spec(ep, "single-p1-tx", concurrency=single, transaction=True),
        make_spec(ep, "single-incr-seq", commands=incr,
                  keys={"prefix": "key:", "count": 1000, "pattern": "sequential"}),
        make_spec(ep, "single-duration", requests=None, duration_s=1.0),
        make_spec(ep, "single-rate", requests=None, duration_s=2.0, warmup_s=1.0,
                  rate={"rps": OPEN_LOOP_RPS, "arrivals": "uniform"}),
        make_spec(ep, "pool-p1", concurrency=pool),
        make_spec(ep, "pool-p10", concurrency=pool, pipeline=10),
        make_spec(ep, "pool-p10-tx", concurrency=pool, pipeline=10, transaction=True),
        make_spec(ep, "async-p1", concurrency=aio),
        make_spec(ep, "async-p10", concurrency=aio, pipeline=10),
        make_spec(ep, "async-p10-tx", concurrency=aio, pipeline=10, transaction=True),
        make_spec(ep, "single-noop", noop=True),
    ]


# ---------------------------------------------------------------- running a harness

@dataclass
class Run:
    rc: int
    result: dict[str, Any] | None
    stderr: str
    wall_s: float
    error: str | None = None


def run_harness(argv: list[str], spec: dict[str, Any], env: dict[str, str], timeout: float) -> Run:
    body = {k: v for k, v in spec.items() if not k.startswith("_")}
    with tempfile.TemporaryDirectory(prefix="kvperf-check-") as tmp:
        path = Path(tmp) / "spec.json"
        path.write_text(json.dumps(body))
        start = time.monotonic()
        try:
            proc = subprocess.run([*argv, str(path)], cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Run(-1, None, "", time.monotonic() - start, f"timed out after {timeout:.0f} s")
        wall = time.monotonic() - start
    if proc.returncode != 0:
        return Run(proc.returncode, None, proc.stderr, wall)
    try:
        return Run(0, json.loads(proc.stdout), proc.stderr, wall)
    except json.JSONDecodeError as exc:
        return Run(0, None, proc.stderr, wall, f"stdout is not one JSON document: {exc}")


# ---------------------------------------------------------------- checks

@dataclass
class Report:
    failed: int = 0
    lines: list[str] = field(default_factory=list)

    def add(self, status: str, spec: str, check: str, detail: str) -> None:
        if status == "FAIL":
            self.failed += 1
        line = f"{status} {spec} {check}: {detail}"
        self.lines.append(line)
        print(line, flush=True)


def schema_problems(res: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    """The contract's result fields and types (kvperf-client-result v1)."""
    p: list[str] = []

    def need(obj: Any, key: str, types: tuple[type, ...], where: str) -> Any:
        if not isinstance(obj, dict) or key not in obj:
            p.append(f"{where}{key} missing")
            return None
        value = obj[key]
        if isinstance(value, bool) != (bool in types) or not isinstance(value, types):
            p.append(f"{where}{key} has type {type(value).__name__}")
        return value

    if res.get("format") != RESULT_FORMAT or res.get("version") != 1:
        p.append(f"format/version is {res.get('format')!r}/{res.get('version')!r}")
    client = need(res, "client", (dict,), "")
    for key in ("name", "library", "version", "language", "runtime"):
        need(client, key, (str,), "client.")
    need(res, "duration_s", (int, float), "")
    need(res, "transactions", (int,), "")
    if "first_error" not in res or not isinstance(res["first_error"], (str, type(None))):
        p.append("first_error missing or not string/null")
    warmup = need(res, "warmup", (dict,), "")
    for name, count in (warmup or {}).items():
        if isinstance(count, bool) or not isinstance(count, int):
            p.append(f"warmup.{name} is not an integer")
    wanted = {c["command"] for c in spec["commands"]}
    if spec["transaction"]:
        wanted_warm = wanted | {"MULTI", "EXEC"}
        if warmup is not None and not wanted_warm <= set(warmup):
            p.append(f"warmup lacks {sorted(wanted_warm - set(warmup))}")
    commands = need(res, "commands", (dict,), "") or {}
    if set(commands) != wanted:
        p.append(f"commands are {sorted(commands)}, spec has {sorted(wanted)}")
    for name, entry in commands.items():
        for key, types in (("ops", (int,)), ("errors", (int,)), ("histogram", (str,))):
            need(entry, key, types, f"commands.{name}.")
    alloc = res.get("allocations", "missing")
    if alloc == "missing":
        p.append("allocations missing (null when the runtime cannot tell)")
    elif isinstance(alloc, dict) and "bytes_per_op" in alloc:  # the allocation pass (issue 37)
        need(alloc, "bytes_per_op", (int, float), "allocations.")
        need(alloc, "ops", (int,), "allocations.")
        need(alloc, "calls", (dict,), "allocations.")
        need(alloc, "method", (str,), "allocations.")
        need(alloc, "exact", (bool,), "allocations.")
        sent = sum(n for c, n in (alloc.get("calls") or {}).items() if c in wanted)
        if sent != alloc.get("ops"):
            p.append(f"allocations.ops {alloc.get('ops')} != the pass's calls {sent}")
    elif alloc is not None:
        need(alloc, "per_op", (int, float), "allocations.")
        need(alloc, "unit", (str,), "allocations.")
        need(alloc, "source", (str,), "allocations.")
    cpu = res.get("cpu")  # optional: the process's CPU in the measured window (issue 37)
    if cpu is not None:
        for key, types in (("user_s", (int, float)), ("system_s", (int, float)),
                           ("source", (str,))):
            need(cpu, key, types, "cpu.")
    return p


def check_histograms(res: dict[str, Any]) -> list[str]:
    problems = []
    for name, entry in res.get("commands", {}).items():
        try:
            hist = HdrHistogram.decode(entry["histogram"])
        except Exception as exc:  # hdrh raises a variety of errors on bad input
            problems.append(f"{name}: does not decode ({exc})")
            continue
        found = (hist.lowest_trackable_value, hist.highest_trackable_value,
                 hist.significant_figures)
        if found != (1, 60_000_000, 3):
            problems.append(f"{name}: precision (lowest, highest, figures) {found}, the "
                            "contract's is (1, 60000000, 3)")
        if hist.get_total_count() != entry["ops"]:
            count = hist.get_total_count()
            problems.append(f"{name}: histogram count {count} != ops {entry['ops']}")
    return problems


def check_calls(res: dict[str, Any], calls: dict[str, int], noop: bool) -> list[str]:
    expected: dict[str, int] = dict.fromkeys(res.get("warmup", {}), 0)
    for name, count in res.get("warmup", {}).items():
        expected[name] += count
    passed = res.get("allocations")  # the allocation pass's calls reach the server too
    for name, count in (passed.get("calls") or {} if isinstance(passed, dict) else {}).items():
        expected[name] = expected.get(name, 0) + count
    for name, entry in res.get("commands", {}).items():
        expected[name] = expected.get(name, 0) + entry["ops"] + entry["errors"]
    tx = res.get("transactions", 0)
    if tx or "MULTI" in expected:
        expected["MULTI"] = expected.get("MULTI", 0) + tx
        expected["EXEC"] = expected.get("EXEC", 0) + tx
    problems = []
    # Only the workload's commands: connection set-up (HELLO, AUTH, CLIENT…) and this
    # checker's own INFO are not the harness's to account for.
    for name in sorted(set(expected) | ({"SET", "GET", "INCR", "MULTI", "EXEC"} & set(calls))):
        want = 0 if noop else expected.get(name, 0)
        got = calls.get(name, 0)
        if abs(got - want) > TOLERANCE * max(want, 1) and not (want == 0 and got <= 0):
            problems.append(f"{name}: server counted {got}, harness reported {want}")
    return problems


def describe(res: dict[str, Any]) -> str:
    ops = sum(e["ops"] for e in res["commands"].values())
    rate = ops / res["duration_s"] if res["duration_s"] else 0.0
    return f"{ops} ops in {res['duration_s']:.3f} s ({rate:,.0f} ops/s)"


def check_one(server: Server, argv: list[str], spec: dict[str, Any], env: dict[str, str],
              report: Report) -> None:
    name = spec["_name"]
    server.preload(spec["keys"]["prefix"], spec["keys"]["count"], spec["value_size"])
    server.call("CONFIG", "RESETSTAT")
    run = run_harness(argv, spec, env, timeout=120)
    if run.rc == 2 and run.result is None:
        report.add("SKIP", name, "run", f"exit 2: {run.stderr.strip().splitlines()[-1:]}")
        return
    if run.result is None:
        tail = run.stderr.strip().splitlines()[-3:]
        report.add("FAIL", name, "run", run.error or f"exit {run.rc}: {tail}")
        return
    res = run.result
    problems = schema_problems(res, spec)
    report.add("FAIL" if problems else "PASS", name, "a-schema", "; ".join(problems) or "ok")
    if problems:
        return
    problems = check_histograms(res)
    report.add("FAIL" if problems else "PASS", name, "b-histograms",
               "; ".join(problems) or "decode, counts equal ops")
    calls = server.commandstats()
    problems = check_calls(res, calls, spec["noop"])
    report.add("FAIL" if problems else "PASS", name, "c-commandstats",
               "; ".join(problems) or f"{describe(res)}; calls match")
    if spec["requests"] is not None:
        ops = sum(e["ops"] + e["errors"] for e in res["commands"].values())
        ok = ops == spec["requests"]
        report.add("PASS" if ok else "FAIL", name, "requests",
                   f"{ops} measured commands, spec asked {spec['requests']}")
    if spec.get("rate"):
        status, detail = check_rate(res, spec["rate"])
        report.add(status, name, "rate", detail)


def check_rate(res: dict[str, Any], rate: dict[str, Any]) -> tuple[str, str]:
    """An open-loop result echoes its rate and is paced: at most 1.5× it (a harness behind
    its schedule catches up at once; a closed loop runs at thousands), at least half of it."""
    ops = sum(e["ops"] + e["errors"] for e in res["commands"].values())
    achieved = ops / res["duration_s"] if res["duration_s"] else 0.0
    if res.get("rate") != rate:
        return "FAIL", f"result's rate {res.get('rate')} is not the spec's {rate} (closed loop?)"
    ok = 0.5 * rate["rps"] <= achieved <= 1.5 * rate["rps"]
    return ("PASS" if ok else "FAIL"), f"{achieved:,.0f} ops/s at a rate of {rate['rps']:,}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def check_failures(argv: list[str], ep: dict[str, Any], env: dict[str, str],
                   report: Report) -> None:
    """An unreachable server exits 1 and an unknown model exits 2, each with a reason on stderr."""
    dead = dict(ep, host="127.0.0.1", port=free_port(), tls=False)
    telepathy = {"model": "telepathy", "workers": 1}
    cases = [("unreachable", make_spec(dead, "unreachable"), 1),
             ("bad-model", make_spec(ep, "bad-model", concurrency=telepathy), 2)]
    for name, spec, code in cases:
        run = run_harness(argv, spec, env, timeout=60)
        lines = [line for line in run.stderr.strip().splitlines() if line.strip()]
        ok = run.rc == code and run.result is None and bool(lines)
        extra = f" (+{len(lines) - 1} earlier stderr lines)" if len(lines) > 1 else ""
        reason = lines[-1] if lines else "(no reason)"
        detail = run.error or f"exit {run.rc} in {run.wall_s:.1f} s: {reason}{extra}"
        report.add("PASS" if ok else "FAIL", name, f"exit-{code}", detail)


# ---------------------------------------------------------------- bench (README numbers)

def child_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(argv: list[str], spec: dict[str, Any], env: dict[str, str]) -> tuple[Run, float]:
    """Runs the harness; returns its result and the CPU seconds its process used."""
    before = child_cpu_s()
    run = run_harness(argv, spec, env, timeout=spec["warmup_s"] + (spec["duration_s"] or 0) + 120)
    if run.result is None:
        print(f"bench run failed: exit {run.rc}: {run.stderr.strip()[-300:]}", file=sys.stderr)
        sys.exit(1)
    return run, child_cpu_s() - before


def bench(server: Server, argv: list[str], env: dict[str, str], ep: dict[str, Any],
          seconds: float) -> dict[str, float]:
    """SET P=1 single: ops/s and p99 of the real call; the harness's own cost per op (noop).

    The noop cost is CPU time per operation (the noop run's CPU minus a one-request run's,
    i.e. without start-up, over its warmup + measured operations): unlike wall time it does not
    grow when other processes share the CPUs. The real call's cost is its wall time per op.
    """
    setp1 = [{"command": "SET", "ratio": 1}]
    server.preload("key:", 1000, 100)
    real, _ = timed_run(argv, make_spec(ep, "bench", commands=setp1, requests=None,
                                         duration_s=seconds, warmup_s=1.0), env)
    noop, noop_cpu = timed_run(argv, make_spec(ep, "bench", commands=setp1, requests=None,
                                               duration_s=seconds, warmup_s=1.0, noop=True), env)
    _, start_cpu = timed_run(argv, make_spec(ep, "bench", commands=setp1, requests=1,
                                             warmup_s=0.0, noop=True), env)
    entry = real.result["commands"]["SET"]  # type: ignore[index]
    nres = noop.result or {}
    noop_ops = nres["commands"]["SET"]["ops"] + nres["warmup"]["SET"]
    out = {"ops_s": entry["ops"] / real.result["duration_s"],  # type: ignore[index]
           "p99_us": HdrHistogram.decode(entry["histogram"]).get_value_at_percentile(99),
           "real_ns": real.result["duration_s"] / entry["ops"] * 1e9,  # type: ignore[index]
           "noop_ns": max(noop_cpu - start_cpu, 0.0) / max(noop_ops - 1, 1) * 1e9,
           "noop_wall_ns": nres["duration_s"] / nres["commands"]["SET"]["ops"] * 1e9}
    alloc = real.result.get("allocations") or {}  # type: ignore[union-attr]
    out["alloc"] = alloc.get("bytes_per_op", alloc.get("per_op", float("nan")))
    out["noop_pct"] = 100 * out["noop_ns"] / out["real_ns"]
    print(f"BENCH SET P=1 single: {out['ops_s']:,.0f} ops/s, p99 {out['p99_us']} us, "
          f"{out['real_ns']:,.0f} ns/op; noop {out['noop_ns']:,.1f} ns/op = {out['noop_pct']:.2f}% "
          f"of the real call (noop wall {out['noop_wall_ns']:,.1f} ns/op); "
          f"allocations {out['alloc']:.1f} B/op", flush=True)
    return out


# ---------------------------------------------------------------- manifest handling

def expand(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def run_step(kind: str, argv: list[str], env: dict[str, str], cwd: Path | None) -> None:
    """One requires/install step; a failure exits 2 showing the step's output tail."""
    try:
        proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError:
        print(f"{kind} step failed: {argv[0]} not found ({' '.join(argv)})", file=sys.stderr)
        sys.exit(2)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        print(f"{kind} step failed (exit {proc.returncode}): {' '.join(argv)}", *tail,
              sep="\n", file=sys.stderr)
        sys.exit(2)


def from_manifest(path: Path, install_dir: Path, cache_dir: Path, do_install: bool
                  ) -> tuple[list[str], dict[str, str]]:
    manifest = json.loads(path.read_text())
    values = {"src": str(path.parent.resolve()), "install": str(install_dir.resolve()),
              "cache": str(cache_dir.resolve()), "python": sys.executable}
    env = dict(os.environ)
    env.update({k: expand(v, values) for k, v in manifest.get("env", {}).items()})
    for step in manifest.get("requires", []):
        run_step("requires", [expand(a, values) for a in step], env, None)
    if do_install:
        install_dir.mkdir(parents=True, exist_ok=True)
        start = time.monotonic()
        for step in manifest["install"]:
            run_step("install", [expand(a, values) for a in step], env, install_dir)
        print(f"INSTALL {manifest['name']}: {time.monotonic() - start:.1f} s", flush=True)
    return [expand(a, values) for a in manifest["run"]], env


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--manifest", type=Path, help="a harness's manifest.json")
    src.add_argument("--run", help="the harness command line, split like a shell would "
                     "(the spec path is appended)")
    ap.add_argument("--install-dir", type=Path, help="{install} (with --manifest)")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache/kvperf/clients")
    ap.add_argument("--install", action="store_true", help="run the manifest's install steps first")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--tls", action="store_true", help="the server speaks TLS on --port")
    ap.add_argument("--ca-file")
    ap.add_argument("--cert-file")
    ap.add_argument("--key-file")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--only", nargs="*",
                    help="spec names to run (default: all; 'failures' = the exit-code checks)")
    ap.add_argument("--bench", type=float, metavar="SECONDS",
                    help="also measure SET P=1 single (and its noop) for SECONDS each")
    ap.add_argument("--no-checks", action="store_true", help="with --bench: skip the checks")
    return ap.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.manifest:
        if args.install_dir is None:
            print("--manifest needs --install-dir", file=sys.stderr)
            return 2
        cmd, env = from_manifest(args.manifest, args.install_dir, args.cache_dir, args.install)
    else:
        cmd, env = shlex.split(args.run), dict(os.environ)
    password = env.get("KVPERF_CLIENT_PASSWORD")
    tls = Tls(args.ca_file, args.cert_file, args.key_file) if args.tls else None
    server = Server(args.host, args.port, password, tls)
    ep = endpoint(args.host, args.port, tls)
    report = Report()
    if not args.no_checks:
        for spec in check_specs(ep, args.workers):
            if not args.only or spec["_name"] in args.only:
                check_one(server, cmd, spec, env, report)
        if not args.only or "failures" in args.only:
            check_failures(cmd, ep, env, report)
    if args.bench:
        bench(server, cmd, env, ep, args.bench)
    print(f"{'FAILED' if report.failed else 'OK'}: {report.failed} failed check(s)")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
