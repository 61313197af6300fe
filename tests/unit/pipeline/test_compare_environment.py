"""compare's outcome carries the environment diff of its sides, and writes it into the
markdown report (--output) when something differs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvperf.pipeline.commands.compare import Compared, with_environment
from kvperf.pipeline.sides.ab import SidesResult


def _row(side: str, governor: str) -> Any:
    return {"side": side, "status": "ok", "env": {"governor": governor, "host": "m"}}


def test_the_sides_environment_diff_and_the_markdown(tmp_path: Path) -> None:
    rows = {"A": [_row("A", "performance")], "B": [_row("B", "powersave")]}
    report = tmp_path / "ab.md"
    report.write_text("# compare\n")
    found = Compared("pair", ("A x", "B y"), {}, [], rows["A"] + rows["B"], "d", 1, 0, 0,
                     report=report, result=SidesResult(rows, 1))
    (fact,) = found.environment.facts
    assert fact.fact == "governor" and fact.warning
    with_environment(found)
    text = report.read_text()
    assert text.startswith("# compare\n") and "| governor | performance | powersave |" in text


def test_without_a_sides_result_the_rows_are_grouped_by_side() -> None:
    rows = [_row("A", "performance"), _row("B", "powersave"), _row("B", "powersave")]
    found = Compared("definitions", ("A", "B"), {}, [], rows, "d", 1, 0, 0)
    assert found.environment.sides == ("A", "B")
    assert [f.fact for f in found.environment.facts] == ["governor"]
    same = Compared("definitions", ("A", "B"), {}, [], rows[1:], "d", 1, 0, 0)
    assert not same.environment
