"""Calibration of the verdict rule by simulation: false alarms and power, measured.

A simulated comparison has ``SERIES`` series (say SET and GET) of 14 metrics each, n runs per
side. Series 0 carries the effect (a slowdown: its rps × (1 − effect), its latencies and server
cost × 1/(1 − effect), client CPU untouched); the others never change. Each run of a series
draws one common "throughput" factor and one own factor per metric, so the metrics correlate
as measured ones do: avg/p50 latency are nearly 1/rps, tails follow it loosely, max hardly,
min latency is quantized (1% steps, like a 3-decimal millisecond field), client CPU is its own.
``cv`` is the CV of rps the comparison sees: each side's run-to-run CV (unpaired), or the CV of
the per-round ratios B/A (paired; each round also shares a ±5% drift that pairing cancels).

Two couplings of the metrics (``Cell.coupling``): ``tight``, the loadings above (what every
table of the fixed-n rule was calibrated with); ``measured``, each metric's loading, own
noise and share of a slowdown as a quiet machine's paired rounds showed them
(``MEASURED``: ``benchmarks/metric_coupling.py`` over 20 A/A and 10 A/B compares of SET and
GET at P=16): the latency percentiles and server costs follow rps far more loosely than
``tight`` has them (p50's correlation with rps −0.4, not −0.96), p95 moves by a fifth of a
slowdown, max and min latency are noise 20× rps's, and a server's per-call time moves 3.5×.

Noise: ``normal`` (on the raw values), ``lognormal``, ``heavy`` (log-normal plus, with
probability 1% per run, a stall: every metric of the run 3× worse). The rule is
``analysis.verdict.judge`` itself. ``benchmarks/verdict_calibration.py`` prints the grid;
``tests/unit/analysis/test_calibration.py`` holds the rule to the documented targets on
every CI run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kvperf.analysis import distributions
from kvperf.analysis.effect import FloatArray
from kvperf.analysis.verdict import (
    DEFAULT_RULE,
    VERDICTS,
    Judgement,
    Rows,
    Rule,
    Verdict,
    decision,
    judge,
)

SERIES = 2
DRIFT = 0.05
STALL_RATE = 0.01
STALL_FACTOR = 3.0
NOISES = ("normal", "lognormal", "heavy")


@dataclass(frozen=True)
class Metric:
    """A simulated metric: its loading on the run's throughput factor (+: rises when the
    run is slow), its own noise (× cv), whether a slowdown moves it, its quantum."""

    name: str
    load: float
    own: float
    affected: bool = True
    quantum: float = 0.0
    moved: float = 1.0  # its share of a slowdown's log effect (``measured``)


METRICS = (
    Metric("rps", -1.0, 0.0), Metric("avg_latency_ms", 1.0, 0.1),
    Metric("p50_latency_ms", 1.0, 0.3), Metric("p90_latency_ms", 0.9, 0.8),
    Metric("p95_latency_ms", 0.8, 1.2), Metric("p99_latency_ms", 0.6, 2.0),
    Metric("p999_latency_ms", 0.4, 3.0), Metric("max_latency_ms", 0.2, 5.0),
    Metric("min_latency_ms", 0.0, 0.5, quantum=0.01),
    Metric("server.cpu_us_per_request", 0.8, 0.5), Metric("server.usec_per_call", 0.5, 1.5),
    Metric("server.cpu_sys_us_per_request", 0.5, 1.0),
    Metric("client.client_cpu_us_per_request", 0.2, 1.0, affected=False),
    Metric("client.service_p50_latency_ms", 0.9, 0.4),
)
# The same 14 metrics as a quiet machine's paired rounds coupled them (module doc): load
# −corr × sd ratio and own √(1 − corr²) × sd ratio against rps's log-ratio, averaged over SET
# and GET of 20 A/A compares (240 pairs each); moved, SET's mean log-ratio over rps's in 10
# A/B compares of a ~13% slowdown. p90, p999, system CPU and service p50 are not in those
# rows: each takes its nearest neighbour's (p95, p99, server CPU, p50).
MEASURED = (
    Metric("rps", -1.0, 0.0),
    Metric("avg_latency_ms", 1.0, 0.12),
    Metric("p50_latency_ms", 0.22, 0.43, moved=0.97),
    Metric("p90_latency_ms", 0.14, 0.24, moved=0.22),
    Metric("p95_latency_ms", 0.14, 0.24, moved=0.22),
    Metric("p99_latency_ms", 0.93, 2.7, moved=0.35),
    Metric("p999_latency_ms", 0.93, 2.7, moved=0.35),
    Metric("max_latency_ms", 16.0, 20.0, moved=0.06),
    Metric("min_latency_ms", 0.35, 20.0, moved=0.1),
    Metric("server.cpu_us_per_request", 0.19, 1.1, moved=1.04),
    Metric("server.usec_per_call", 1.0, 9.3, moved=3.46),
    Metric("server.cpu_sys_us_per_request", 0.19, 1.1, moved=1.04),
    Metric("client.client_cpu_us_per_request", 0.08, 0.34, affected=False),
    Metric("client.service_p50_latency_ms", 0.22, 0.43, moved=0.97),
)
COUPLINGS = {"tight": METRICS, "measured": MEASURED}
assert all([m.name for m in c] == [m.name for m in METRICS] for c in COUPLINGS.values())


def _column(coupling: str, field: str) -> FloatArray:
    return np.array([float(getattr(m, field)) for m in COUPLINGS[coupling]])


_WORSE = np.array([-1.0 if m.name == "rps" else 1.0 for m in METRICS])  # a slow run's sign
ROWS = Rows.of([m.name for _ in range(SERIES) for m in METRICS],
               [s for s in range(SERIES) for _ in METRICS])


@dataclass(frozen=True)
class Cell:
    """One point of the grid."""

    n: int
    cv: float
    effect: float
    paired: bool
    noise: str
    coupling: str = "tight"  # COUPLINGS


def _side(cell: Cell, reps: int, rng: np.random.Generator) -> FloatArray:
    shape = (reps, SERIES, len(METRICS), cell.n)
    common = rng.standard_normal((reps, SERIES, 1, cell.n))
    load, own = _column(cell.coupling, "load"), _column(cell.coupling, "own")
    z = load[:, None] * common + own[:, None] * rng.standard_normal(shape)
    scale = cell.cv / math.sqrt(2) if cell.paired else cell.cv
    if cell.noise == "normal":
        return np.asarray(np.log(np.clip(1.0 + scale * z, 0.1, None)))
    logs = scale * z
    if cell.noise == "heavy":
        stalls = rng.random((reps, SERIES, 1, cell.n)) < STALL_RATE
        logs = logs + stalls * _WORSE[:, None] * math.log(STALL_FACTOR)
    return np.asarray(logs)


def _quantize(logs: FloatArray) -> FloatArray:
    for k, m in enumerate(METRICS):
        if m.quantum:
            steps = np.maximum(np.round(np.exp(logs[:, :, k]) / m.quantum), 1.0)
            logs[:, :, k] = np.log(steps * m.quantum)
    return logs


def simulate(cell: Cell, reps: int, rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
    """Log values of A and B, shape (reps, SERIES × 14 rows, n runs)."""
    la, lb = _side(cell, reps, rng), _side(cell, reps, rng)
    if cell.paired:
        sign = np.sign(_column(cell.coupling, "load"))[:, None]
        drift = DRIFT * rng.standard_normal((reps, SERIES, 1, cell.n)) * sign
        la, lb = la + drift, lb + drift
    moved = _column(cell.coupling, "affected") * _column(cell.coupling, "moved")
    lb[:, 0] += (_WORSE * moved)[:, None] * -math.log1p(-cell.effect)
    la, lb = _quantize(la), _quantize(lb)
    rows = (reps, SERIES * len(METRICS), cell.n)
    return la.reshape(rows), lb.reshape(rows)


def primary(logs: FloatArray) -> FloatArray:
    """Each row's series rps (row 0 of every series), broadcast to the rows."""
    return np.repeat(logs[:, :: len(METRICS)], len(METRICS), axis=1)


