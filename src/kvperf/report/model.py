"""What the HTML report shows, as numbers: built from result rows (pure) and dumped as the
versioned ``--json`` report.

JSON versions (``kvperf_report``):
  1 — first version: ``sources`` (one per side: name, path, provenance, rows, failed,
      warnings), ``series`` (per side per series: rps and p50/p99 per run, summaries,
      latency percentiles from merged histograms), ``spectra`` (per side per series: the
      percentile spectrum of the merged corrected and service histograms), ``comparison``
      (null for one side: base, new, paired, one row per series and metric with ratio, 95% CI,
      p-values and verdict).
  2 — adds ``artifacts``: the files of profiled trials (``--profile``; one per side, test,
      profiler, node and artifact, the file relative to the current directory as the side's
      path is), empty when nothing was profiled.
  3 — adds ``sweeps``: per side and swept key (a series field with several values;
      analysis/sweeps.py) the key, its label, its values and per line (the series equal but
      for the key) each value's runs, mean rps, mean p99 and speed-up over the line's first.
  4 — N-server comparisons: ``comparisons`` (one per non-baseline side against the first,
      judged together: the correction covers all N − 1 of them; ``comparison`` stays the
      first of them, null for one side), ``base_label`` / ``new_label`` on each comparison
      and ``label`` on each source (the rows' ``side_label``: ``valkey 8.0.1``; else the
      name).
  5 — interference: ``disturbed`` (one per disturbed trial: side, series, run, the share of
      the watched CPU other processes took, the cause, excluded, attempt) and
      ``disturbed_runs`` on each series (the runs, as numbered in its ``rps``, that were
      disturbed); excluded trials (--exclude-disturbed) are left out of the series.
  6 — adds ``clients``: client libraries (``run --client``, ``compare --client``;
      analysis/clients.py), one per side, client and workload: runs, median rps and its
      per-run values and 95% interval, p50/p99/p99.9 from merged histograms, client and
      server CPU per operation, peak RSS, allocations, and the ratios to kvload on the same
      workload; empty when no client ran. And ``rate_sweeps`` (``run --rate-sweep``;
      analysis/rate_curve.py): per side and swept series its closed-loop saturation rps per
      round, its points (step, target and achieved rps, corrected and service latency
      percentiles from the rounds' merged histograms), the knee (index, reached, bound,
      metric, reason, which points broke), each round's knee rps and the rule; empty without
      a sweep. Sweep points are left out of ``sweeps`` (the swept keys). ``knees``: for two
      sides that both swept, per series each side's knee rps (geometric mean over rounds),
      B/A with its interval and method (paired t for one interleaved run) and the verdict
      rule's verdict and reason.
  7 — client lines (``clients``) add ``latency`` (``corrected`` for kvload's, ``uncorrected``
      for a closed-loop harness's: call to result, coordinated omission not corrected),
      ``process_cpu_us`` (the harness's process tree per operation, wait4: start-up and
      warmup included; ``client_cpu_us`` is now the measured window's), ``calls_per_read``
      and ``batching`` (the server's calls per read over the harness's run and
      clients/wire.py's verdict). ``spectra`` add ``latency``: ``corrected`` (with the
      service spectrum beside it) or ``uncorrected`` (a client harness's series: its only
      histogram, no service spectrum).
  8 — adds ``environment`` (null for one side): the sides (names) and the environment facts
      that differ between them (analysis/envdiff.py: fact, a value per side, whether it
      varies within a side, the warning when it is known to move results, a note). Each
      source's ``provenance`` adds ``smt``, ``turbo``, ``mitigations``, ``microcode``,
      ``kvperf`` and ``build`` (a kvperf build's make arguments, compiler and flags).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram

from kvperf.analysis.clients import ClientLine, client_lines
from kvperf.analysis.comparison import (
    GroupKey,
    MetricComparison,
    compare,
    compare_paired,
    compare_sides,
    describe_group,
    group_rows,
    pair_runs,
)
from kvperf.analysis.envdiff import EnvDiff, rows_env_diff
from kvperf.analysis.paired import cv
from kvperf.analysis.rate_curve import Curve, compare_knees, curves
from kvperf.analysis.sweeps import Sweep, sweeps
from kvperf.core.jsontypes import JsonObject
from kvperf.report.comparison import VERDICT_MARK, verdict_text
from kvperf.report.profile import artifact_rows
from kvperf.results.histogram import HistogramFile, merged_latency, merged_runs
from kvperf.results.row import Row, field_of, is_disturbed, is_excluded, is_ok

REPORT_VERSION = 8
HIGH_CV = 0.10  # pyperf's rule of thumb: spread beyond 10% of the mean is a warning
# The spectrum's quantiles: 1/(1-q) = 10^(k/10), k = 0…50, i.e. p0 … p99.999, evenly spaced
# on the log-scaled "1/(1-q)" axis.
SPECTRUM_QUANTILES = tuple(100 * (1 - 10 ** (-k / 10)) for k in range(51))
PROVENANCE_KEYS = ("host", "kernel", "arch", "cpu", "cpus", "governor", "smt", "turbo",
                   "mitigations", "microcode", "python", "kvperf", "tool", "server_binary",
                   "server_source", "quick")

Histograms = Callable[[Row], HistogramFile | None]


@dataclass(frozen=True)
class Source:
    """One side's input: its name, where it came from, its rows and its histogram reader."""

    name: str
    path: str
    rows: list[Row]
    histograms: Histograms


