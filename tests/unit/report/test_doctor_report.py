"""Doctor output: the table shows every fact with its status and hint; JSON is versioned."""

from __future__ import annotations

import json

from rich.console import Console

from kvperf.report.doctor import JSON_FORMAT, doctor_json, doctor_table, summary
from kvperf.server.fact import Fact, Section, missing, unknown

SECTIONS = [
    Section("Servers", (
        Fact("valkey_server", "valkey-server", {"version": "8.0.1"},
             "valkey 8.0.1 (TLS) [default] /usr/bin/valkey-server", "ok"),
        missing("redis_server", "redis-server", "install redis-server"))),
    Section("CPU", (
        unknown("governor", "CPU governor", "no cpufreq (a VM)"),
        Fact("smt", "SMT", True, "on (siblings 0,2 1,3)", "warn", "pin [server] apart"))),
]


def test_summary_counts_every_status() -> None:
    assert summary(SECTIONS) == {"ok": 1, "warn": 1, "missing": 1, "unknown": 1}


def test_json_is_versioned_and_keyed_by_fact() -> None:
    doc = doctor_json(SECTIONS, "0.1.0")
    assert (doc["format"], doc["version"], doc["kvperf"]) == (JSON_FORMAT, 1, "0.1.0")
    assert list(doc["facts"]) == ["valkey_server", "redis_server", "governor", "smt"]
    assert doc["facts"]["smt"] == {"section": "CPU", "label": "SMT", "value": True,
                                   "text": "on (siblings 0,2 1,3)", "status": "warn",
                                   "hint": "pin [server] apart"}
    assert doc["facts"]["governor"]["value"] is None
    assert doc["facts"]["governor"]["text"] == "unknown"
    assert json.loads(json.dumps(doc)) == doc


def test_table_shows_sections_values_statuses_and_hints_verbatim() -> None:
    console = Console(width=200, record=True)
    console.print(doctor_table(SECTIONS))
    text = console.export_text()
    lines = text.splitlines()
    assert any("Servers" in ln and "valkey-server" in ln and "[default]" in ln for ln in lines)
    assert any("redis-server" in ln and "✗ missing" in ln and "install redis-server" in ln
               for ln in lines)
    assert any("CPU governor" in ln and "? unknown" in ln for ln in lines)
    assert any("! warn" in ln and "pin [server] apart" in ln for ln in lines)  # not markup
    assert "1 ok, 1 warn, 1 missing, 1 unknown" in text
