"""The row's ``sweep`` object: which rate sweep a row belongs to and its place in it
(``kvperf run --rate-sweep``). Absent from every other row.

``id`` is the swept series' trial id (the closed-loop trial's: the same on every side and
in every round; ``run`` tells the rounds apart); ``role`` is ``saturation`` (the closed-loop
trial, an ordinary row of its series) or ``point`` (an open-loop trial at ``target_rps``,
its step in ``config_set.rate`` so each point is a series of its own); ``rule`` is the knee
rule the sweep was run with (analysis/knee.py), so readers judge it the same way.
"""

from __future__ import annotations

from typing import TypedDict

from kvperf.config.rate_sweep import KneeRule as KneeRule  # the record's rule (re-exported)


class SweepRecord(TypedDict, total=False):
    id: str
    role: str  # "saturation" or "point"
    points: int  # points of the ladder
    index: int  # the point's place in the ladder, lowest rate first (points only)
    point: str  # "60%", "50000/s" (points only)
    percent: float | None  # of the saturation rps (null: an explicit rate)
    target_rps: float | None
    saturation_rps: float | None  # the closed-loop rps the percent was taken of
    arrivals: str  # "poisson" or "uniform" (kvload --arrivals)
    point_seconds: int
    rule: KneeRule


SATURATION = "saturation"
POINT = "point"
