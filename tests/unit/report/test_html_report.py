"""The HTML page (report/html.py) and its SVG primitives (report/svg.py): self-contained
(no scripts, links or external URLs), escaped, one chart per section as expected."""

from __future__ import annotations

import re

from kvperf.report import svg
from kvperf.report.html import render
from kvperf.report.model import build
from tests.unit.report.report_rows import side, with_pipeline_1


def test_the_page_is_self_contained() -> None:
    page = render(build([side("A", 1.0), side("B", 1.1)]))
    assert "<script" not in page and "<link" not in page and "@import" not in page
    urls = set(re.findall(r"(?:src|href)=\"([^\"]*)\"", page)) | set(
        re.findall(r"url\(", page))
    assert urls == set()
    assert set(re.findall(r"https?://[^\"' )]+", page)) == {"http://www.w3.org/2000/svg"}
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg"') == 1 + 3 + 2
    assert "A/B comparison: B / A" in page and "Latency percentile spectrum" in page


def test_sweeps_get_an_rps_and_a_p99_chart_per_key_and_side() -> None:
    plain = render(build([side("A", 1.0)]))
    assert "<h2>Sweeps</h2>" not in plain
    page = render(build([with_pipeline_1(side("A", 1.0)), with_pipeline_1(side("B", 1.1))]))
    assert "<h2>Sweeps</h2>" in page and "P (pipeline) · B" in page
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg"') == \
        plain.count("<svg") + 1 + 2 + 2 * 2  # forest plot, P=1 spectra, two charts per side
    assert "requests/s against P" in page and "p99 latency against P" in page
    assert "4.00" in page  # SET's speed-up P=16 over P=1


def test_text_is_escaped() -> None:
    source = side("<b>x</b>", 1.0)
    page = render(build([source]))
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_a_run_without_histograms_says_so() -> None:
    source = side("A", 1.0)
    page = render(build([type(source)(source.name, source.path, source.rows,
                                      lambda row: None)]))
    assert "No HDR histograms" in page and page.count("<svg") == 3


def test_nice_ticks_cover_the_range() -> None:
    assert svg.nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
    assert svg.nice_ticks(0.0, 230_000.0)[-1] == 200_000.0


def test_log_scale() -> None:
    scale = svg.Scale(1.0, 100.0, 0.0, 200.0, log=True)
    assert (scale(1.0), scale(10.0), scale(100.0)) == (0.0, 100.0, 200.0)
    assert scale(0.0) == 0.0  # below the domain: clamped, never a math error


def test_a_side_whose_trials_all_failed_still_renders() -> None:
    base, new = side("A", 1.0), side("B", 1.0, status="failed", error="no server")
    report = build([base, new])
    page = render(report)
    assert report.comparison is not None and report.comparison.rows == []
    assert "No series with ok rows on both sides." in page
    assert "6 of 6 trials failed (first: no server)" in page
