"""Multiple-comparison correction across the rows of one A/B comparison."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def bh_adjust(pvalues: FloatArray) -> FloatArray:
    """Benjamini-Hochberg adjusted p-values along the last axis (one comparison per row of
    the leading axes), NaN passing through and not counting towards m.

    Benjamini & Hochberg 1995, "Controlling the false discovery rate: a practical and
    powerful approach to multiple testing", JRSS B 57(1):289-300. With the m finite p-values
    sorted ascending p_(1) ≤ … ≤ p_(m), q_(i) = min_{j ≥ i} min(1, m · p_(j) / j) (step-up,
    hence monotone in p). Rejecting q ≤ α is BH at level α; when no hypothesis is false it
    bounds the chance of any rejection by α (the family-wise rate) for independent or
    positively dependent tests (Benjamini & Yekutieli 2001, Ann. Stat. 29:1165-1188).
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if np.any((p < 0.0) | (p > 1.0)):
        raise ValueError("p-values must lie in [0, 1]")
    m = np.sum(~np.isnan(p), axis=-1, keepdims=True)
    order = np.argsort(p, axis=-1, kind="stable")  # NaN sort last
    ranked = np.take_along_axis(p, order, axis=-1)
    rank = np.arange(1, p.shape[-1] + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = np.where(rank <= m, ranked * m / rank, np.nan)
    monotone = np.fmin.accumulate(scaled[..., ::-1], axis=-1)[..., ::-1]
    out = np.empty_like(p)
    np.put_along_axis(out, order, np.minimum(monotone, 1.0), axis=-1)
    return np.where(np.isnan(p), np.nan, out)


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """``bh_adjust`` of a flat list, in input order. Matches
    ``scipy.stats.false_discovery_control(p, method="bh")`` on finite input."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("pvalues must be a flat sequence")
    return [float(v) for v in bh_adjust(p)]


def simes(pvalues: FloatArray) -> FloatArray:
    """Simes' combined p-value along the last axis: min_i m · p_(i) / i over the m finite
    p-values (NaN when there are none). Simes 1986, "An improved Bonferroni procedure for
    multiple tests of significance", Biometrika 73:751-754: a valid test of "no hypothesis of
    the family is false" for independent or positively dependent tests (Sarkar 2008)."""
    p = np.sort(np.asarray(pvalues, dtype=np.float64), axis=-1)  # NaN last
    m = np.sum(~np.isnan(p), axis=-1, keepdims=True)
    rank = np.arange(1, p.shape[-1] + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = np.where(rank <= m, p * m / rank, np.nan)
    return np.asarray(np.fmin.reduce(scaled, axis=-1), dtype=np.float64)


def two_stage(pvalues: FloatArray, family: npt.NDArray[np.int64], alpha: float
              ) -> tuple[FloatArray, FloatArray]:
    """Families first, then their members: Benjamini & Bogomolov 2014, "Selective inference
    on multiple families of hypotheses", JRSS B 76:297-318.

    Stage 1: BH at ``alpha`` over the K families' Simes p-values selects R families (when
    nothing changed, the chance of selecting any is ≤ alpha). Stage 2: BH within each
    selected family at alpha·R/K. ``family`` gives each row's family (last axis).

    Returns (adjusted, threshold): a row is significant iff adjusted ≤ alpha
    (adjusted = max(q_family, q_row · K/R)); threshold is the raw p at which it is or would
    become significant: alpha·R'/K · (R_f + 1)/m_f for a row not yet significant (R' = R,
    or R + 1 when its family still needs selecting), alpha·R/K · R_f/m_f for one that is.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    families = [family == f for f in np.unique(family)]
    q_family = bh_adjust(np.stack([simes(p[..., rows]) for rows in families], axis=-1))
    selected = q_family <= alpha
    k = np.sum(~np.isnan(q_family), axis=-1, keepdims=True)
    r = np.sum(selected, axis=-1, keepdims=True)
    adjusted, threshold = np.full(p.shape, np.nan), np.full(p.shape, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        for index, rows in enumerate(families):
            q_row = bh_adjust(p[..., rows])
            chosen = selected[..., index : index + 1]
            row_adjusted = np.maximum(q_family[..., index : index + 1],
                                      np.minimum(1.0, q_row * k / np.maximum(r, 1)))
            adjusted[..., rows] = row_adjusted  # NaN where p is (not tested)
            m_f = np.sum(~np.isnan(p[..., rows]), axis=-1, keepdims=True)
            r_f = np.sum(chosen & (row_adjusted <= alpha), axis=-1, keepdims=True)
            own = np.where(row_adjusted <= alpha, r_f, np.minimum(r_f + 1, m_f))
            families_r = np.where(chosen, r, np.minimum(r + 1, k))
            threshold[..., rows] = alpha * families_r / k * own / m_f
    return adjusted, threshold
