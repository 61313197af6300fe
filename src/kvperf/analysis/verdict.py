"""The decision rule that turns an A/B comparison into a verdict per row (metric of a series).

One rule for every verdict kvperf prints (compare, compare-results, run --commits, noise,
history --sha, instruction mode, change points). Per comparison: rows on the last batch axis,
runs on the last array axis (log values, NaN = absent).

0. Outlier runs of a series (a stall: > 1.5× off the side's median, at most one run in
   five; ``outliers``) are dropped from every metric of that series.
1. A side with no value → insufficient data. A side with one value, or no spread at all
   (values, or paired ratios, that repeat exactly: quantized latencies, deterministic
   instruction counts; flagged only from ``Rule.constant_runs`` runs per side) → no
   statistics: the change against a water line (default ±5%), labelled "single sample, no
   statistics" or "no spread between runs, no statistics".
2. Significant and beyond the minimum effect → regression / improvement. Significant: the
   t-test on the log ratio (``effect``: paired t, or pooled/Welch two-sample t) at α = 0.01
   after a two-stage correction (``multiple.two_stage``: the series whose Simes p survives
   Benjamini–Hochberg across series, then BH among their metrics; when nothing changed,
   the chance of any flag is ≤ α). Beyond: |ratio − 1| ≥ 2% (throughput, CPU) or 5%
   (latency), ratio = geometric-mean ratio B/A. A rank test (Wilcoxon signed-rank or
   Mann–Whitney U) that disagrees downgrades the flag to unstable (``ranks``).
3. The 95% t interval of the ratio inside [1 − min effect, 1 + min effect] → no change
   (the two one-sided tests' criterion: Schuirmann 1987, "A comparison of the two one-sided
   tests procedure and the power approach for assessing the equivalence of average
   bioavailability", J. Pharmacokinet. Biopharm. 15:657–680).
4. CV above 10% → unstable (paired: the CV of the per-round ratios B/A, where drift shared
   by a round cancels; unpaired: the larger side's run-to-run CV). A noisy row can still be
   flagged (rule 2: the t-test weighs the noise; the calibration found no more A/A false
   flags, and a 20% change at 10% CV with 20 runs found in 100% of cases instead of 28%),
   and still be "no change" (rule 3); unstable says why it is neither.
5. Otherwise inconclusive, with the runs that would settle it under this same rule
   (``power.runs_to_conclude``: 90% chance, the measured effect and spread taken as true).

Rule 2 is equivalent to: the selection-adjusted interval at level 1 − threshold (the raw p
at which the row becomes significant; Benjamini & Yekutieli 2005, "False discovery
rate-adjusted multiple confidence intervals for selected parameters", JASA 100:71–81)
excludes 1 and the estimate is beyond the minimum effect; so an inconclusive row's adjusted
interval always straddles the minimum effect. Measured false-alarm and detection rates:
``benchmarks/verdict_calibration.py`` and docs/PERFORMANCE.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from kvperf.analysis import distributions
from kvperf.analysis import effect as fx
from kvperf.analysis.multiple import two_stage
from kvperf.analysis.outliers import screen
from kvperf.analysis.power import runs_to_conclude
from kvperf.analysis.ranks import ranks_agree
from kvperf.results.metrics import describe

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

MAX_CV = 0.10
DEFAULT_ALPHA = 0.01
DEFAULT_POWER = 0.90
DEFAULT_WATER_LINE = 0.05
CONFIDENCE = 0.95


class Verdict(StrEnum):
    """Outcome of one row's A/B comparison; the value is the printed wording."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NO_CHANGE = "no change"
    INCONCLUSIVE = "inconclusive"
    UNSTABLE = "unstable"
    INSUFFICIENT_DATA = "insufficient data"
    NOT_COMPARABLE = "not comparable"


VERDICTS = tuple(Verdict)
SINGLE_SAMPLE = "single sample, no statistics"
CONSTANT = "no spread between runs, no statistics"