@dataclass(frozen=True)
class Warning:
    """A noise warning with what to do about it."""

    kind: str
    message: str
    hint: str


@dataclass(frozen=True)
class SourceSummary:
    name: str
    label: str
    path: str
    provenance: dict[str, str | None]  # values as text; several distinct ones joined by ", "
    rows: int
    failed: int
    warnings: list[Warning]


@dataclass(frozen=True)
class SeriesStats:
    """One series of one side over its ok runs (latency in ms)."""

    side: str
    series: str
    runs: int
    rps: list[float]
    rps_median: float
    rps_cv: float
    p50_ms: list[float]
    p99_ms: list[float]
    latency_ms: dict[str, float]  # p50/p99/p99_9 of the merged histograms (or run medians)
    latency_source: str  # "merged histograms" | "median of runs"
    disturbed_runs: list[int] = field(default_factory=list)  # 1-based, as ``rps`` lists them


@dataclass(frozen=True)
class DisturbedTrial:
    """A trial other processes disturbed (the row's ``interference``)."""

    side: str
    series: str
    run: int | None
    foreign_share: float
    cause: str
    excluded: bool
    attempt: int


@dataclass(frozen=True)
class Spectrum:
    """Percentile → latency (ms) of one side's series, corrected and service."""

    side: str
    series: str
    runs: int
    percentiles: list[float]
    corrected_ms: list[float]  # the latency shown (``latency`` says which kind)
    service_ms: list[float] | None
    latency: str = "corrected"  # or "uncorrected": a closed-loop harness's histogram


@dataclass(frozen=True)
class ComparisonRow:
    series: str
    metric: str
    base_mean: float
    new_mean: float
    change: float
    ratio: float
    low: float
    high: float
    method: str
    p: float
    p_adjusted: float
    verdict: str
    reason: str  # what would settle it, why unstable, or the water line (may be empty)


@dataclass(frozen=True)
class Comparison:
    base: str
    new: str
    paired: bool
    rows: list[ComparisonRow]
    unmatched: list[str]
    base_label: str = ""
    new_label: str = ""


@dataclass(frozen=True)
class Artifact:
    """One file of a profiled trial (the artifact table's line, with its side)."""

    side: str
    test: str
    profiler: str
    node: str
    artifact: str
    file: str


@dataclass(frozen=True)
class SideSweep:
    """One side's sweep of one key (analysis/sweeps.Sweep)."""

    side: str
    sweep: Sweep


@dataclass(frozen=True)
class SideCurve:
    """One side's rate sweep of one series (analysis/rate_curve.Curve)."""

    side: str
    curve: Curve


@dataclass(frozen=True)
class KneeRow:
    """Two sides' knees of one swept series (analysis/rate_curve.KneeComparison)."""

    series: str
    base: str
    new: str
    base_knee_rps: float | None
    new_knee_rps: float | None
    ratio: float
    low: float
    high: float
    method: str
    verdict: str
    reason: str


