"""The sequential rule (``analysis.sequential``) measured by simulation: false alarms under
repeated looks, rounds to a decision, and the calibrated levels of its looks.

Each simulated comparison is one of ``analysis.calibration``'s (2 series × 14 correlated
metrics, paired rounds with a shared drift) drawn for ``max_rounds`` rounds up front. The
rule looks at its first k rounds at every look of the design, with the verdict rule at the
look's level, as ``sequential.Looks`` does: a series still open whose rps is decided, or
any of whose rows is flagged, stops there with that verdict, and its later rounds are not
run (NaN: absent, so the next looks judge it on its rounds so far, beside the open
series); the comparison ends when no series is open, or at ``max_rounds``. A false alarm
is any of the 28 rows flagged at a look while its series was open (what a stop line, or a
caller that acts on the first flag, shows); the final table shows each series as the look
that stopped it judged it (``sequential.Looks.final``), so its flags are among those.
``calibrate`` finds the largest constant c of the spent levels (the look after k rounds at
c · ``sequential.shape``) with those false alarms ≤ 1% in every A/A cell
(``sequential.SPENT``). ``run_looks(primaries=…)`` also tests each look's open series' rps in
a family of their own (``sequential.Design.share``; measured by
``benchmarks/sequential_variants.py``, not kept).
``benchmarks/sequential_calibration.py`` prints the grid and the table;
``tests/unit/analysis/test_sequential.py`` holds the default design to ≤ 1% in the cells
nearest the target.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from kvperf.analysis.calibration import METRICS, NOISES, ROWS, SERIES, Cell, primary, simulate
from kvperf.analysis.sequential import DECIDED, Design, shape
from kvperf.analysis.verdict import VERDICTS, Rows, Rule, Verdict, judge

FloatArray = npt.NDArray[np.float64]
_M = len(METRICS)
_DECIDED = [VERDICTS.index(v) for v in DECIDED]
_FLAGS = [VERDICTS.index(Verdict.REGRESSION), VERDICTS.index(Verdict.IMPROVEMENT)]
_REGRESSION = VERDICTS.index(Verdict.REGRESSION)
A_A_CVS = (0.005, 0.01, 0.02, 0.05, 0.10)  # the A/A cells calibrated (× NOISES)
TARGET = 0.01


@dataclass(frozen=True)
class Outcome:
    """A cell under the sequential rule: share with a false alarm (module doc); share where
    series 0 stopped as a regression (``sequential.series_verdicts``: its rps, else its
    first flagged row); mean rounds until series 0 stopped, and until the last series did;
    share where series 0 reached the maximum undecided."""

    any_flag: float
    detected: float
    mean_rounds: float
    mean_rounds_all: float
    undecided: float


@dataclass
class _Run:
    """Per comparison and series: the round it stopped at (0: open) and its verdict."""

    stop: npt.NDArray[np.int64]
    verdict: npt.NDArray[np.int64]
    ever: npt.NDArray[np.bool_]


def _judge(la: FloatArray, lb: FloatArray, stop: npt.NDArray[np.int64], rounds: int,
           rule: Rule) -> npt.NDArray[np.int64]:
    """Verdicts (comparisons, series, metrics) after ``rounds``, a stopped series on its
    rounds up to its stop."""
    a, b = la[..., :rounds].copy(), lb[..., :rounds].copy()
    last = np.repeat(stop, _M, axis=1)[:, :, None]
    cut = (last > 0) & (np.arange(rounds)[None, None, :] >= last)
    a[cut], b[cut] = np.nan, np.nan
    verdict = judge(a, b, True, ROWS, rule, primary=(primary(a), primary(b))).verdict
    return verdict.reshape(len(a), SERIES, _M)


_PRIMARIES = Rows.of([METRICS[0].name] * SERIES, list(range(SERIES)))


def _judge_primaries(la: FloatArray, lb: FloatArray, open_: npt.NDArray[np.bool_],
                     rounds: int, rule: Rule) -> npt.NDArray[np.int64]:
    """Verdicts (comparisons, series) of the open series' rps rows after ``rounds``, tested
    in a family of their own (``sequential.Looks``: BH across the open series' rps; a
    stopped series' rps is absent from it)."""
    a, b = la[:, ::_M, :rounds].copy(), lb[:, ::_M, :rounds].copy()
    a[~open_], b[~open_] = np.nan, np.nan
    return judge(a, b, True, _PRIMARIES, rule, primary=(a, b)).verdict


def _series_verdict(v: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.bool_],
                                                       npt.NDArray[np.int64]]:
    """Per series: decided (rps decided, or a row flagged) and its verdict (rps when
    decided, else its first flagged row's, else rps's)."""
    flagged = np.isin(v, _FLAGS)
    rps_decided = np.isin(v[:, :, 0], _DECIDED)
    first = np.take_along_axis(v, flagged.argmax(axis=2)[:, :, None], axis=2)[:, :, 0]
    any_flag = flagged.any(axis=2)
    return rps_decided | any_flag, np.where(rps_decided | ~any_flag, v[:, :, 0], first)