def run(cell: Cell, reps: int, rng: np.random.Generator, rule: Rule = DEFAULT_RULE
        ) -> tuple[Judgement, FloatArray, FloatArray]:
    """Simulate ``reps`` comparisons of a cell and judge them with the rule."""
    la, lb = simulate(cell, reps, rng)
    return judge(la, lb, cell.paired, ROWS, rule, primary=(primary(la), primary(lb))), la, lb


_FLAGS = [VERDICTS.index(Verdict.REGRESSION), VERDICTS.index(Verdict.IMPROVEMENT)]
_INCONCLUSIVE = VERDICTS.index(Verdict.INCONCLUSIVE)


@dataclass(frozen=True)
class Rates:
    """A cell's outcome: share of comparisons with any row flagged; share where series 0's
    rps is a regression; share with a wrong flag (another series, or the wrong direction);
    share of inconclusive rows whose adjusted interval does not straddle the minimum effect
    (the rule says 0), and whose displayed 95% interval lies wholly beyond it."""

    any_flag: float
    detected: float
    wrong: float
    not_straddling: float
    ci95_beyond: float


def rates(j: Judgement) -> Rates:
    flagged = np.isin(j.verdict, _FLAGS)
    series0 = slice(0, len(METRICS))
    wrong = flagged[:, len(METRICS):].any(axis=1) | (
        j.verdict[:, series0] == VERDICTS.index(Verdict.IMPROVEMENT)).any(axis=1)
    inconclusive = j.verdict == _INCONCLUSIVE
    bad, beyond = _straddle(j, inconclusive & (j.effect.se > 0))  # no spread: water line
    return Rates(float(flagged.any(axis=1).mean()),
                 float((j.verdict[:, 0] == VERDICTS.index(Verdict.REGRESSION)).mean()),
                 float(wrong.mean()), bad, beyond)