@dataclass(frozen=True)
class Report:
    sources: list[SourceSummary]
    series: list[SeriesStats]
    spectra: list[Spectrum]
    comparison: Comparison | None = None
    artifacts: list[Artifact] = field(default_factory=list)
    sweeps: list[SideSweep] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    disturbed: list[DisturbedTrial] = field(default_factory=list)
    clients: list[ClientLine] = field(default_factory=list)
    rate_sweeps: list[SideCurve] = field(default_factory=list)
    knees: list[KneeRow] = field(default_factory=list)
    environment: EnvDiff | None = None  # two sides or more: what differs (analysis/envdiff)
    version: int = field(default=REPORT_VERSION)


def provenance(rows: list[Row]) -> dict[str, str | None]:
    """Host, versions, pinning and mode of a side, from its rows (distinct values joined)."""
    def values(get: Callable[[Row], Any]) -> str | None:
        seen = list(dict.fromkeys(str(v) for v in map(get, rows) if v not in (None, "", {})))
        return ", ".join(seen) if seen else None

    def env(key: str) -> Callable[[Row], Any]:
        return lambda r: (r.get("env") or {}).get(key)

    out: dict[str, str | None] = {key: values(env(key)) for key in PROVENANCE_KEYS}
    out["server_version"] = values(lambda r: r.get("server_version"))
    out["tool_version"] = values(lambda r: r.get("tool_version"))
    out["commit"] = values(lambda r: r.get("commit"))
    out["revision"] = values(lambda r: r.get("revision"))
    out["measure"] = values(lambda r: r.get("measure"))
    out["pinning"] = values(lambda r: _pinning((r.get("env") or {}).get("pinning")))
    out["build"] = values(lambda r: _build((r.get("env") or {}).get("build")))
    stamps = sorted(str(r["timestamp"]) for r in rows if r.get("timestamp"))
    out["first_trial"], out["last_trial"] = (stamps[0], stamps[-1]) if stamps else (None, None)
    return out


def _build(build: Any) -> str | None:
    """A kvperf build's facts (``env.build``: make arguments, compiler, flags) in a line."""
    if not isinstance(build, dict) or not build:
        return None
    return "; ".join(f"{k}: {v}" for k, v in build.items())


def _pinning(pinning: Any) -> str | None:
    if not isinstance(pinning, dict) or not any(pinning.values()):
        return None
    return " ".join(f"{k}={v}" for k, v in sorted(pinning.items()) if v)


def warnings(rows: list[Row], series: list[SeriesStats]) -> list[Warning]:
    """Noise warnings of one side: failed trials, client saturation, disturbed trials, quick
    mode, high CV, CPU governor."""
    out: list[Warning] = []
    failed = [r for r in rows if not is_ok(r)]
    if failed:
        out.append(Warning("failed_trials", f"{len(failed)} of {len(rows)} trials failed "
                           f"(first: {failed[0].get('error') or 'no error recorded'})",
                           "see logs.txt and the trial's logs; failed trials are left out"))
    saturated = sum(1 for r in rows if r.get("client_saturated"))
    if saturated:
        out.append(Warning("client_saturated", f"the load tool saturated its CPU in "
                           f"{saturated} trial(s): it, not the server, may set the rate",
                           "give the tool more threads or cores (client_cpu_range)"))
    disturbed = [r for r in rows if is_disturbed(r)]
    if disturbed:
        first = (disturbed[0].get("interference") or {}).get("cause")
        excluded = sum(1 for r in disturbed if is_excluded(r))
        out.append(Warning("disturbed", f"other processes disturbed {len(disturbed)} of "
                           f"{len(rows)} trials (first: {first}); {excluded} excluded",
                           "quiet the machine, pin elsewhere (server_cpu_range / "
                           "client_cpu_range) or rerun; --retry-disturbed reruns them, "
                           "--exclude-disturbed leaves them out"))
    if any((r.get("env") or {}).get("quick") for r in rows):
        out.append(Warning("quick_mode", "KVPERF_QUICK=1: 0.5 s trials, no warmup, ≤ 2 rounds",
                           "a smoke test, not a measurement: rerun without KVPERF_QUICK"))
    for s in series:
        if s.runs > 1 and s.rps_cv >= HIGH_CV:
            out.append(Warning("high_cv", f"{s.series}: rps CV {s.rps_cv:.1%} over {s.runs} "
                               "runs", "pin the server and client (kvperf doctor) and add runs"))
    governors = {str(g) for r in rows if (g := (r.get("env") or {}).get("governor"))
                 and g not in ("performance", "unknown")}
    if governors:
        out.append(Warning("cpu_governor", f"CPU governor {', '.join(sorted(governors))}",
                           "set the governor to performance for stable clocks"))
    return out


