"""The decision rule that turns a paired A/B comparison into a printed verdict.

A change is reported only when it is both statistically significant (the
BH-adjusted Wilcoxon p-value is below α) and practically relevant (the
geometric-mean ratio moves by at least the metric's minimum effect). "No change"
needs positive evidence: the whole confidence interval inside ±min_effect
(an equivalence-style criterion, Schuirmann 1987, "A comparison of the two
one-sided tests procedure and the power approach for assessing the equivalence
of average bioavailability"). Everything else is inconclusive.

Note on small n: the exact two-sided Wilcoxon signed-rank test on n pairs cannot
give p below 2/2^n, so at α = 0.01 fewer than 8 pairs can never be significant
(2/2^7 = 0.0156). ``decide`` therefore never reports a regression or improvement
for n < 8 at α = 0.01; such comparisons are "no change" (if the interval is tight)
or "inconclusive", and ``runs_needed`` is at least ``wilcoxon_min_pairs(α) - n``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from kvperf.analysis.paired import RatioCI
from kvperf.analysis.power import runs_needed as _pairs_for_power
from kvperf.analysis.power import wilcoxon_min_pairs

MAX_CV = 0.10
DEFAULT_ALPHA = 0.01
DEFAULT_POWER = 0.90

_LOWER_IS_BETTER_TOKENS = ("latency", "cpu", "instructions", "usec_per_call")


class Verdict(StrEnum):
    """Outcome of one metric's A/B comparison; the value is the printed wording."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NO_CHANGE = "no change"
    INCONCLUSIVE = "inconclusive"
    UNSTABLE = "unstable"
    INSUFFICIENT_DATA = "insufficient data"


@dataclass(frozen=True)
class MinEffect:
    """Smallest relative change worth reporting, by metric family."""

    throughput: float = 0.02
    latency: float = 0.05


@dataclass(frozen=True)
class Decision:
    """A verdict, how many more paired runs would settle it (if inconclusive), and why."""

    verdict: Verdict
    runs_needed: int | None
    reason: str


DEFAULT_MIN_EFFECT = MinEffect()


def min_effect_for(metric_name: str, defaults: MinEffect = DEFAULT_MIN_EFFECT) -> float:
    """Minimum effect for a metric: latency metrics use ``defaults.latency``
    (percentiles are noisier), everything else, including "rps", ``defaults.throughput``."""
    if "latency" in metric_name.lower():
        return defaults.latency
    return defaults.throughput


def lower_is_better(metric_name: str) -> bool:
    """True for cost-like metrics: names containing latency, cpu, instructions or
    usec_per_call, or ending in ``_per_request``. False otherwise (rps, ops/s, …)."""
    name = metric_name.lower()
    if name.endswith("_per_request"):
        return True
    return any(token in name for token in _LOWER_IS_BETTER_TOKENS)


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def _significant_verdict(ci: RatioCI, worse_if_up: bool) -> Verdict:
    went_up = ci.ratio > 1.0
    return Verdict.REGRESSION if went_up == worse_if_up else Verdict.IMPROVEMENT


def _more_runs(ci: RatioCI, min_effect: float, alpha: float) -> int | None:
    if not math.isfinite(ci.sd_log):
        return None
    total = max(
        _pairs_for_power(ci.sd_log, min_effect, alpha, DEFAULT_POWER),
        wilcoxon_min_pairs(alpha),
    )
    return max(1, total - ci.n)


def _cv_problem(cv: float, cv_label: str) -> str | None:
    if not math.isfinite(cv):
        return f"{cv_label} is undefined"
    if cv > MAX_CV:
        return f"{cv_label} {_pct(cv)} exceeds {_pct(MAX_CV)}"
    return None


def decide(
    ci: RatioCI,
    p_adjusted: float,
    cv: float,
    min_effect: float,
    lower_is_better: bool,
    alpha: float = DEFAULT_ALPHA,
    cv_label: str = "run-to-run CV",
) -> Decision:
    """Apply the rules, first match wins:

    1. n < 2 → insufficient data;
    2. ``cv`` > 10 % (or undefined) → unstable. ``cv`` is the noise the comparison sees:
       for interleaved (paired) runs the CV of the per-round ratios B/A — drift common to
       both sides cancels in a pair, which is what interleaving is for — and for unpaired
       data the larger of the two sides' run-to-run CVs;
    3. p_adjusted < α and |ratio − 1| ≥ min_effect → regression / improvement
       (ratio > 1 is worse when ``lower_is_better``, better otherwise);
    4. CI ⊂ [1 − min_effect, 1 + min_effect] → no change;
    5. otherwise inconclusive, ``runs_needed`` = max(pairs for 90 % power of the
       paired t-test at min_effect, Wilcoxon minimum pairs) − n, at least 1.
    """
    if ci.n < 2:
        return Decision(Verdict.INSUFFICIENT_DATA, None, f"{ci.n} paired run(s); need 2")
    cv_problem = _cv_problem(cv, cv_label)
    if cv_problem is not None:
        return Decision(Verdict.UNSTABLE, None, cv_problem)
    effect = ci.ratio - 1.0
    if p_adjusted < alpha and abs(effect) >= min_effect:
        verdict = _significant_verdict(ci, lower_is_better)
        reason = f"B/A {effect:+.1%}, p_adj {p_adjusted:.2g} < {alpha:g}"
        return Decision(verdict, None, reason)
    if 1.0 - min_effect <= ci.low and ci.high <= 1.0 + min_effect:
        reason = f"CI [{ci.low:.3f}, {ci.high:.3f}] within ±{_pct(min_effect)}"
        return Decision(Verdict.NO_CHANGE, None, reason)
    more = _more_runs(ci, min_effect, alpha)
    reason = "needs more runs" if more is None else f"needs ~{more} more runs"
    return Decision(Verdict.INCONCLUSIVE, more, reason)