@dataclass(frozen=True)
class Rule:
    """The rule's levels: α (after the correction), the CV above which a row is unstable,
    the water line of single samples, the confidence of the no-change interval, the chance a
    ``runs_needed`` estimate aims for, and the runs per side from which sides without any
    spread are flagged by the water line (quantized timings repeat by chance in 2 runs — the
    calibration measured 0.2 points of A/A false flags from that — deterministic counts do
    not: instruction mode uses 2)."""

    alpha: float = DEFAULT_ALPHA
    max_cv: float = MAX_CV
    water_line: float = DEFAULT_WATER_LINE
    confidence: float = CONFIDENCE
    power: float = DEFAULT_POWER
    constant_runs: int = 3


DEFAULT_RULE = Rule()


@dataclass(frozen=True)
class MinEffect:
    """Smallest relative change worth reporting: the catalogue's per-family values
    (``results.metrics``), or these two where a caller overrides them (None: catalogue)."""

    throughput: float | None = None
    latency: float | None = None


DEFAULT_MIN_EFFECT = MinEffect()


def min_effect_for(metric_name: str, defaults: MinEffect = DEFAULT_MIN_EFFECT) -> float:
    """Minimum effect for a metric: its catalogue family's (latency 5%, throughput and CPU
    2%, instructions 0.5%), unless ``defaults`` overrides latency or the other families."""
    metric = describe(metric_name)
    override = defaults.latency if metric.family == "latency" else defaults.throughput
    return override if override is not None else metric.min_effect


def lower_is_better(metric_name: str) -> bool:
    """The metric's direction, from the catalogue (``results.metrics.describe``)."""
    return describe(metric_name).lower_is_better


@dataclass(frozen=True)
class Rows:
    """What the rule needs to know about each row (arrays along the rows axis): its minimum
    effect, its direction, and its family (the series it belongs to)."""

    min_effect: FloatArray
    lower_is_better: BoolArray
    family: npt.NDArray[np.int64]

    @classmethod
    def of(cls, metrics: list[str], families: list[int] | None = None,
           defaults: MinEffect = DEFAULT_MIN_EFFECT) -> Rows:
        return cls(np.array([min_effect_for(m, defaults) for m in metrics]),
                   np.array([lower_is_better(m) for m in metrics], dtype=bool),
                   np.array(families if families is not None else [0] * len(metrics),
                            dtype=np.int64))


@dataclass(frozen=True)
class Judgement:
    """The rule applied to a batch of comparisons (shape: comparisons…, rows).

    ``verdict`` holds indexes into ``VERDICTS``; ``low``/``high`` the ``confidence`` interval
    of the log ratio; ``threshold`` the raw p at which a row is, or would become, significant
    (``multiple.two_stage``); ``ranks_ok`` False where the rank test downgraded a flag;
    ``la``/``lb`` the log values judged (outlier runs NaN), ``dropped`` how many went.
    """

    effect: fx.Effect
    p: FloatArray
    p_adjusted: FloatArray
    low: FloatArray
    high: FloatArray
    threshold: FloatArray
    ranks_ok: BoolArray
    dropped: npt.NDArray[np.int64]
    verdict: npt.NDArray[np.int64]
    la: FloatArray
    lb: FloatArray


def _code(v: Verdict) -> int:
    return VERDICTS.index(v)


def _direction(estimate: FloatArray, lower_better: BoolArray) -> npt.NDArray[np.int64]:
    worse = (estimate > 0) == lower_better
    return np.where(worse, _code(Verdict.REGRESSION), _code(Verdict.IMPROVEMENT))


def _beyond(estimate: FloatArray, limit: FloatArray | float) -> BoolArray:
    """|ratio − 1| ≥ limit, with ratio = exp(estimate)."""
    with np.errstate(invalid="ignore"):
        return np.abs(np.expm1(estimate)) >= limit - 1e-12