def _latency(group: list[Row], loaded: list[HistogramFile | None]
             ) -> tuple[dict[str, float], str]:
    merged = merged_latency(loaded)
    if merged is not None:
        hist, scale, _ = merged
        return ({name: hist.get_value_at_percentile(q) * scale
                 for name, q in (("p50", 50.0), ("p99", 99.0), ("p99_9", 99.9))},
                "merged histograms")
    med = {name: statistics.median(float(field_of(r, f"{name}_latency_ms")) for r in group)
           for name in ("p50", "p99") if all(field_of(r, f"{name}_latency_ms") for r in group)}
    return med, "median of runs"



def _spectrum(hist: HdrHistogram, scale: float) -> list[float]:
    return [(hist.get_min_value() if q == 0 else hist.get_value_at_percentile(q)) * scale
            for q in SPECTRUM_QUANTILES]


def side_series(source: Source) -> tuple[list[SeriesStats], list[Spectrum]]:
    """Per series of one side: its stats and (with histograms) its spectrum."""
    stats, spectra = [], []
    for key, group in group_rows(source.rows).items():
        group = [r for r in group if r.get("rps") and not is_excluded(r)]
        if not group:
            continue
        name, rps = describe_group(key), [float(r.get("rps") or 0.0) for r in group]
        loaded = [source.histograms(r) for r in group]
        latency, origin = _latency(group, loaded)
        stats.append(SeriesStats(source.name, name, len(group), rps, statistics.median(rps),
                                 cv(rps), _column(group, "p50_latency_ms"),
                                 _column(group, "p99_latency_ms"), latency, origin,
                                 [i for i, r in enumerate(group, 1) if is_disturbed(r)]))
        shown, service = merged_latency(loaded), merged_runs(loaded, "service")
        if shown is not None:  # a closed-loop harness's: its uncorrected latency alone
            spectra.append(Spectrum(source.name, name, len(group), list(SPECTRUM_QUANTILES),
                                    _spectrum(*shown[:2]), _spectrum(*service)
                                    if service and shown[2] == "corrected" else None,
                                    "corrected" if shown[2] == "corrected"
                                    else "uncorrected"))
    return stats, spectra


def _column(group: list[Row], name: str) -> list[float]:
    values = (field_of(r, name) for r in group)
    return [float(v) for v in values if isinstance(v, int | float)]


def interleaved(base: Source, new: Source) -> bool:
    """Whether two sides are the rounds of one interleaved run (compare/noise): rows that
    carry a binary revision on both sides, and rounds that pair by trial_id and run."""
    rows = base.rows + new.rows
    marked = all(r.get("revision") and "trial_id" in r and "run" in r for r in rows)
    return marked and bool(pair_runs(base.rows, new.rows))


def judge_sides(base: Source, new: Source, paired: bool
                ) -> tuple[list[MetricComparison], list[GroupKey]]:
    """Every metric of every shared series through the verdict rule (paired for interleaved
    rounds), and the series on one side only."""
    if paired:
        return compare_paired(base.rows, new.rows), []
    return compare(base.rows, new.rows)


def comparison(base: Source, new: Source, paired: bool) -> Comparison:
    """The A/B comparison as the report shows it."""
    results, unmatched = judge_sides(base, new, paired)
    return Comparison(base.name, new.name, paired, [_comparison_row(c) for c in results],
                      [describe_group(k) for k in unmatched], source_label(base),
                      source_label(new))


def source_label(source: Source) -> str:
    """The side as readers know it: its rows' ``side_label`` (``valkey 8.0.1``), else its
    name."""
    labels = {r.get("side_label") for r in source.rows} - {None}
    return str(labels.pop()) if len(labels) == 1 else source.name


def comparisons(sources: list[Source], paired: bool | None) -> list[Comparison]:
    """Every side after the first against the first: one comparison for two sides, N − 1
    judged together (one correction over all of them) for more."""
    base = sources[0]
    if len(sources) == 2:
        new = sources[1]
        return [comparison(base, new, interleaved(base, new) if paired is None else paired)]
    pairing = (all(interleaved(base, s) for s in sources[1:]) if paired is None
               else paired)
    results = compare_sides({s.name: s.rows for s in sources}, paired=pairing)
    return [Comparison(base.name, s.name, pairing,
                       [_comparison_row(c) for c in results if c.side == s.name], [],
                       source_label(base), source_label(s)) for s in sources[1:]]


