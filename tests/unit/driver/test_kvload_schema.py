"""kvload's JSON layout is one file: crates/kvload/schema/kvload-report.schema.json.

The Rust tests check every report they produce against it; here the reader's fixture and a
real kvload run are checked against the same file, so the three cannot drift apart.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from kvperf.driver.kvload import JSON_FORMAT, JSON_VERSIONS, read_report
from tests.helpers import require_binary
from tests.unit.driver.test_kvload_report import make_report

CRATE = Path(__file__).resolve().parents[3] / "crates" / "kvload"
SCHEMA = CRATE / "schema" / "kvload-report.schema.json"
CONFIG = {"host": "127.0.0.1", "port": 6379, "socket": None, "clients": 50, "threads": 1,
          "pipeline": 1, "requests": 1000, "duration_s": None, "warmup_s": 0.0, "data_size": 3,
          "keyspacelen": None, "sequential": False, "seed": 1, "rps": None, "tls": False,
          "cluster": False, "resp3": False, "dbnum": 0, "tests": ["set"], "io": "uring",
          "io_note": None, "dataset": None}


def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA.read_text())
    return loaded


def fixture_report() -> dict[str, Any]:
    test = make_report()
    test["histograms"]["significant_figures"] = 3
    test["intervals"] = [{"t_s": 0.2, "requests": 1000, "rps": 5000.0, "p50_ms": 0.4,
                          "p99_ms": 1.5, "errors": 0}]
    return {"format": JSON_FORMAT, "version": JSON_VERSIONS[-1], "kvload_version": "0.1.0",
            "config": CONFIG, "tests": [test]}


def test_schema_is_valid_and_names_the_readers_format_and_version() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    props = schema()["properties"]
    assert props["format"]["const"] == JSON_FORMAT
    assert props["version"]["const"] in JSON_VERSIONS


def test_reader_fixture_matches_the_schema() -> None:
    jsonschema.validate(fixture_report(), schema())
    broken = fixture_report()
    del broken["tests"][0]["cpu"]["user_s"]
    with pytest.raises(jsonschema.ValidationError, match="user_s"):
        jsonschema.validate(broken, schema())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.integration
def test_a_real_kvload_report_matches_the_schema_and_reads(tmp_path: Path) -> None:
    kvload, server = require_binary("kvload"), require_binary("valkey-server")
    sock = tmp_path / "v.sock"
    proc = subprocess.Popen([server, "--port", "0", "--unixsocket", str(sock), "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        out = tmp_path / "r.json"
        done = subprocess.run([kvload, "-s", str(sock), "-t", "set,get", "-n", "2000",
                               "-r", "100", "-q", "--json", str(out)],
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    report = read_report(out)
    jsonschema.validate(report, schema())
    assert [t["name"] for t in report["tests"]] == ["SET", "GET"]
