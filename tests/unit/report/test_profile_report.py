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


def test_the_dso_table_has_a_column_per_top_shared_object_and_the_rest_in_other() -> None:
    from kvperf.report.profile import DSO_TITLE, dso_rows
    dsos = [{"name": f"lib{i}.so", "self_pct": 10.0 - i} for i in range(8)]
    module = {**PROFILE, "dsos": [{"name": "libvalkey_bloom.so", "self_pct": 30.0},
                                  {"name": "valkey-server", "self_pct": 20.0}]}
    plain = {**PROFILE, "dsos": dsos}
    columns, lines = dso_rows([_row(module), _row(None), _row(plain)])
    assert columns == ["test", "libvalkey_bloom.so", "valkey-server", "lib0.so", "lib1.so",
                       "lib2.so", "lib3.so", "other"]
    assert lines[0][1:] == ["30.0%", "20.0%", "0.0%", "0.0%", "0.0%", "0.0%", "0.0%"]
    assert lines[1][1:] == ["0.0%", "0.0%", "10.0%", "9.0%", "8.0%", "7.0%", "18.0%"]
    # a row written before profile.dsos existed: its nodes' top_dsos
    assert dso_rows([_row(PROFILE)]) == (["test", "[kernel.kallsyms]", "other"],
                                         [["p SET d=3 P=1 c=4 run 1", "80.0%", "0.0%"]])
    text = markdown([_row(module)])
    assert f"## {DSO_TITLE}" in text and "| libvalkey_bloom.so |" in text
    console = Console(width=200, record=True)
    for table in terminal_tables([_row(module)]):
        console.print(table)
    assert "libvalkey_bloom.so" in console.export_text()
