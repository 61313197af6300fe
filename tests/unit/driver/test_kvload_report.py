"""Reading kvload's versioned JSON report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvperf.core.errors import DriverError
from kvperf.driver.kvload import first_error, measurement_from, read_report

LAT = {"min": 0.1, "mean": 0.5, "p50": 0.4, "p90": 0.8, "p95": 0.9, "p99": 1.5, "p99_9": 2.0,
       "p99_99": 2.5, "max": 3.0}


def make_report(requests: int = 1000, **errors: int) -> dict[str, Any]:
    return {"name": "SET", "mode": "closed", "target_rps": None, "achieved_rps": 5000.0,
            "requests": requests, "duration_s": 0.2,
            "errors": {"err": 0, "moved": 0, "ask": 0, "timeout": 0, "other": 0, **errors},
            "late": 9, "late_own": 2, "unsent": 0, "latency_ms": {"corrected": LAT, "service": LAT},
            "histograms": {"unit": "us", "corrected": "x", "service": "y"},
            "cpu": {"user_s": 0.01, "sys_s": 0.01, "cores_used": 0.1, "saturated": True}}


def test_measurement_uses_corrected_latency_and_client_cpu() -> None:
    m = measurement_from(make_report())
    assert m.rps == 5000.0 and m.p99_latency_ms == 1.5 and m.requests == 1000
    assert m.extra["client_cpu_us_per_request"] == pytest.approx(20.0)
    assert m.extra["client_saturated"] is True
    assert (m.extra["late"], m.extra["late_own"]) == (9, 2)


def test_error_replies_fail_the_measurement() -> None:
    with pytest.raises(DriverError, match="error replies"):
        measurement_from(make_report(err=3))
    assert measurement_from(make_report(moved=2)).extra["errors"]["moved"] == 2
    with pytest.raises(DriverError, match="redirected 50 times"):
        measurement_from(make_report(moved=40, ask=10))
    with pytest.raises(DriverError, match="no requests"):
        measurement_from(make_report(requests=0))


def test_report_format_and_version_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": "kvload", "version": 99, "tests": [make_report()]}))
    with pytest.raises(DriverError, match="known version"):
        read_report(path)
    path.write_text(json.dumps({"format": "kvload", "version": 1, "tests": [make_report()]}))
    assert read_report(path)["tests"][0]["name"] == "SET"
    with pytest.raises(DriverError, match="no readable JSON"):
        read_report(tmp_path / "missing.json")


def test_the_first_error_reply_is_read_from_kvloads_log(tmp_path: Path) -> None:
    (tmp_path / "tool-0.log").write_text("[RUN #1 100%,   1 secs] 1 threads 1 conns: 0 ops\n"
                                         "WARNING: 1 error replies (err=1 moved=0 ask=0 "
                                         "other=0); not counted as ops\n"
                                         "WARNING: first error reply: ERR Error trying to "
                                         "load the RDB dump, check server logs.\n")
    (tmp_path / "tool-1.log").write_text("WARNING: first error reply: ERR later\n")
    (tmp_path / "tool.log").write_text("WARNING: SET: 3 error replies (err=3 moved=0 ask=0 "
                                       "other=0)\nWARNING: SET: first error reply: WRONGTYPE "
                                       "Operation against a key\n")
    assert first_error(tmp_path.glob("tool-*.log")) == (
        "ERR Error trying to load the RDB dump, check server logs.")
    assert first_error([tmp_path / "tool.log"]) == "WRONGTYPE Operation against a key"
    assert first_error([tmp_path / "absent.log"]) is None


def test_a_trial_with_faults_measures_its_errors_and_redirects() -> None:
    m = measurement_from(make_report(err=30, moved=200), faults=True)
    assert m.extra["errors"]["err"] == 30 and m.requests == 1000
    with pytest.raises(DriverError, match="no requests"):
        measurement_from(make_report(requests=0), faults=True)