def run_looks(la: FloatArray, lb: FloatArray, design: Design,
              levels: Mapping[int, float], primaries: Mapping[int, float] | None = None
              ) -> _Run:
    """The rule over drawn comparisons (module doc), the look after k rounds at
    ``levels[k]``; ``primaries``: each look also tests the open series' rps in a family of
    their own, at ``primaries[k]``."""
    reps = len(la)
    found = _Run(np.zeros((reps, SERIES), dtype=np.int64),
                 np.zeros((reps, SERIES), dtype=np.int64), np.zeros(reps, dtype=bool))
    for k in design.schedule:
        index = np.flatnonzero((found.stop == 0).any(axis=1))
        if not len(index):
            break
        v = _judge(la[index], lb[index], found.stop[index], k, Rule(alpha=levels[k]))
        open_ = found.stop[index] == 0
        if primaries:
            p = _judge_primaries(la[index], lb[index], open_, k, Rule(alpha=primaries[k]))
            v[:, :, 0] = np.where(np.isin(p, _FLAGS) & open_, p, v[:, :, 0])
        found.ever[index] |= (np.isin(v, _FLAGS).any(axis=2) & open_).any(axis=1)
        done, verdict = _series_verdict(v)
        new = open_ & (done | (k == design.max_rounds))
        stop, kept = found.stop[index], found.verdict[index]
        stop[new], kept[new] = k, verdict[new]
        found.stop[index], found.verdict[index] = stop, kept
    return found


def draw(cell: Cell, reps: int, rng: np.random.Generator, rounds: int
         ) -> tuple[FloatArray, FloatArray]:
    """``reps`` paired comparisons of ``cell`` (its ``n`` ignored) for ``rounds`` rounds."""
    return simulate(replace(cell, n=rounds), reps, rng)


def outcome(found: _Run, design: Design) -> Outcome:
    decided, _ = _series_verdict(found.verdict[:, :, None])
    return Outcome(float(found.ever.mean()), float((found.verdict[:, 0] == _REGRESSION).mean()),
                   float(found.stop[:, 0].mean()), float(found.stop.max(axis=1).mean()),
                   float(((found.stop[:, 0] == design.max_rounds) & ~decided[:, 0]).mean()))


def sequential(cell: Cell, reps: int, rng: np.random.Generator, design: Design,
               levels: Mapping[int, float] | None = None) -> Outcome:
    """``reps`` comparisons of ``cell`` under ``design`` (its looks at ``levels``, default
    the design's)."""
    la, lb = draw(cell, reps, rng, design.max_rounds)
    return outcome(run_looks(la, lb, design, design.levels if levels is None else levels),
                   design)


def spent(design: Design, c: float) -> dict[int, float]:
    """The looks' levels c · ``shape`` (``sequential.SPENT``'s rule at constant c)."""
    return {k: c * w for k, w in zip(design.schedule,
                                     shape(design.min_rounds, design.max_rounds), strict=True)}


def calibrate(design: Design, reps: int, seed: int, steps: int = 10,
              target: float = TARGET) -> tuple[float, float, str]:
    """The largest c (between α, where the levels sum to α, and α / the first look's share,
    where the first look tests at α) at which every A/A cell (``A_A_CVS`` × ``NOISES``,
    ``reps`` comparisons each, the same draws at every c tried) has false alarms ≤
    ``target`` with the looks at ``spent(design, c)``, by bisection on its logarithm; the
    worst cell's rate there, and which cell it is."""
    rng = np.random.default_rng(seed)
    names = [f"CV {cv:.1%} {noise}" for cv in A_A_CVS for noise in NOISES]
    cells = [draw(Cell(0, cv, 0.0, True, noise), reps, rng, design.max_rounds)
             for cv in A_A_CVS for noise in NOISES]

    def rates(c: float) -> list[float]:
        return [float(run_looks(a, b, design, spent(design, c)).ever.mean()) for a, b in cells]

    low = design.alpha
    high = design.alpha / shape(design.min_rounds, design.max_rounds)[0]
    found = rates(low)
    if max(found) <= target:  # else the floor: no c between would do
        if max(rates(high)) > target:
            for _ in range(steps):
                middle = float(np.sqrt(low * high))
                low, high = (middle, high) if max(rates(middle)) <= target else (low, middle)
        else:
            low = high
        found = rates(low)
    worst = int(np.argmax(found))
    return low, found[worst], names[worst]