def _straddle(j: Judgement, rows: npt.NDArray[np.bool_]) -> tuple[float, float]:
    """Among ``rows``: share whose interval at the level the correction gives them (1 −
    threshold) lies wholly inside or wholly beyond the band, and share whose 95% interval
    lies beyond it."""
    if not rows.any():
        return 0.0, 0.0
    e, band = j.effect, np.broadcast_to(ROWS.min_effect, j.verdict.shape)
    half = distributions.stdtrit(np.where(e.df >= 1, e.df, np.nan), 1 - j.threshold / 2) * e.se
    with np.errstate(over="ignore", invalid="ignore"):
        low, high = np.expm1(e.estimate - half), np.expm1(e.estimate + half)
    inside = (low >= -band) & (high <= band)
    beyond = (low >= band) | (high <= -band)
    shown = (np.expm1(j.low) >= band) | (np.expm1(j.high) <= -band)
    return float((inside | beyond)[rows].mean()), float(shown[rows].mean())


@dataclass(frozen=True)
class RunsCheck:
    """Inconclusive series-0 rps rows given the suggested runs: how many had an estimate,
    how many then concluded (flag or no change), and the suggestions' median."""

    checked: int
    concluded: int
    median_more: float


def check_runs_needed(cell: Cell, samples: int, rng: np.random.Generator,
                      rule: Rule = DEFAULT_RULE) -> RunsCheck:
    """Take up to ``samples`` comparisons whose series-0 rps is inconclusive, add the runs
    the rule asked for (drawn from the same cell, independently for each comparison) and
    judge again; the comparisons asking for the same number of runs are judged together."""
    j, la, lb = run(cell, max(4 * samples, 50), rng, rule)
    picks = np.flatnonzero(j.verdict[:, 0] == _INCONCLUSIVE)[:samples]
    asked = [(int(r), more) for r in picks
             if (more := decision(j, (int(r), 0), ROWS, rule).runs_needed) is not None]
    concluded = 0
    for more in sorted({m for _, m in asked}):
        rows = np.array([r for r, m in asked if m == more])
        extra_a, extra_b = simulate(Cell(more, cell.cv, cell.effect, cell.paired, cell.noise),
                                    len(rows), rng)
        a = np.concatenate([la[rows], extra_a], axis=-1)
        b = np.concatenate([lb[rows], extra_b], axis=-1)
        again = judge(a, b, cell.paired, ROWS, rule, primary=(primary(a), primary(b)))
        concluded += int((again.verdict[:, 0] != _INCONCLUSIVE).sum())
    median = float(np.median([m for _, m in asked])) if asked else math.nan
    return RunsCheck(len(asked), concluded, median)
