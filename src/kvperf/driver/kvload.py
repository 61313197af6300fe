"""Adapter for kvload, kvperf's native load generator (crates/kvload), via its versioned JSON.

kvload reports latency corrected for coordinated omission and full HDR histograms; the
histograms are kept beside the trial so percentiles across runs and nodes can be merged.
In cluster mode commands go out with plain keys (no ``{tag}``): kvload routes each key to the
node that owns its slot, so seeded keys are the keys read.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kvperf.core import proc
from kvperf.core.errors import DriverError
from kvperf.core.jsontypes import JsonObject
from kvperf.driver.base import Capabilities, Measurement, Target
from kvperf.driver.flags import load_flags
from kvperf.driver.tool_run import run_tool
from kvperf.plan.trial import Load

JSON_FORMAT = "kvload"
JSON_VERSIONS = (1,)
CAPABILITIES = Capabilities(duration=True, warmup=True, rps=True, sequential=True, threads=True,
                            tls=True, cluster=True, cluster_plain_keys=True,
                            data_placeholder=True, seed=True, sequences=True)


FIRST_ERROR = re.compile(r"^WARNING: (?:[^\n:]+: )?first error reply: (?P<text>.*)$",
                         re.MULTILINE)


def first_error(logs: Iterable[Path]) -> str | None:
    """The first error reply kvload (or its memtier front end) logged on stderr
    (``WARNING: [test: ]first error reply: …``) in the first of ``logs`` that has one."""
    for log in sorted(logs):
        found = FIRST_ERROR.search(log.read_text(errors="replace")) if log.is_file() else None
        if found:
            return found["text"].strip()
    return None


def read_report(path: Path) -> JsonObject:
    """Load and check kvload's JSON report (format and version)."""
    try:
        report: JsonObject = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DriverError(f"kvload wrote no readable JSON report at {path}: {exc}") from None
    if report.get("format") != JSON_FORMAT or report.get("version") not in JSON_VERSIONS:
        raise DriverError(f"{path}: not a kvload report of a known version "
                          f"(format={report.get('format')!r}, version={report.get('version')!r})")
    if not report.get("tests"):
        raise DriverError(f"{path}: kvload report has no tests")
    return report


def measurement_from(test: JsonObject, faults: bool = False) -> Measurement:
    """The corrected-latency figures of one kvload test; fail on error replies or no requests
    (``faults``: a fault schedule ran, so errors and redirects are what it measures)."""
    errors = test.get("errors", {})
    bad = {k: v for k, v in errors.items() if k in ("err", "other", "timeout") and v}
    if bad and not faults:
        raise DriverError(f"kvload counted error replies: {bad}")
    if not test.get("requests") or not test.get("achieved_rps"):
        raise DriverError("kvload completed no requests")
    redirects = errors.get("moved", 0) + errors.get("ask", 0)
    if redirects > 0.01 * test["requests"] and not faults:
        raise DriverError(f"kvload was redirected {redirects} times for {test['requests']} "
                          "requests (MOVED/ASK): requests did not go to the node owning the key")
    lat = test["latency_ms"]["corrected"]
    cpu = test.get("cpu", {})
    requests = int(test["requests"])
    extra = {
        "mode": test.get("mode"), "target_rps": test.get("target_rps"),
        "errors": errors, "late": test.get("late"),
        "late_own": test.get("late_own"), "unsent": test.get("unsent"),
        "latency_ms": test["latency_ms"], "histograms": test.get("histograms"),
        "client_cpu_us_per_request": round((cpu.get("user_s", 0) + cpu.get("sys_s", 0))
                                           / requests * 1e6, 4),
        "client_saturated": bool(cpu.get("saturated")),
    }
    if "staircase" in test:  # a staircase: each step's connections, rps, latencies
        extra["staircase"] = test["staircase"]
    return Measurement(rps=float(test["achieved_rps"]), avg_latency_ms=lat["mean"],
                       min_latency_ms=lat["min"], p50_latency_ms=lat["p50"],
                       p95_latency_ms=lat["p95"], p99_latency_ms=lat["p99"],
                       max_latency_ms=lat["max"], requests=requests, extra=extra)