def _comparison_row(c: MetricComparison) -> ComparisonRow:
    return ComparisonRow(describe_group(c.group), c.metric, c.base.mean, c.new.mean, c.change,
                         c.ci.ratio, c.ci.low, c.ci.high, c.ci.method, c.p, c.p_adjusted,
                         c.decision.verdict.value, _reason(c))


def _reason(c: MetricComparison) -> str:
    """The verdict's explanation as the terminal shows it, without the verdict's mark."""
    text = verdict_text(c.decision)
    return text.removeprefix(VERDICT_MARK[c.decision.verdict]).strip().strip("()")


def build(sources: list[Source], paired: bool | None = None) -> Report:
    """The report of one side, or of two (A/B: the first is the baseline); ``paired`` None
    decides by ``interleaved``."""
    summaries, series, spectra = [], [], []
    for source in sources:
        stats, spectrum = side_series(source)
        series += stats
        spectra += spectrum
        summaries.append(SourceSummary(
            source.name, source_label(source), source.path, provenance(source.rows),
            len(source.rows),
            sum(1 for r in source.rows if not is_ok(r)), warnings(source.rows, stats)))
    compared = comparisons(sources, paired) if len(sources) > 1 else []
    side_sweeps = [SideSweep(source.name, found) for source in sources
                   for found in sweeps([r for r in source.rows if not is_sweep_point(r)])]
    clients = [replace(line, side=line.side or source.name) for source in sources
               for line in client_lines(source.rows, source.histograms)]
    rate_sweeps = [SideCurve(source.name, curve) for source in sources
                   for curve in curves(source.rows, source.histograms)]
    return Report(summaries, series, spectra, compared[0] if compared else None,
                  artifacts(sources), side_sweeps, compared, disturbed_trials(sources),
                  clients, rate_sweeps, knee_rows(sources, rate_sweeps, paired),
                  rows_env_diff({s.name: s.rows for s in sources}) if len(sources) > 1
                  else None)


def knee_rows(sources: list[Source], found: list[SideCurve], paired: bool | None
              ) -> list[KneeRow]:
    """Two sides that both swept: their knees through the verdict rule (paired by round
    when they are one interleaved run)."""
    if len(sources) != 2:
        return []
    base, new = sources
    pair = interleaved(base, new) if paired is None else paired
    by_side = {s.name: [c.curve for c in found if c.side == s.name] for s in sources}
    return [KneeRow(c.series, base.name, new.name, c.base.interval.mean if c.base.interval
                    else None, c.new.interval.mean if c.new.interval else None,
                    c.ratio.ratio, c.ratio.low, c.ratio.high, c.ratio.method,
                    str(c.decision.verdict), c.decision.reason)
            for c in compare_knees(by_side[base.name], by_side[new.name], paired=pair)]


def is_sweep_point(row: Row) -> bool:
    """An open-loop point of a rate sweep (its swept key is its rate, not a config key)."""
    return (row.get("sweep") or {}).get("role") == "point"


def disturbed_trials(sources: list[Source]) -> list[DisturbedTrial]:
    """Every disturbed trial of every side, in row order."""
    out = []
    for source in sources:
        for key, group in group_rows(source.rows).items():
            for row in group:
                record = row.get("interference") or {}
                if record.get("disturbed"):
                    run = row.get("run")
                    out.append(DisturbedTrial(
                        source.name, describe_group(key), run if isinstance(run, int) else None,
                        float(record.get("foreign_share") or 0.0),
                        str(record.get("cause") or ""), bool(record.get("excluded")),
                        int(record.get("attempt") or 1)))
    return out


def artifacts(sources: list[Source]) -> list[Artifact]:
    """Every profiled trial's files, each path joined to its side's directory."""
    return [Artifact(source.name, test, profiler, node, artifact,
                     str(Path(source.path).parent / file))
            for source in sources
            for test, profiler, node, artifact, file in artifact_rows(source.rows)]


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: they become null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def to_json(report: Report) -> JsonObject:
    """The ``--json`` document (module doc: its versions)."""
    data = asdict(report)
    version = data.pop("version")
    document: JsonObject = _finite({"kvperf_report": version, **data})
    return document
