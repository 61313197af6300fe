"""``kvload pubsub`` runs for pub/sub definitions (definitions/pubsub.py plans them).

kvperf gives the address and the report file; kvload writes its JSON report whose one test
carries a ``pubsub`` object (docs/KVLOAD.md). The row's rps is messages delivered per second
and its latencies are publish-to-deliver; published/s, fan-out, lost and duplicated go to
the measurement's extra fields. Messages lost on loopback fail the test: a benchmark that
dropped messages did not measure what it says.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kvperf.core.errors import DriverError
from kvperf.core.jsontypes import JsonObject
from kvperf.driver.base import Measurement
from kvperf.driver.kvload import measurement_from, read_report
from kvperf.driver.registry import find_tool
from kvperf.server.process import ManagedProcess
from kvperf.server.resp import Endpoint

PUBSUB_FIELDS = ("published", "published_rps", "delivered", "delivered_rps", "fanout",
                 "expected", "lost", "duplicated", "subscribers_with_loss", "publish_errors",
                 "drain_s")


def kvload_path(explicit: Path | None = None) -> Path:
    found = find_tool("kvload", explicit, None)
    if found is None:
        raise DriverError("kvload is not installed: scripts/install.sh builds it into the "
                          "environment")
    return found


def run_pubsub(kvload: Path, options: tuple[str, ...], endpoint: Endpoint, report: Path,
               log: Path, cpus: tuple[int, ...] | None, timeout: float) -> JsonObject:
    """Run ``kvload pubsub`` and return its report; DriverError when it fails. The process
    is stopped by its pid whatever happens."""
    argv = [str(kvload), "pubsub", "-h", endpoint.host, "-p", str(endpoint.port), *options,
            "-q", "--json", str(report)]
    process = ManagedProcess(argv, cpus=cpus, stdout=log)
    try:
        if not process.wait(timeout):
            raise DriverError(f"kvload pubsub did not finish within {timeout:.0f}s")
        if process.popen.returncode != 0:
            text = log.read_text(errors="replace").strip() if log.is_file() else ""
            raise DriverError(f"kvload pubsub {process.exit_description()}: "
                              f"{(text.splitlines() or ['(no output)'])[-1]}")
    finally:
        process.stop(grace=2.0)
    return read_report(report)


def is_pubsub_report(document: JsonObject) -> bool:
    tests = document.get("tests")
    return bool(document.get("format") == "kvload" and tests and "pubsub" in tests[0])


def with_publisher_totals(document: JsonObject) -> JsonObject:
    """The report as the corpus' exporter paths and KPIs read it: a pub/sub definition's
    paths are its memtier PUBLISH client's (``$."ALL STATS".Totals…``), of which kvload
    pubsub measures the publish rate — memtier's Ops/sec, PUBLISH calls per second. Its
    latency paths stay empty: kvload times publish to delivery, not PUBLISH's round trip.
    kvload's own paths (``$.tests[0].pubsub…``) are kept."""
    published = document["tests"][0]["pubsub"].get("published_rps")
    return {**document, "ALL STATS": {"Totals": {"Ops/sec": published}}}


def measurement(document: JsonObject) -> Measurement:
    """Delivered messages per second and publish-to-deliver latency, with the pub/sub
    counts in ``extra``; DriverError when messages were lost or duplicated."""
    test = document["tests"][0]
    counts = test["pubsub"]
    if counts.get("lost") or counts.get("duplicated"):
        raise DriverError(f"kvload pubsub: {counts.get('lost')} message(s) lost and "
                          f"{counts.get('duplicated')} duplicated of {counts.get('expected')} "
                          "expected deliveries")
    found = measurement_from(test)
    extra = {**found.extra, "pubsub": {k: counts.get(k) for k in PUBSUB_FIELDS}}
    return replace(found, extra=extra)