def _statistics(e: fx.Effect, rows: Rows, rule: Rule, significant: BoolArray,
                low: FloatArray, high: FloatArray) -> npt.NDArray[np.int64]:
    """Rules 2–5 for rows with a spread (rank check applied later)."""
    flagged = significant & _beyond(e.estimate, rows.min_effect)
    inside = (np.expm1(low) >= -rows.min_effect) & (np.expm1(high) <= rows.min_effect)
    stable = e.noise <= rule.max_cv
    return np.select(
        [flagged, inside, ~stable],
        [_direction(e.estimate, rows.lower_is_better), _code(Verdict.NO_CHANGE),
         _code(Verdict.UNSTABLE)],
        _code(Verdict.INCONCLUSIVE)).astype(np.int64)


def _single(e: fx.Effect, rows: Rows, rule: Rule) -> npt.NDArray[np.int64]:
    """Rule 1 (one value on a side, or both sides constant): the change against the water
    line."""
    beyond = _beyond(e.estimate, rule.water_line)
    return np.where(beyond, _direction(e.estimate, rows.lower_is_better),
                    _code(Verdict.NO_CHANGE)).astype(np.int64)


def judge(la: FloatArray, lb: FloatArray, paired: bool, rows: Rows,
          rule: Rule = DEFAULT_RULE,
          primary: tuple[FloatArray, FloatArray] | None = None) -> Judgement:
    """Apply the rule (module doc) to log values ``la``/``lb`` of shape (…, rows, runs).

    ``primary``: each row's series' primary metric (log values, same shape) for the outlier
    screen; None skips it.
    """
    dropped = np.zeros(la.shape[:-1], dtype=np.int64)
    if primary is not None:
        la, lb, dropped = screen(la, lb, primary[0], primary[1], paired)
    e = fx.paired_effect(la, lb) if paired else fx.unpaired_effect(la, lb)
    return _apply(e, rows, rule, dropped, la, lb)


def judge_effect(e: fx.Effect, rows: Rows, rule: Rule = DEFAULT_RULE) -> Judgement:
    """The rule on effects computed from stored summaries (``effect.from_summaries``): the
    runs themselves are gone, so no outlier screen and no rank check."""
    runs = np.empty((*e.estimate.shape, 0))
    return _apply(e, rows, rule, np.zeros(e.estimate.shape, dtype=np.int64), runs, runs)


def _apply(e: fx.Effect, rows: Rows, rule: Rule, dropped: npt.NDArray[np.int64],
           la: FloatArray, lb: FloatArray) -> Judgement:
    n = np.minimum(e.n_a, e.n_b)
    tested = (n >= 2) & (e.se > 0)
    p = np.where(tested, fx.p_values(e), np.nan)
    p_adjusted, threshold = two_stage(p, rows.family, rule.alpha)
    low, high = fx.interval(e, rule.confidence)
    verdict = np.select([tested, n == 0],
                        [_statistics(e, rows, rule, p_adjusted <= rule.alpha, low, high),
                         _code(Verdict.INSUFFICIENT_DATA)], _single(e, rows, rule))
    flagged = np.isin(verdict, [_code(Verdict.REGRESSION), _code(Verdict.IMPROVEMENT)])
    too_few = flagged & (n >= 2) & (e.se == 0) & (n < rule.constant_runs)
    verdict = np.where(too_few, _code(Verdict.INCONCLUSIVE), verdict)
    ranks_ok = ranks_agree(la, lb, e.paired, flagged & tested)
    verdict = np.where(ranks_ok, verdict, _code(Verdict.UNSTABLE))
    return Judgement(e, p, p_adjusted, low, high, threshold, ranks_ok, dropped,
                     verdict.astype(np.int64), la, lb)


@dataclass(frozen=True)
class Decision:
    """One row's verdict, how many more runs (pairs) per side would settle it (inconclusive
    only), why, and whether statistics made it (False: a single sample, or constant sides,
    judged against the water line)."""

    verdict: Verdict
    runs_needed: int | None
    reason: str
    statistics: bool = True


Index = int | tuple[int, ...]


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def median_unbiased_sd(sd: float, df: float) -> float:
    """s·√(df / χ²_{df, 0.5}): the spread σ whose sample sd would be ``sd`` at its median
    (s²·df/σ² ~ χ²_df). A small sample's sd is below σ more often than above it (with 2
    runs, 1 df, by a factor 1.48 at the median), which made the runs needed too few."""
    return sd * math.sqrt(df / float(distributions.chdtri(df, 0.5))) if df >= 1 else math.nan


