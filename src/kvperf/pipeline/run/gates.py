"""KPI gates wired into a run: the gates of the command line and of the config parsed and
matched against the planned series before any server starts (exit 2), judged on the run's
rows after every trial ran, and written to ``gates.json`` beside metrics.json."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kvperf.analysis.gates import (
    Gate,
    GateResult,
    check_series,
    judge,
    kpi_results,
    parse_gate,
)
from kvperf.config.model import BenchmarkSpec
from kvperf.core.errors import ConfigError, StoreError, UsageError
from kvperf.plan.trial import Trial
from kvperf.report.gates import gates_document
from kvperf.results.row import Row, RunContext, TrialOutcome, build_row, trial_series
from kvperf.store.files import read_rows, write_json_atomic

GATES_FILE = "gates.json"


@dataclass(frozen=True)
class GatePlan:
    """The run's gates and, for relative ones, the baseline run's rows."""

    gates: list[Gate]
    baseline: list[Row] | None = None
    baseline_path: Path | None = None


def config_gates(specs: list[BenchmarkSpec], source: str) -> list[Gate]:
    """The ``gates`` of every config object (ConfigError naming the object's gate)."""
    gates = []
    for spec in specs:
        for text in spec.gates:
            try:
                gates.append(parse_gate(text))
            except UsageError as exc:
                raise ConfigError(f"{source}: object {spec.index}: 'gates': {exc}") from None
    return gates


def read_baseline(path: Path) -> list[Row]:
    """A baseline run's rows: its results directory (with metrics.json) or the file."""
    file = path / "metrics.json" if path.is_dir() else path
    if not file.is_file():
        raise UsageError(f"--baseline {str(path)!r}: no such results directory or "
                         "metrics.json (give an earlier run's <results-dir>/<label>)")
    try:
        return read_rows(file)
    except StoreError as exc:
        raise UsageError(f"--baseline {str(path)!r}: {exc}") from None


def planned_rows(trials: list[Trial], context: RunContext,
                 client_sets: list[tuple[Trial, dict[str, str] | None]] | None = None
                 ) -> list[Row]:
    """The rows the plan will write, unmeasured: the series gates are matched against
    (``client_sets``: a --client run's works, each trial with its client's config_set)."""
    now = datetime.now(UTC)
    if client_sets is None:
        return [build_row(trial_series(t), context, TrialOutcome(), now) for t in trials]
    rows = []
    for trial, extra in client_sets:
        series = trial_series(trial)
        if extra is not None:
            series["config_set"] = {**(series["config_set"] or {}), **extra}
        rows.append(build_row(series, context, TrialOutcome(), now))
    return rows


def plan_gates(texts: tuple[str, ...], baseline: Path | None, specs: list[BenchmarkSpec],
               source: str, trials: list[Trial], context: RunContext,
               client_sets: list[tuple[Trial, dict[str, str] | None]] | None = None
               ) -> GatePlan | None:
    """Every gate parsed and matched to planned series (exit 2 before any server)."""
    gates = [parse_gate(t) for t in texts] + config_gates(specs, source)
    if not gates:
        if baseline is not None:
            raise UsageError("--baseline needs --commits (the refs to compare with it), or "
                             "gates: without --commits it is the run relative gates "
                             "(--gate \"SET.rps>=0.95*baseline\") are measured against")
        return None
    rows = read_baseline(baseline) if baseline is not None else None
    check_series(gates, planned_rows(trials, context, client_sets), rows)
    return GatePlan(gates, rows, baseline)


def finish_gates(plan: GatePlan, rows: list[Row], out_dir: Path) -> list[GateResult]:
    """The gates judged on the run's rows, written to ``<out_dir>/gates.json``."""
    results = judge(plan.gates, rows, plan.baseline)
    write_json_atomic(out_dir / GATES_FILE, gates_document(results))
    return results


def write_kpi_gates(rows: list[Row], out_dir: Path) -> bool:
    """A definitions run's KPIs as ``<out_dir>/gates.json`` (when any test has KPIs)."""
    results = kpi_results(rows)
    if results:
        write_json_atomic(out_dir / GATES_FILE, gates_document(results))
    return bool(results)
