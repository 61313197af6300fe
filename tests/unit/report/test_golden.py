"""Every renderer of report/ against a golden file: a change in what users read shows up as
a diff in review. Inputs are fixed synthetic results (seeded), rendered without colour at a
fixed width. After a deliberate change: KVPERF_UPDATE_GOLDEN=1 pytest tests/unit/report."""

from __future__ import annotations

import io
import json
import os
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kvperf.analysis.comparison import compare, compare_paired
from kvperf.analysis.gates import judge, parse_gates
from kvperf.analysis.noise import noise_rows
from kvperf.analysis.regressions import CommitValue, Finding
from kvperf.analysis.sweeps import sweeps
from kvperf.report.comparison import markdown, terminal_table
from kvperf.report.gates import gates_document, gates_table
from kvperf.report.history import change_table, history_table, index
from kvperf.report.noise import noise_table
from kvperf.report.regressions import finding_json, findings_table
from kvperf.report.sweeps import sweep_tables
from kvperf.report.track import jobs_table
from kvperf.store.history import Cell, Revision
from kvperf.store.track import Job

GOLDEN = Path(__file__).parent / "golden"
WHEN = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("KVPERF_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden file {path}: run with KVPERF_UPDATE_GOLDEN=1 once"
    assert text == path.read_text(), f"{name} changed; if deliberate, KVPERF_UPDATE_GOLDEN=1"


def _text(table: Table) -> str:
    console = Console(width=160, record=True, color_system=None, file=io.StringIO())
    console.print(table)
    return console.export_text()


def _rows(side: str, command: str, rps: float, cv: float, seed: int, n: int = 6
          ) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for run in range(1, n + 1):
        value = rps * (1 + rng.gauss(0, cv))
        out.append({"status": "ok", "command": command, "data_size": 16, "pipeline": 1,
                    "clients": 50, "requests": 100_000, "run": run, "trial_id": command,
                    "rps": value, "avg_latency_ms": 50_000 / value,
                    "p50_latency_ms": 49_000 / value, "p99_latency_ms": 1.0 + rng.random() / 50,
                    "server": {"cpu_us_per_request": 1e6 / value * 2}, "side": side})
    return out


def _sides() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    a = _rows("A", "SET", 100_000, 0.01, 1) + _rows("A", "GET", 120_000, 0.01, 2)
    b = _rows("B", "SET", 90_000, 0.01, 3) + _rows("B", "GET", 120_000, 0.01, 4)
    return a, b


def test_comparison_markdown_and_terminal() -> None:
    a, b = _sides()
    results, unmatched = compare(a, b, "all")
    _check("comparison.md", markdown(results, unmatched, "base", "new"))
    _check("comparison-paired.txt", _text(terminal_table(compare_paired(a, b, "all"),
                                                         "A base", "B new")))


def test_noise_table() -> None:
    a = _rows("A", "SET", 100_000, 0.02, 5) + _rows("A", "GET", 120_000, 0.02, 6)
    b = _rows("B", "SET", 100_000, 0.02, 7) + _rows("B", "GET", 120_000, 0.02, 8)
    rows = noise_rows(compare_paired(a, b, "all"))
    _check("noise.txt", _text(noise_table(rows, "A/A noise · valkey-8.1.1 · kvload · 6 rounds")))


def _finding(metric: str, before: float, after: float) -> Finding:
    return Finding("0123456789abcdef", {"command": "SET", "data_size": 64, "pipeline": 16,
                                        "clients": 50, "tls": True}, metric,
                   "regression" if after < before else "improvement", after / before - 1,
                   0.0004, before, after, CommitValue("a" * 40, WHEN, before, 3),
                   CommitValue("b" * 40, WHEN, after, 3))


def test_regressions_table_and_json() -> None:
    findings = [_finding("rps", 500_000.0, 440_000.0), _finding("rps", 100.0, 112.0)]
    _check("regressions.txt", _text(findings_table(findings)))
    _check("regressions.json", json.dumps([finding_json(f) for f in findings], indent=2) + "\n")


def test_history_tables() -> None:
    cells = [Cell("k1", rev, "rps", 3, mean, mean * 0.01)
             for rev, mean in (("c" * 40, 400_000.0), ("d" * 40, 380_000.0))]
    revisions = [Revision("c" * 40, WHEN), Revision("d" * 40, WHEN)]
    fields = {"command": "SET", "data_size": 3, "pipeline": 1, "clients": 50}
    found = index(cells)
    _check("history.txt", _text(history_table("k1", fields, revisions, found, ["rps"])))
    _check("history-change.txt", _text(change_table("k1", fields, "c" * 40, "d" * 40, found,
                                                    ["rps"], {"rps": "regression"})))


def test_track_jobs_table() -> None:
    jobs = [Job(1, "/repo", "e" * 40, "f" * 64, "perf.json", "x86_64", "claimed", 1, 3,
                "runner-1", WHEN, WHEN, None),
            Job(2, "/repo", "1" * 40, "f" * 64, None, "x86_64", "failed", 3, 3, None, None,
                WHEN, "build failed: error: expected ';'")]
    _check("track-jobs.txt", _text(jobs_table(jobs)))



def _sweep_rows() -> list[dict[str, Any]]:
    rows = []
    for command, base in (("SET", 100_000.0), ("GET", 120_000.0)):
        for pipeline, gain in ((1, 1.0), (10, 3.5), (100, 6.0)):
            rows += [{"status": "ok", "command": command, "data_size": 100,
                      "pipeline": pipeline, "clients": 50, "duration": 1, "run": run,
                      "rps": base * gain * (1 + 0.01 * run),
                      "p99_latency_ms": 0.3 * pipeline ** 0.5} for run in (1, 2)]
    return rows


def test_sweep_and_gate_tables() -> None:
    rows = _sweep_rows()
    _check("sweeps.txt", "".join(_text(t) for t in sweep_tables(sweeps(rows))))
    results = judge(parse_gates(["SET.rps>=300000", "GET P=100.p99_latency_ms<=2",
                                 "SET P=1.rps>=1.05*baseline"]), rows, rows[:2])
    _check("gates.txt", _text(gates_table(results)))
    _check("gates.json", json.dumps(gates_document(results), indent=2) + "\n")
