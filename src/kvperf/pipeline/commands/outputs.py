"""What the commands that run trials write beside their results and hand the CLI to show:
the profile artifacts (``profile.md``), differential flamegraphs, a rate sweep's curves
(``rate_sweep.md``) and two sides' knees (``rate_sweep_knees.md``), the dry run of a sweep.
Each writer returns what it wrote and found, or None when there was nothing to write."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kvperf.analysis.comparison import MetricComparison
from kvperf.analysis.rate_curve import Curve, KneeComparison, compare_knees, curves
from kvperf.analysis.sequential import Looks, SeriesStop, rounds_run, series_of, series_verdicts
from kvperf.analysis.verdict import Rule
from kvperf.core.errors import Interrupted, ServerError, UsageError
from kvperf.pipeline.request.sides import AutoRuns
from kvperf.pipeline.run.flamediff import differentials
from kvperf.pipeline.run.model import Prepared, RunSummary
from kvperf.pipeline.run.rate_sweep import PointWork, SaturationWork, SweepBatch, sweeping
from kvperf.pipeline.run.storage import Persisted
from kvperf.pipeline.sides.ab import SidesResult
from kvperf.plan.sweep import duration_text, trial_seconds
from kvperf.report import profile as profile_report
from kvperf.report import rate_sweep as sweep_report
from kvperf.results.row import AutoStop
from kvperf.results.row import Row as Row  # what the CLI renders
from kvperf.store.files import read_histograms, read_rows, write_json_atomic, write_text_atomic

ARTIFACTS_FILE = "profile.md"
SWEEP_FILE = "rate_sweep.md"
KNEES_FILE = "rate_sweep_knees.md"  # compare --rate-sweep, beside the sides' directories


@dataclass(frozen=True)
class Profiled:
    """A profiled run's rows (their artifact and top-CPU tables) and its ``profile.md``."""

    rows: list[Row]
    path: Path


def profile_artifacts(rows: list[Row], out_dir: Path) -> Profiled | None:
    """``profile.md`` in ``out_dir`` when some row was profiled."""
    if not profile_report.terminal_tables(rows):
        return None
    path = out_dir / ARTIFACTS_FILE
    path.write_text(profile_report.markdown(rows))
    return Profiled(rows, path)


@dataclass(frozen=True)
class Differentials:
    """compare's differential flamegraphs: their artifact lines (appended to the base
    directory's ``profile.md``), or why none could be drawn."""

    lines: list[list[str]]
    error: str | None = None


def differential_flamegraphs(a_rows: list[Row], b_rows: list[Row], dirs: tuple[Path, Path],
                             title: str, kind: str = "profile") -> Differentials | None:
    """One differential flamegraph per series (None when no series had a profile); an
    error leaves the comparison standing without its picture."""
    base = dirs[0].parent
    try:
        made = differentials(a_rows, b_rows, dirs[0], dirs[1], base, title, kind)
    except (ServerError, UsageError) as exc:
        return Differentials([], str(exc))
    if not made:
        return None
    profiler = "callgrind Ir" if kind == "instructions" else "perf cpu-clock"
    lines = profile_report.differential_rows(
        [(d.row, str(d.svg.relative_to(base))) for d in made], profiler)
    with (base / ARTIFACTS_FILE).open("a") as md:
        md.write("\n" + profile_report.markdown_artifacts("Differential flamegraphs", lines))
    return Differentials(lines)


@dataclass(frozen=True)
class Swept:
    """A run's swept series (their curves and knees) and its ``rate_sweep.md``."""

    curves: list[Curve]
    path: Path


def rate_sweeps(rows: list[Row], out_dir: Path, title: str) -> Swept | None:
    """The curve of every swept series, written as ``rate_sweep.md`` (None: no sweep)."""
    found = curves(rows, lambda r: read_histograms(out_dir, r))
    if not found:
        return None
    path = out_dir / SWEEP_FILE
    write_text_atomic(path, sweep_report.markdown(found, title))
    return Swept(found, path)


@dataclass(frozen=True)
class Knees:
    """compare --rate-sweep: each side's curves, their knees judged, the knees' file."""

    sides: tuple[tuple[str, list[Curve]], tuple[str, list[Curve]]]
    knees: list[KneeComparison]
    path: Path


def judge_knees(a_rows: list[Row], b_rows: list[Row], dirs: tuple[Path, Path],
                names: tuple[str, str], rule: Rule) -> Knees | None:
    """Each side's curves (``rate_sweep.md`` in its directory) and their knees judged
    (``rate_sweep_knees.md`` beside); None when neither side swept."""
    base = curves(a_rows, lambda r: read_histograms(dirs[0], r))
    new = curves(b_rows, lambda r: read_histograms(dirs[1], r))
    if not base and not new:
        return None
    for side, found, directory in ((names[0], base, dirs[0]), (names[1], new, dirs[1])):
        write_text_atomic(directory / SWEEP_FILE, sweep_report.markdown(found, side))
    knees = compare_knees(base, new, rule)
    path = dirs[0].parent / KNEES_FILE
    write_text_atomic(path, sweep_report.knee_markdown(knees, *names))
    return Knees(((names[0], base), (names[1], new)), knees, path)


