"""The instruction comparison as markdown and terminal tables, and the run table."""

from __future__ import annotations

from rich.console import Console

from kvperf.analysis.instructions import compare_instructions
from kvperf.report.instructions import markdown, run_table, terminal_tables


def _row(command: str, run: int, total: float, per_call: float, fn: str,
         tops: dict[str, float]) -> dict[str, object]:
    return {"status": "ok", "command": command, "pipeline": 16, "run": run,
            "instructions": {"total_per_request": total, "command_per_call": per_call,
                             "function": fn, "top_functions": tops,
                             "callgrind_files": ["t/callgrind.out.measure.node0"]}}


A = [_row("SET", r, 5705.0, 2056.8, "setCommand",
          {"aeMain": 5900.0, "call": 2707.0, "setCommand": 2056.8}) for r in (1, 2)]
B = [_row("SET", r, 5801.0, 2152.9, "setCommand",
          {"aeMain": 5996.0, "call": 2803.0, "setCommand": 2152.9}) for r in (1, 2)]


def test_markdown_shows_verdicts_and_moved_functions_most_specific_first() -> None:
    text = markdown(compare_instructions(A, B), "A base", "B slow", 0.005)
    assert text.startswith("## kvperf instructions: `B slow` vs `A base`")
    assert "1 series, 2 metric(s) flagged." in text
    assert "| SET P=16 | instructions/request | 5,705.0 (n=2, spread 0.00%) | " \
           "5,801.0 (n=2, spread 0.00%) | +1.683% | 0.50% | 🔴 regression (no spread between " \
           "runs, no statistics: +1.7% vs the ±0.5% water line) |" in text
    moved = text.split("### SET P=16: inclusive cost moved most")[1].splitlines()
    assert moved[4] == "| setCommand | 2,056.8 | 2,152.9 | +96.1 | +4.67% |"
    assert moved[5].startswith("| call |") and moved[6].startswith("| aeMain |")
    assert "minimum effect (0.5%)" in text


def test_terminal_and_run_tables_render() -> None:
    console = Console(width=200, record=True)
    for table in terminal_tables(compare_instructions(A, B), "A", "B"):
        console.print(table)
    table = run_table(A)
    assert table is not None
    console.print(table)
    out = console.export_text()
    assert "setCommand inclusive/call" in out and "regression" in out
    assert "t/callgrind.out.measure.node0" in out
    assert run_table([{"instructions": None}]) is None
