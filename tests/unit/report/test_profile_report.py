"""The artifact and top-CPU tables of a profiled run (terminal and markdown)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from kvperf.report.profile import (
    EXCLUDED_NOTE,
    artifact_rows,
    markdown,
    notes,
    terminal_tables,
    top_rows,
)


def _row(profile: dict[str, Any] | None) -> dict[str, Any]:
    return {"label": "p", "command": "SET", "data_size": 3, "pipeline": 1, "clients": 4,
            "run": 1, "profile": profile}


PROFILE = {"profiler": "perf", "event": "cpu-clock", "note": "user-space stacks only",
           "nodes": [{"node": 0, "files": {"perf.data": "t/perf-node0.data",
                                           "flamegraph": "t/perf-node0.svg"},
                      "top_symbols": [{"name": "setCommand", "self_pct": 12.5,
                                       "space": "user"}],
                      "top_dsos": [{"name": "[kernel.kallsyms]", "self_pct": 80.0}]}]}


def test_one_line_per_artifact_and_none_for_unprofiled_rows() -> None:
    rows = [_row(PROFILE), _row(None)]
    assert artifact_rows(rows) == [
        ["p SET d=3 P=1 c=4 run 1", "perf cpu-clock", "0", "perf.data", "t/perf-node0.data"],
        ["p SET d=3 P=1 c=4 run 1", "perf cpu-clock", "0", "flamegraph", "t/perf-node0.svg"]]
    assert top_rows(rows) == [["p SET d=3 P=1 c=4 run 1", "0", "setCommand 12.5%",
                               "[kernel.kallsyms] 80.0%"]]
    assert notes(rows) == [EXCLUDED_NOTE, "user-space stacks only"]


def test_nothing_profiled_renders_nothing() -> None:
    rows = [_row(None)]
    assert terminal_tables(rows) == [] and markdown(rows) == "" and notes(rows) == []


def test_markdown_and_terminal_show_bracketed_names() -> None:
    text = markdown([_row(PROFILE)])
    assert "| test | profiler | node | artifact | file |" in text
    assert "| p SET d=3 P=1 c=4 run 1 | perf cpu-clock | 0 | flamegraph | t/perf-node0.svg |" \
        in text
    assert f"- {EXCLUDED_NOTE}" in text
    console = Console(width=200, record=True)
    for table in terminal_tables([_row(PROFILE)]):
        console.print(table)
    assert "[kernel.kallsyms] 80.0%" in console.export_text()


def test_a_definition_row_is_named_without_missing_parameters() -> None:
    row = {**_row(PROFILE), "command": "string-get", "data_size": None, "pipeline": None,
           "clients": None}
    assert artifact_rows([row])[0][0] == "p string-get run 1"
