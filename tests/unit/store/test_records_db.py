"""Pure parts of the store: row hashing, metric extraction, seed rows, URLs and redaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvperf.core.errors import UsageError
from kvperf.core.redact import redact_urls
from kvperf.store.db import parse_url, redact, resolve_url, scrub
from kvperf.store.history import check_metric, parse_where
from kvperf.store.records import metric_values, row_hash, run_info, trial_values

ROW = {"kvperf_format": 1, "commit": "abc", "label": "L", "command": "SET", "data_size": 16,
       "pipeline": 1, "clients": 10, "requests": 100, "rps": 1000.5, "p99_latency_ms": 0.2,
       "status": "ok", "run": 2, "config_set": {"b": 1, "a": "x"}, "tls": False,
       "server": {"cpu_us_per_request": 3.5, "calls": 100, "flag": True},
       "client": {"latency_ms": {"service": {"p50": 0.1}}, "errors": {"err": 0}},
       "env": {"host": "h1", "pinning": {"server": "0"}}}


def test_row_hash_is_canonical_and_survives_a_json_round_trip() -> None:
    shuffled = dict(reversed(list(ROW.items())))
    assert row_hash(ROW) == row_hash(shuffled) == row_hash(json.loads(json.dumps(ROW)))
    assert row_hash(ROW) != row_hash({**ROW, "rps": 1000.6})


def test_a_rows_auto_stop_added_after_it_was_stored_keeps_its_hash() -> None:
    """--runs auto writes each row's stop into metrics.json once the compare ended: a later
    `db push` of the file must find the rows the run stored, not new ones."""
    stopped = {**ROW, "auto": {"rounds": 4, "stop": "decided", "verdict": "regression"}}
    assert row_hash(stopped) == row_hash(ROW)


def test_metric_values_flatten_numeric_leaves_only() -> None:
    assert metric_values(ROW) == {"rps": 1000.5, "p99_latency_ms": 0.2,
                                  "server.cpu_us_per_request": 3.5, "server.calls": 100.0,
                                  "client.latency_ms.service.p50": 0.1,
                                  "client.errors.err": 0.0}
    assert metric_values({"rps": float("nan"), "avg_latency_ms": None}) == {}


def test_a_client_harness_s_peak_rss_and_allocations_are_stored_metrics() -> None:
    harness = {"max_rss_kib": 70_000, "ops": 5, "accounting": {"get": {"server": 5}},
               "allocations": {"per_op": 1.25, "unit": "blocks", "source": "x"}}
    assert metric_values({"rps": 1.0, "harness": harness}) == {
        "rps": 1.0, "harness.max_rss_kib": 70_000.0,
        "harness.allocations_per_op.blocks": 1.25}
    assert metric_values({"harness": {**harness, "allocations": None}}) == {
        "harness.max_rss_kib": 70_000.0}
    wired = {"process_cpu_us_per_op": 30.5, "wire": {"calls_per_read": 9.6, "reads": 10}}
    assert metric_values({"harness": wired}) == {  # format 10
        "harness.process_cpu_us_per_op": 30.5, "harness.calls_per_read": 9.6}


def test_seed_row_defaults() -> None:
    seed = {"timestamp": "2025-05-28T01:29:42+02:00", "commit": "ff71", "command": "SET",
            "data_size": 16, "cluster_mode": "yes", "rps": 5.0}
    values = trial_values(seed, "ff71")
    assert values["status"] == "ok" and values["revision"] == "ff71"
    assert values["cluster_mode"] is True and values["run_index"] is None
    assert values["timestamp"].isoformat() == "2025-05-27T23:29:42+00:00"
    no_commit = trial_values({**seed, "commit": None}, "dir-label")
    assert no_commit["revision"] == "dir-label" and no_commit["commit_sha"] is None


def test_a_profiled_row_is_stored_as_profiled_never_ok() -> None:
    """history and metric_summary read only status 'ok': profiled timings stay out."""
    assert trial_values({**ROW, "profile": {"nodes": []}}, None)["status"] == "profiled"
    assert trial_values({**ROW, "profile": None}, None)["status"] == "ok"
    failed = {**ROW, "status": "failed", "profile": {"nodes": []}}
    assert trial_values(failed, None)["status"] == "failed"


def test_config_set_is_canonical_text() -> None:
    assert trial_values(ROW, None)["config_set"] == '{"a":"x","b":1}'


def test_run_identity_pushed_vs_live() -> None:
    pushed = run_info(ROW, "/r/m.json", None, None)
    assert pushed.key == run_info(ROW, "/r/m.json", None, None).key
    assert pushed.key != run_info(ROW, "live", None, None, salt="t-1").key
    assert pushed.host == "h1" and pushed.env == {"host": "h1"}


def test_urls_map_to_psycopg_3_and_sqlite(tmp_path: Path) -> None:
    assert parse_url("postgresql://u:p@h:5/d").drivername == "postgresql+psycopg"
    assert parse_url("postgres://u@h/d").drivername == "postgresql+psycopg"
    assert parse_url("sqlite:///x.db").database == "x.db"
    assert parse_url(str(tmp_path / "f.db")).database == str(tmp_path / "f.db")
    assert resolve_url(None, tmp_path, {}).database == str(tmp_path / "kvperf.db")
    assert resolve_url(None, tmp_path, {"KVPERF_DB": "postgresql://h/d"}).host == "h"
    with pytest.raises(UsageError, match=r"mysql://u:\*\*\*@h/d"):
        parse_url("mysql://u:secret@h/d")


def test_passwords_are_redacted_everywhere() -> None:
    url = parse_url("postgresql://user:hunter2@db.example:5432/perf")
    assert redact(url) == "postgresql+psycopg://user:***@db.example:5432/perf"
    assert "hunter2" not in redact_urls("postgresql://user:hunter2@host/db")
    assert scrub("auth failed for hunter2", url) == "auth failed for ***"


def test_where_is_typed_and_validated() -> None:
    assert parse_where(["command=SET", "pipeline=16", "tls=no", "io-threads=none"]) == {
        "command": "SET", "pipeline": 16, "tls": False, "io_threads": None}
    assert parse_where(['config_set={"b": 1, "a": 2}']) == {"config_set": '{"a":2,"b":1}'}
    with pytest.raises(UsageError, match="did you mean 'data_size'"):
        parse_where(["datasize=16"])
    with pytest.raises(UsageError, match="expected key=value"):
        parse_where(["command"])
    with pytest.raises(UsageError, match="expected yes/no"):
        parse_where(["tls=maybe"])


def test_metric_names() -> None:
    assert check_metric("server.usec_per_call") == "server.usec_per_call"
    with pytest.raises(UsageError, match="did you mean 'p99_latency_ms'"):
        check_metric("p99_latency")
