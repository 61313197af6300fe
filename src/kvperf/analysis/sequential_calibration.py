"""The sequential rule (``analysis.sequential``) measured by simulation: false alarms under
repeated looks, and rounds to a decision.

Each simulated comparison is one of ``analysis.calibration``'s (2 series × 14 correlated
metrics, paired rounds with a shared drift) drawn for ``max_rounds`` rounds up front; the
rule looks at its first k rounds for k = ``min_rounds`` … ``max_rounds`` with the verdict
rule at the design's nominal level, and stops at the first look where both series are
decided (rps decided, or any of its rows flagged). A false alarm is any of the 28 rows
flagged at any look up to the stop: a bound on what the report shows (the rows at the
stop), and what a caller that acts on the first flag (a bisect step) sees.
``benchmarks/sequential_calibration.py`` prints the grid; ``tests/unit/analysis/
test_sequential.py`` holds the default design to ≤ 1% in the cells nearest the target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kvperf.analysis.calibration import METRICS, ROWS, SERIES, Cell, primary, simulate
from kvperf.analysis.sequential import DECIDED, Design
from kvperf.analysis.verdict import VERDICTS, Rule, Verdict, judge

_DECIDED = [VERDICTS.index(v) for v in DECIDED]
_FLAGS = [VERDICTS.index(Verdict.REGRESSION), VERDICTS.index(Verdict.IMPROVEMENT)]
_REGRESSION = VERDICTS.index(Verdict.REGRESSION)


@dataclass(frozen=True)
class Outcome:
    """A cell under the sequential rule: share with any row flagged at any look up to the
    stop, and at the stop itself; share where series 0 is decided a regression at the stop
    (``sequential.series_verdicts``: its rps, else its first flagged row),
    mean rounds run, share that reached the maximum undecided."""

    any_flag: float
    flag_at_stop: float
    detected: float
    mean_rounds: float
    undecided: float


def _look(la: npt.NDArray[np.float64], lb: npt.NDArray[np.float64], rounds: int,
          paired: bool, rule: Rule) -> npt.NDArray[np.int64]:
    a, b = la[..., :rounds], lb[..., :rounds]
    return judge(a, b, paired, ROWS, rule, primary=(primary(a), primary(b))).verdict


def _decided(verdict: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Per comparison: every series decided (its rps decided, or any of its rows flagged;
    ``sequential.series_verdicts``)."""
    by_series = verdict.reshape(len(verdict), SERIES, len(METRICS))
    return np.asarray((np.isin(by_series[:, :, 0], _DECIDED) |
                       np.isin(by_series, _FLAGS).any(axis=2)).all(axis=1))


def _regression(verdict: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Series 0 decided a regression: its rps, or (rps undecided) its first flagged row."""
    rows = verdict[:, : len(METRICS)]
    flagged = np.isin(rows, _FLAGS)
    first = np.take_along_axis(rows, flagged.argmax(axis=1)[:, None], axis=1)[:, 0]
    undecided = ~np.isin(rows[:, 0], _DECIDED)
    return np.asarray((rows[:, 0] == _REGRESSION) |
                      (undecided & flagged.any(axis=1) & (first == _REGRESSION)))


def sequential(cell: Cell, reps: int, rng: np.random.Generator, design: Design,
               base: Rule | None = None) -> Outcome:
    """``reps`` comparisons of ``cell`` (its ``n`` is ignored: ``max_rounds`` are drawn)
    under ``design``."""
    drawn = Cell(design.max_rounds, cell.cv, cell.effect, cell.paired, cell.noise)
    la, lb = simulate(drawn, reps, rng)
    rule = design.rule(base) if base is not None else design.rule()
    final = np.zeros((reps, SERIES * len(METRICS)), dtype=np.int64)
    rounds = np.full(reps, design.max_rounds)
    open_ = np.ones(reps, dtype=bool)
    ever = np.zeros(reps, dtype=bool)
    for k in range(design.min_rounds, design.max_rounds + 1):
        verdict = _look(la[open_], lb[open_], k, cell.paired, rule)
        ever[open_] |= np.isin(verdict, _FLAGS).any(axis=1)
        done = _decided(verdict)
        if k == design.max_rounds:
            done[:] = True
        index = np.flatnonzero(open_)[done]
        final[index], rounds[index] = verdict[done], k
        open_[index] = False
        if not open_.any():
            break
    decided_all = _decided(final)
    return Outcome(float(ever.mean()), float(np.isin(final, _FLAGS).any(axis=1).mean()),
                   float(_regression(final).mean()), float(rounds.mean()),
                   float((~decided_all).mean()))