@dataclass
class Kvload:
    """kvload at ``path``."""

    path: Path
    version: str
    name: str = "kvload"
    capabilities: Capabilities = CAPABILITIES
    seed: int = 1

    @classmethod
    def probe(cls, path: Path) -> Kvload:
        code, text = proc.probe([str(path), "--version"])
        match = re.search(r"kvload (\S+)", text)
        if code != 0 or not match:
            raise DriverError(f"{path} --version did not identify kvload: {text.strip()[:200]}")
        return cls(path, match.group(1))

    def unsupported(self, load: Load, cluster: bool, tls: bool) -> str | None:
        return None

    def argv(self, load: Load, target: Target, bound: list[str], report: Path) -> list[str]:
        argv = [str(self.path), *load_flags(load, target, bound), "--seed", str(self.seed),
                "-q", "--json", str(report)]
        if load.rps:  # open loop (a rate sweep's point)
            argv += ["--rps", f"{load.rps:.3f}", "--arrivals", load.arrivals or "uniform"]
        if load.read_from_replicas != "no":  # read tests to the replicas kvload discovers
            argv += ["--read-from-replicas", load.read_from_replicas]
        if load.staircase:  # connections ramped up to -c, each step measured on its own
            argv += load.staircase.argv()
        argv += workload_flags(load)
        if load.command.independent_keys and not target.cluster:
            argv.append("--independent-keys")  # in a cluster a sequence shares one slot
        if load.command.is_custom or target.cluster:
            return [*argv, *load.command.argv]
        assert load.command.test is not None
        return [*argv, "-t", load.command.test]

    def _timeout(self, load: Load) -> float:
        return 120.0 + (load.duration or 0) + (load.requests or 0) / 5_000

    def warmup(self, load: Load, target: Target, seconds: int, log: Path) -> None:
        report = log.with_name("warmup.json")
        argv = self.argv(load, target, ["--duration", str(seconds)], report)
        self._run(argv, load, log, seconds + 60.0, target)

    def measure(self, load: Load, target: Target, log: Path) -> Measurement:
        report = log.with_name("kvload.json")
        bound = (["-n", str(load.requests)] if load.requests is not None
                 else ["--duration", str(load.duration)])
        if load.settle:  # kvload's own warmup: the same connections and schedule go on
            bound += ["--warmup", f"{load.settle:g}"]
        argv = self.argv(load, target, bound, report)
        if load.faults:
            argv = failover_argv(argv, load, target, log.with_name(ACK_LOG))
        self._run(argv, load, log, self._timeout(load), target)
        return measurement_from(read_report(report)["tests"][0], faults=bool(load.faults))

    def _run(self, argv: list[str], load: Load, log: Path, timeout: float,
             target: Target) -> None:
        output = run_tool(argv, cpus=load.cpus, timeout=timeout, log=log, env=auth_env(target))
        if output.returncode != 0:
            lines = (output.stderr or output.stdout).strip().splitlines()
            detail = lines[-1] if lines else "(no output)"
            raise DriverError(f"kvload exited with code {output.returncode}: {detail}")


ACK_LOG = "acks.txt"  # beside kvload.json: the acknowledged writes of a trial with faults
ACK_PREFIX = "acked:"  # the measure stage's keys when its writes are checked for loss
UNIQUE_KEYS = 1_000_000_000


def checks_writes(load: Load) -> bool:
    """Whether a trial with faults checks its acknowledged writes for loss: the built-in SET
    only, which then writes unique keys of its own (``acked:``, sequential over -r
    1000000000, so no seed or warmup key is among them) and logs each acknowledged one."""
    return bool(load.faults) and load.command.name == "SET" and not load.command.is_custom


def workload_flags(load: Load) -> list[str]:
    """kvload's flags of the key and value distributions that differ from the defaults
    (config/workload.py's texts are kvload's spelling)."""
    flags = {"key_distribution": "--key-distribution", "value_sizes": "--value-size",
             "value_content": "--value-content", "ttl": "--ttl"}
    return [word for key, text in load.workload().items() for word in (flags[key], text)]


def failover_argv(argv: list[str], load: Load, target: Target, ack_log: Path) -> list[str]:
    """kvload's measure argv for a trial with faults: reconnecting after errors, falling
    back to the replicas (a promoted one takes the writes), and with ``checks_writes`` the
    SET as a custom command of unique keys with ``--ack-log``."""
    extra = ["--reconnect-on-error"]
    if target.replicas and not target.cluster:
        extra += ["--fallback", ",".join(f"{e.host}:{e.port}" for e in target.replicas)]
    if not checks_writes(load):
        return [*argv[:1], *extra, *argv[1:]]
    # the command goes last: "-t set", or in a cluster its argv with plain keys
    cut = argv.index("-t") if "-t" in argv else len(argv) - len(load.command.argv)
    head = argv[:cut]
    head[head.index("-r") + 1] = str(UNIQUE_KEYS)
    return [*head[:1], *extra, *head[1:], "--sequential", "--ack-log", str(ack_log),
            "SET", f"{ACK_PREFIX}__rand_int__", "__data__"]


# kvload's password when -a is not given (crates/kvload/src/base/session.rs)
AUTH_ENV = "KVLOAD_AUTH"


def auth_env(target: Target) -> dict[str, str] | None:
    """kvload's environment for a server with a password: it reads it from $KVLOAD_AUTH, so
    the password is in no argv (``ps`` shows argv to every user). None: kvperf's own."""
    password = target.first.password
    if password is None:
        return None
    return {**os.environ, AUTH_ENV: password.reveal()}
