"""`kvperf report`'s CLI: paths made absolute, files written, bad input → exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvperf.cli.main import main
from tests.unit.pipeline.read.test_report_paths import write_side


def test_report_writes_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_side(tmp_path / "results" / "one")
    monkeypatch.chdir(tmp_path)
    assert main(["report", "results/one", "--json", "r.json"]) == 0
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert json.loads((tmp_path / "r.json").read_text())["kvperf_report"] == 8


@pytest.mark.parametrize("argv", [["report", "nothing"], ["report", "."],
                                  ["report", "results/one", "--markdown", "x.md"]])
def test_bad_input_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    write_side(tmp_path / "results" / "one")
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert "kvperf:" in capsys.readouterr().err