def sweep_plan(prepared: Prepared) -> str | None:
    """--dry-run of a sweep: its works and how long it takes (None without one)."""
    if not sweeping(prepared):
        return None
    works = SweepBatch(prepared).works()
    points = [w for w in works if isinstance(w, PointWork)]
    closed = [w for w in works if isinstance(w, SaturationWork)]
    seconds = sum(trial_seconds(w.trial) for w in works if not isinstance(w, PointWork))
    seconds += sum(trial_seconds(w.point_trial()) for w in points)
    steps = ", ".join(dict.fromkeys(w.step.label for w in points))
    return (f"rate sweep: {len(closed)} closed-loop trial(s), then {len(points)} open-loop "
            f"point(s) ({steps}); {len(works)} trials ≈ {duration_text(seconds)}")


def blocked_sides(sides: dict[str, Prepared]) -> list[tuple[str, str]]:
    """(side, the first line of why) of each side none of whose trials could run."""
    return [(name, side.options.blocked.splitlines()[0])
            for name, side in sides.items() if side.options.blocked]


@dataclass
class Ran:
    """What a run of trials, tests or scenarios produced: its rows (None: interrupted,
    ``kept`` finished ones in ``path``), the results table's title, the profile files, and
    warnings about the input (an incomplete trace)."""

    summary: RunSummary | None
    kept: int
    path: Path
    title: str = ""
    profile: Profiled | None = None
    warnings: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return Interrupted.exit_code if self.summary is None else self.summary.exit_code


def ran(persisted: Persisted[RunSummary], title: str, out_dir: Path) -> Ran:
    """A persisted run with its title and profile artifacts."""
    summary = persisted.summary
    found = Ran(summary, persisted.kept, persisted.path, title)
    if summary is not None:
        found.profile = profile_artifacts(summary.rows, out_dir)
    return found


def write_report(path: Path | None, text: Callable[[], str]) -> Path | None:
    """--output: the markdown report written there (nothing without one)."""
    if path is not None:
        path.write_text(text())
    return path


AUTO_RUNS_FILE = "auto-runs.json"  # --runs auto: each series' stop, beside the sides


def auto_verdicts(result: SidesResult, auto: AutoRuns, rule: Rule, metrics: str
                  ) -> list[MetricComparison]:
    """``--runs auto``'s table: each series as the look that stopped it judged it, at that
    look's level (``Looks.final``)."""
    return (result.looks or Looks(auto.design)).final(result.a_rows, result.b_rows, rule,
                                                      metrics)


def auto_stops(result: SidesResult, verdicts: list[MetricComparison], auto: AutoRuns,
               out_dir: Path, side_dirs: Iterable[Path]) -> list[SeriesStop]:
    """``--runs auto``'s stop of each series (where the run's looks stopped it), written
    to ``auto-runs.json`` and into every row of the run (``Row.auto``, each side's
    metrics.json rewritten: the rows were stored before their stop was known)."""
    looks = result.looks or Looks(auto.design)
    rows = [r for side in result.rows.values() for r in side]
    found = looks.stops(series_verdicts(verdicts), rounds_run(rows))
    by_series = {s.series: s.record() for s in found}
    for row in rows:
        if (record := by_series.get(series_of(row))) is not None:
            row["auto"] = record
    for directory in side_dirs:
        mark_stops(directory / "metrics.json", by_series, result.seed)
    write_stops(out_dir, found, auto)
    return found


def mark_stops(path: Path, by_series: dict[str, AutoStop], seed: int) -> None:
    """The run's rows in a side's metrics.json (by its order's seed) given their stop."""
    if not path.is_file():
        return
    rows = read_rows(path, as_written=True)
    for row in rows:
        if row.get("ab_seed") == seed and (record := by_series.get(series_of(row))):
            row["auto"] = record
    write_json_atomic(path, rows)


def write_stops(directory: Path, found: list[SeriesStop], auto: AutoRuns) -> Path:
    """``auto-runs.json`` (``kvperf_auto_runs`` 2: each look's level in ``levels``, by the
    rounds it follows, and ``level_rule``; 1 had one ``nominal_alpha``): the design and each
    series' stop — the rows were written before the stop was known."""
    path = directory / AUTO_RUNS_FILE
    write_json_atomic(path, {
        "kvperf_auto_runs": 2, "max_runs": auto.design.max_rounds,
        "min_rounds": auto.design.min_rounds, "levels": {
            str(k): level for k, level in auto.design.levels.items()},
        "level_rule": auto.design.kind, "calibrated": auto.design.calibrated,
        "series": [{"series": s.series, "verdict": str(s.verdict), "rounds": s.rounds,
                    "stop": str(s.stop), "text": s.text()} for s in found]})
    return path


def listed(made: Differentials | None) -> list[Differentials]:
    """A differential flamegraph's result as a list (empty: there was none)."""
    return [] if made is None else [made]
