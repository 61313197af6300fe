"""How many runs settle a comparison under the verdict rule (``analysis.verdict``).

Effects are relative (0.05 = 5 %) and analysed on the log scale, matching ``effect``. The
rule flags a row when its t-test is significant at the level the multiple-testing
correction gives it *and* its estimate is beyond the minimum effect, and calls it "no change"
when its 95% interval lies inside the minimum effect; these functions give the chance of
either after n runs, and the runs needed for a 90% chance.
"""

from __future__ import annotations

import math

from kvperf.analysis import distributions


def _nct_cdf_approx(t: float, df: float, ncp: float) -> float:
    """P(T' ≤ t) for the noncentral t, by Abramowitz & Stegun 26.7.10:
    Φ((t(1 − 1/(4ν)) − δ) / √(1 + t²/(2ν))); good where the exact form overflows."""
    z = (t * (1 - 1 / (4 * df)) - ncp) / math.sqrt(1 + t * t / (2 * df))
    return float(distributions.ndtr(z))


def _nct_sf(x: float, df: float, ncp: float) -> float:
    """P(T' > x) for the noncentral t, with the A&S 26.7.10 fallback where scipy gives nan
    (large noncentrality: a duet's ~0.5% spread)."""
    from scipy import stats  # here, not at the top: scipy.stats costs ~0.5 s to import,
    # paid by every kvperf command otherwise (analysis/distributions.py defers scipy.special)

    value = float(stats.nct.sf(x, df, ncp))
    return 1.0 - _nct_cdf_approx(x, df, ncp) if math.isnan(value) else value


def conclusive_probability(n: int, delta: float, sd: float, min_effect: float, level: float,
                           paired: bool, confidence: float = 0.95) -> float:
    """Chance that the verdict rule concludes after ``n`` runs per side (pairs when paired),
    if the true log effect is ``delta`` and the per-run sd (of log ratios, or pooled) ``sd``.

    Flag: |estimate| beyond ln(1 ± min_effect) and t beyond t_{df,1-level/2}: with the
    noncentral t T' (df, δ/se), P(T' > max(t_crit, ln(1+m)/se)) + P(T' < min(−t_crit,
    ln(1−m)/se)) (Cohen 1988 ch. 2; the estimate's threshold read on the t scale with se at
    its expected value). No change: the ``confidence`` interval inside the band, with se
    treated as known, Φ((u − c·se − δ)/se) − Φ((l + c·se − δ)/se) (the two one-sided tests'
    power, Schuirmann 1987). se = sd·√(1/n) paired, sd·√(2/n) unpaired; df n−1 or 2n−2.
    """
    df = n - 1 if paired else 2 * n - 2
    if df < 1 or not sd > 0 or not math.isfinite(sd):
        return math.nan
    se = sd * math.sqrt((1.0 if paired else 2.0) / n)
    upper, lower = math.log1p(min_effect), math.log1p(-min_effect)
    crit = float(distributions.stdtrit(df, 1.0 - level / 2))
    ncp = delta / se
    flag = _nct_sf(max(crit, upper / se), df, ncp) + 1.0 - _nct_sf(min(-crit, lower / se), df,
                                                                    ncp)
    c = float(distributions.stdtrit(df, 0.5 + confidence / 2))
    inside = float(distributions.ndtr((upper - c * se - delta) / se)
                   - distributions.ndtr((lower + c * se - delta) / se))
    return min(1.0, flag + max(0.0, inside))


def runs_to_conclude(n: int, delta: float, sd: float, min_effect: float, level: float,
                     paired: bool, power: float = 0.90, cap: int = 10_000) -> int | None:
    """Smallest total N > n at which ``conclusive_probability`` reaches ``power`` (doubling,
    then bisection), or None when even ``cap`` runs would not (an effect on the edge of the
    minimum effect cannot be settled) or the spread is unknown."""
    def enough(runs: int) -> bool:
        return conclusive_probability(runs, delta, sd, min_effect, level, paired) >= power

    if not sd > 0 or not math.isfinite(sd) or not math.isfinite(delta):
        return None
    low, high = n, max(n + 1, 2)
    while not enough(high):
        if high >= cap:
            return None
        low, high = high, min(cap, 2 * high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def flag_probability(n: int, effect: float, sd: float, min_effect: float, level: float,
                     paired: bool) -> float:
    """Chance that the verdict rule flags a true relative change ``effect`` after ``n`` runs
    per side (pairs): |estimate| beyond the minimum effect and t beyond t_{df,1−level/2}
    (noncentral t, as in ``conclusive_probability``)."""
    df = n - 1 if paired else 2 * n - 2
    if df < 1 or not sd > 0 or not math.isfinite(sd):
        return math.nan
    se = sd * math.sqrt((1.0 if paired else 2.0) / n)
    delta = abs(math.log1p(effect))
    edge = math.log1p(min_effect) if effect > 0 else -math.log1p(-min_effect)
    crit = float(distributions.stdtrit(df, 1.0 - level / 2))
    return _nct_sf(max(crit, edge / se), df, delta / se)


def runs_to_flag(effect: float, sd: float, min_effect: float, level: float, paired: bool,
                 power: float = 0.90, cap: int = 10_000) -> int | None:
    """Runs per side (pairs) for the rule to flag a true change ``effect`` with chance
    ``power``; None when the change is not beyond the minimum effect, the spread unknown, or
    more than ``cap`` runs are needed."""
    if abs(effect) <= min_effect or not sd > 0 or not math.isfinite(sd):
        return None
    n = 2
    while flag_probability(n, effect, sd, min_effect, level, paired) < power:
        if n >= cap:
            return None
        n = min(cap, n * 2)
    low = n // 2
    while n - low > 1:
        mid = (low + n) // 2
        low, n = (low, mid) if flag_probability(mid, effect, sd, min_effect, level,
                                                paired) >= power else (mid, n)
    return n
