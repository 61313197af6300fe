"""`kvperf compare-results BASELINE NEW`: two metrics.json files (kvperf's or the seed
system's) judged unpaired — grouped by their parameters, each change with its ratio, CI,
adjusted p and verdict, or against --water-line when a side has one value. ``compare_results``
reads and judges them (pipeline/read/stored.py), writes the markdown report (--output) and
the graphs (--graphs), and returns what the CLI shows with the exit status and what differs
between the two files' environments (analysis/envdiff.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvperf.analysis.comparison import MetricComparison
from kvperf.analysis.envdiff import EnvDiff
from kvperf.analysis.sequential import SeriesStop
from kvperf.analysis.verdict import Verdict
from kvperf.pipeline.commands.checks import water_line_rule
from kvperf.pipeline.read.stored import compare_files
from kvperf.pipeline.request.stored import CompareResultsRequest


def compare_results_request(*, baseline: Path, new: Path, metrics: str, output: Path | None,
                            graphs: Path | None, fail_on_regression: bool, water_line: float
                            ) -> CompareResultsRequest:
    return CompareResultsRequest(baseline, new, water_line_rule(water_line), metrics, output,
                                 graphs, fail_on_regression)


@dataclass(frozen=True)
class ComparedResults:
    """The judged rows and the two files' names (baseline, new); the markdown report and
    the graphs' directory with the graphs written, when asked; 1 with --fail-on-regression
    when a row is a regression."""

    results: list[MetricComparison]
    names: tuple[str, str]
    report: Path | None
    graphs: Path | None
    written: list[Path]
    exit_code: int
    environment: EnvDiff
    stops: list[SeriesStop]  # the rows' --runs auto stops (Row.auto)


def compare_results(request: CompareResultsRequest) -> ComparedResults:
    compared = compare_files(request)
    names = (str(request.baseline), str(request.new))
    if request.output:
        request.output.write_text(compared.markdown)
    written: list[Path] = []
    if request.graphs:
        from kvperf.report.graphs import write_graphs  # matplotlib: only when drawing

        written = write_graphs(compared.results, request.graphs, names)
    regressed = any(r.decision.verdict is Verdict.REGRESSION for r in compared.results)
    return ComparedResults(compared.results, names, request.output, request.graphs, written,
                           1 if regressed and request.fail_on_regression else 0,
                           compared.environment, compared.stops)
