"""Adapters between the store's types and analysis's: a stored commit history becomes a
``Series`` for change-point detection, and a ``Finding`` the row the store keeps."""

from __future__ import annotations

from kvperf.analysis.regressions import Finding, Series
from kvperf.store.changepoints import StoredChangePoint
from kvperf.store.series import History


def to_series(h: History) -> Series:
    """A stored history (one value per commit, commit-time order) as a Series."""
    return Series(h.series_key, h.params, h.metric, h.means, h.revisions, h.times)


def to_stored(f: Finding) -> StoredChangePoint:
    """A change point as a row of the ``change_points`` table."""
    return StoredChangePoint(f.series_key, f.metric, f.params, f.direction, f.magnitude,
                             f.pvalue, f.before_mean, f.after_mean, f.last_before.sha,
                             f.first_after.sha, f.first_after.at)
