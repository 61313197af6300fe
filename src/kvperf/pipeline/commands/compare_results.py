"""The commands over stored results — history, regressions, report, compare-results, track,
db — and doctor and suites: one request each, checked before a file is read, a database
opened or the machine probed."""

from __future__ import annotations

from pathlib import Path

from kvperf.pipeline.commands.checks import water_line_rule
from kvperf.pipeline.request.stored import CompareResultsRequest


def compare_results_request(*, baseline: Path, new: Path, metrics: str, output: Path | None,
                            graphs: Path | None, fail_on_regression: bool, water_line: float
                            ) -> CompareResultsRequest:
    return CompareResultsRequest(baseline, new, water_line_rule(water_line), metrics, output,
                                 graphs, fail_on_regression)
