"""Effect estimates on the log scale for batches of rows (the statistics behind every verdict).

A row is one metric of one series, A's and B's runs as log values along the last axis; NaN
marks a missing (or screened-out) run. Leading axes are independent rows or comparisons, so the
same functions judge one comparison in ``kvperf compare`` and a million simulated ones in
``benchmarks/verdict_calibration.py``.

The effect is the difference of mean logs, ln(B/A) of geometric means (Fleming & Wallace
1986, "How not to lie with statistics: the correct way to summarize benchmark results"):

- paired (interleaved rounds): the mean of the per-round log ratios, with the one-sample
  Student t on them (df = pairs − 1);
- unpaired, equal run counts: Student's pooled two-sample t (df = n_A + n_B − 2), which with
  equal sizes keeps its level under unequal variances (Scheffé 1959, "The Analysis of
  Variance", §10.4);
- unpaired, unequal run counts: Welch's t with Welch–Satterthwaite df (Welch 1947).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kvperf.analysis import distributions

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Standard errors below this (log scale: a billionth) are float rounding of a zero spread —
# identical values, or ratios that coincide — and count as exactly zero.
ZERO_SE = 1e-9


@dataclass(frozen=True)
class Effect:
    """Estimates for a batch of rows (all arrays have the batch's shape).

    ``estimate``: mean ln(B/A); ``se``: its standard error; ``df``: degrees of freedom of the
    t reference; ``sd``: the per-run standard deviation the power analysis scales (paired: of
    the log ratios; unpaired: pooled); ``n_a``/``n_b``: runs used per side (pairs: equal);
    ``noise``: the coefficient of variation the stability rule judges (paired: of the
    per-round ratios B/A; unpaired: the larger side's run-to-run CV).
    """

    estimate: FloatArray
    se: FloatArray
    df: FloatArray
    sd: FloatArray
    n_a: IntArray
    n_b: IntArray
    noise: FloatArray
    paired: bool


def _count(x: FloatArray) -> IntArray:
    counts: IntArray = np.sum(~np.isnan(x), axis=-1).astype(np.int64)
    return counts


def _mean(x: FloatArray, n: IntArray) -> FloatArray:
    total = np.nansum(x, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / n, np.nan)


def _var(x: FloatArray, n: IntArray) -> FloatArray:
    """Sample variance (ddof = 1) ignoring NaN; NaN for fewer than two values."""
    centred = x - _mean(x, n)[..., None]
    squares = np.nansum(centred * centred, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 1, squares / (n - 1), np.nan)


def value_cv(logs: FloatArray) -> FloatArray:
    """Coefficient of variation s/mean of the values exp(logs) (ddof = 1; NaN ignored; NaN for
    fewer than two values). Everitt & Skrondal, "The Cambridge Dictionary of Statistics"."""
    values = np.exp(logs)
    n = _count(values)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(_var(values, n)) / _mean(values, n)


def _zeroed(se: FloatArray) -> FloatArray:
    return np.where(se < ZERO_SE, 0.0, se)


def paired_effect(la: FloatArray, lb: FloatArray) -> Effect:
    """Paired rounds: the log ratios lb − la (a round counts when both sides have a value)."""
    lr = lb - la
    n = _count(lr)
    var = _var(lr, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = _zeroed(np.sqrt(var / n))
    return Effect(_mean(lr, n), se, (n - 1).astype(np.float64), np.sqrt(var), n, n,
                  value_cv(lr), paired=True)


def unpaired_effect(la: FloatArray, lb: FloatArray) -> Effect:
    """Independent sides: pooled Student t when the run counts are equal, Welch otherwise."""
    na, nb = _count(la), _count(lb)
    noise = np.fmax(value_cv(la), value_cv(lb))
    return _two_sample(_mean(la, na), _var(la, na), na, _mean(lb, nb), _var(lb, nb), nb, noise)


def _two_sample(ma: FloatArray, va: FloatArray, na: IntArray, mb: FloatArray, vb: FloatArray,
                nb: IntArray, noise: FloatArray) -> Effect:
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = ((na - 1) * va + (nb - 1) * vb) / (na + nb - 2)
        se_pooled = np.sqrt(pooled * (1.0 / na + 1.0 / nb))
        wa, wb = va / na, vb / nb
        se_welch = np.sqrt(wa + wb)
        df_welch = (wa + wb) ** 2 / (wa * wa / (na - 1) + wb * wb / (nb - 1))
    equal = na == nb
    se = _zeroed(np.where(equal, se_pooled, se_welch))
    df = np.where(equal | (se_welch == 0), na + nb - 2.0, df_welch)
    return Effect(np.asarray(mb - ma, dtype=np.float64), se, df.astype(np.float64),
                  np.sqrt(pooled), na, nb, noise, paired=False)


def _log_moments(mean: FloatArray, sd: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(μ, σ²) of ln X for a log-normal X with this mean and sd (σ² NaN where sd is)."""
    var = np.log1p((sd / mean) ** 2)
    return np.log(mean) - np.where(np.isnan(var), 0.0, var / 2), var


def from_summaries(mean_a: FloatArray, sd_a: FloatArray, n_a: IntArray, mean_b: FloatArray,
                   sd_b: FloatArray, n_b: IntArray) -> Effect:
    """Unpaired effects from stored summaries (mean, sd, n per side, raw scale; arrays).

    The log-scale moments come from the log-normal relations σ² = ln(1 + CV²) and
    μ = ln(mean) − σ²/2 (Johnson, Kotz & Balakrishnan, "Continuous Univariate
    Distributions" vol. 1, ch. 14); used where runs are not stored (``history --sha``).
    A side with one value has no variance.
    """
    na, nb = np.asarray(n_a, dtype=np.int64), np.asarray(n_b, dtype=np.int64)
    (ma, va), (mb, vb) = _log_moments(mean_a, sd_a), _log_moments(mean_b, sd_b)
    noise = np.fmax(np.where(na > 1, sd_a / mean_a, np.nan), np.where(nb > 1, sd_b / mean_b,
                                                                        np.nan))
    return _two_sample(ma, np.where(na > 1, va, np.nan), na, mb, np.where(nb > 1, vb, np.nan),
                       nb, np.asarray(noise, dtype=np.float64))


def p_values(effect: Effect) -> FloatArray:
    """Two-sided t p-values; a zero standard error gives 0 for a non-zero estimate and 1 for
    none (constant sides: deterministic counts); NaN where there is no t (df < 1)."""
    est, se, df = effect.estimate, effect.se, effect.df
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.abs(est) / se
        p = 2.0 * distributions.stdtr(np.where(df >= 1, df, np.nan), -t)
    exact = (se == 0) & (df >= 1)
    return np.where(exact, np.where(est == 0, 1.0, 0.0), p)


def interval(effect: Effect, confidence: float) -> tuple[FloatArray, FloatArray]:
    """estimate ± t_{df,(1+c)/2}·se on the log scale (NaN where df < 1). Student 1908; the
    interval that inverts ``p_values`` (its level-α test rejects iff 0 lies outside)."""
    df = np.where(effect.df >= 1, effect.df, np.nan)
    half = distributions.stdtrit(df, 0.5 + confidence / 2) * effect.se
    half = np.where(effect.se == 0, 0.0, half)
    return effect.estimate - half, effect.estimate + half