def _more_runs(j: Judgement, i: Index, min_effect: float, rule: Rule) -> int | None:
    e = j.effect
    n = int(min(e.n_a[i], e.n_b[i]))
    sd = median_unbiased_sd(float(e.sd[i]), float(e.df[i]))
    total = runs_to_conclude(n, float(e.estimate[i]), sd, min_effect, float(j.threshold[i]),
                             e.paired, rule.power)
    return None if total is None else max(1, total - n)


def _cv_label(e: fx.Effect) -> str:
    return "paired B/A ratio CV" if e.paired else "run-to-run CV"


def _reason(j: Judgement, i: Index, verdict: Verdict, min_effect: float, rule: Rule) -> str:
    e = j.effect
    change = math.expm1(float(e.estimate[i]))
    if verdict is Verdict.UNSTABLE:
        if not j.ranks_ok[i]:
            return "the rank test disagrees with the t-test"
        return f"{_cv_label(e)} {_pct(float(e.noise[i]))} exceeds {_pct(rule.max_cv)}"
    if verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT):
        noisy = e.noise[i] > rule.max_cv
        cv_note = f"; {_cv_label(e)} {_pct(float(e.noise[i]))}" if noisy else ""
        return (f"B/A {change:+.1%}, p (adj.) {float(j.p_adjusted[i]):.2g} ≤ {rule.alpha:g}"
                + cv_note)
    low, high = math.exp(float(j.low[i])), math.exp(float(j.high[i]))
    return (f"{rule.confidence:.0%} CI [{low:.3f}, {high:.3f}] within "
            f"±{_pct(min_effect)}")


def _why_not(j: Judgement, i: Index, min_effect: float, rule: Rule) -> str:
    """Why an interval wholly beyond the minimum effect is still inconclusive: the level the
    correction across the comparison's rows asks for is not reached."""
    low, high = math.expm1(float(j.low[i])), math.expm1(float(j.high[i]))
    if low < min_effect and high > -min_effect:
        return ""
    return (f": {rule.confidence:.0%} CI beyond ±{_pct(min_effect)} but p (adj.) "
            f"{float(j.p_adjusted[i]):.2g} > {rule.alpha:g}")


def _single_reason(j: Judgement, i: Index, rule: Rule, label: str) -> str:
    change = math.expm1(float(j.effect.estimate[i]))
    return f"{label}: {change:+.1%} vs the ±{rule.water_line * 100:g}% water line"


def decision(j: Judgement, i: Index, rows: Rows, rule: Rule = DEFAULT_RULE) -> Decision:
    """Row ``i`` of a judgement as a Decision with its reason (and runs needed)."""
    verdict = VERDICTS[int(j.verdict[i])]
    row = i if isinstance(i, int) else i[-1]
    min_effect = float(rows.min_effect[row])
    note = f"; {int(j.dropped[i])} outlier run(s) dropped" if j.dropped[i] else ""
    n = min(int(j.effect.n_a[i]), int(j.effect.n_b[i]))
    if n == 0:
        return Decision(verdict, None, "no runs on one side")
    if n == 1 or j.effect.se[i] == 0:
        label = SINGLE_SAMPLE if n == 1 else CONSTANT
        more = rule.constant_runs - n if verdict is Verdict.INCONCLUSIVE else None
        text = _single_reason(j, i, rule, label) + (f"; needs ~{more} more runs" if more else "")
        return Decision(verdict, more, text, statistics=False)
    if verdict is Verdict.INCONCLUSIVE:
        more = _more_runs(j, i, min_effect, rule)
        text = "needs more runs" if more is None else f"needs ~{more} more runs"
        return Decision(verdict, more, text + _why_not(j, i, min_effect, rule) + note)
    return Decision(verdict, None, _reason(j, i, verdict, min_effect, rule) + note)
