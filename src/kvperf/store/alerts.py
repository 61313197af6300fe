"""Alerts: change points with a lifecycle, grouped per commit range (``alert_summaries``).

Each change point ``kvperf regressions --store`` finds becomes an alert (one row of
``alerts``: series, metric, direction, magnitude); the alerts of one commit range
(last commit before, first after) are one summary, the thing a person triages (Perfherder's
alert summaries). Recording is idempotent: a summary is unique per range and an alert per
(summary, series, metric), so re-running detection adds only what is new.

Detection runs over the whole history each time, so a change point may move: more commits
can place a series' step in another range. An open summary's alert whose (series, metric)
now has change points only in other ranges is superseded: its summary gets a note naming
where the step went, and a summary still ``new`` whose every alert moved is resolved
``invalid`` by that note (one acknowledged or with a culprit keeps its state: a person
decides). A (series, metric) absent from the points recorded (another selection) is left
as it is.

A summary's state moves along ``TRANSITIONS`` (pure, ``next_state``): new → acknowledged →
culprit (a bisection over the range named the commit) → fixed / invalid / expected; every
change stamps ``updated_at`` and its own timestamp, and may add a note (who, when, in which
state). A move the table does not allow is refused (UsageError, exit 2) naming the current
state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, desc, insert, select, update

from kvperf.core.errors import UsageError
from kvperf.results.row import SeriesParams
from kvperf.store.changepoints import StoredChangePoint
from kvperf.store.schema import alert_summaries, alerts, commits, runs

NEW, ACKNOWLEDGED, CULPRIT = "new", "acknowledged", "culprit"
FIXED, INVALID, EXPECTED = "fixed", "invalid", "expected"
RESOLUTIONS = (FIXED, INVALID, EXPECTED)
STATES = (NEW, ACKNOWLEDGED, CULPRIT, *RESOLUTIONS)
OPEN = (NEW, ACKNOWLEDGED, CULPRIT)

# action → the states it may start from; the state it leads to is the action's own
# (ack → acknowledged, culprit → culprit, a resolution → itself).
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "ack": (NEW,),
    "assign": OPEN,
    "note": STATES,
    "culprit": OPEN,
    FIXED: OPEN,
    INVALID: OPEN,
    EXPECTED: OPEN,
}
_LEADS_TO = {"ack": ACKNOWLEDGED, "culprit": CULPRIT, **{r: r for r in RESOLUTIONS}}
_STAMP = {ACKNOWLEDGED: "acknowledged_at", CULPRIT: "culprit_at",
          **{r: "resolved_at" for r in RESOLUTIONS}}


def next_state(summary_id: int, current: str, action: str) -> str:
    """The state ``action`` leads to from ``current`` (pure); UsageError naming the current
    state when the lifecycle does not allow it."""
    if current not in TRANSITIONS[action]:
        allowed = ", ".join(TRANSITIONS[action])
        raise UsageError(f"alert {summary_id} is {current}: {action} applies only to an alert "
                         f"that is {allowed}")
    return _LEADS_TO.get(action, current)


@dataclass(frozen=True)
class Alert:
    """One change point of a summary (a series and metric that moved in its range)."""

    id: int
    series_key: str
    metric: str
    params: SeriesParams
    direction: str
    magnitude: float
    pvalue: float
    before_mean: float
    after_mean: float


@dataclass(frozen=True)
class Note:
    """A note kept with a summary: when, in which state, by whom."""

    at: str
    state: str
    by: str | None
    text: str


@dataclass(frozen=True)
class AlertSummary:
    """Every alert of one commit range and the range's lifecycle."""

    id: int
    last_before_sha: str
    first_after_sha: str
    first_after_at: datetime | None
    state: str
    owner: str | None
    culprit_sha: str | None
    parent_sha: str | None
    bisect_log: str | None
    notes: list[Note]
    created_at: datetime
    updated_at: datetime
    acknowledged_at: datetime | None
    culprit_at: datetime | None
    resolved_at: datetime | None
    alerts: list[Alert] = field(default_factory=list)

    @property
    def commit_range(self) -> str:
        return f"{self.last_before_sha[:12]}..{self.first_after_sha[:12]}"

    @property
    def regression(self) -> bool:
        return any(a.direction == "regression" for a in self.alerts)


@dataclass(frozen=True)
class Recorded:
    """What recording change points did: new summaries (ids), new alerts, and the open
    summaries whose alerts moved to another range (ids; ``superseded`` the ones resolved
    invalid for it)."""

    summaries: list[int]
    alerts: int
    moved: list[int] = field(default_factory=list)
    superseded: list[int] = field(default_factory=list)


def _summary_id(conn: Connection, p: StoredChangePoint, now: datetime,
                created: list[int]) -> int:
    s = alert_summaries.c
    found = conn.execute(select(s.id).where(s.last_before_sha == p.last_before_sha,
                                            s.first_after_sha == p.first_after_sha)).scalar()
    if found is not None:
        return int(found)
    new = conn.execute(insert(alert_summaries).values(
        last_before_sha=p.last_before_sha, first_after_sha=p.first_after_sha,
        first_after_at=p.first_after_at, state=NEW, notes=[], created_at=now,
        updated_at=now).returning(s.id)).scalar_one()
    created.append(int(new))
    return int(new)


def record(engine: Engine, points: Sequence[StoredChangePoint]) -> Recorded:
    """Every change point as an alert of its range's summary; those already stored are left
    as they are (idempotent), in one transaction."""
    now, added = datetime.now(UTC), 0
    created: list[int] = []
    a = alerts.c
    with engine.begin() as conn:
        for p in points:
            summary = _summary_id(conn, p, now, created)
            known = conn.execute(select(a.id).where(
                a.summary_id == summary, a.series_key == p.series_key,
                a.metric == p.metric)).scalar()
            if known is not None:
                continue
            conn.execute(insert(alerts).values(
                summary_id=summary, series_key=p.series_key, metric=p.metric,
                command=p.params.get("command"), params=p.params, direction=p.direction,
                magnitude=p.magnitude, pvalue=p.pvalue, before_mean=p.before_mean,
                after_mean=p.after_mean, created_at=now))
            added += 1
        moved, superseded = _supersede(conn, points, now)
    return Recorded(created, added, moved, superseded)


def _moved_members(conn: Connection, points: Sequence[StoredChangePoint]
                   ) -> dict[int, tuple[str, int, list[str]]]:
    """Open summaries with alerts whose (series, metric) the points place only in other
    ranges: (state, alerts, "series metric → range" of each moved one) by summary id."""
    ranges: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for p in points:
        ranges.setdefault((p.series_key, p.metric), set()).add(
            (p.last_before_sha, p.first_after_sha))
    s, a = alert_summaries.c, alerts.c
    query = (select(s.id, s.state, s.last_before_sha, s.first_after_sha, a.series_key,
                    a.metric, a.command).join(alerts, a.summary_id == s.id)
             .where(s.state.in_(list(OPEN))))
    found: dict[int, tuple[str, int, list[str]]] = {}
    for r in conn.execute(query):
        state, count, moved = found.get(int(r.id), (r.state, 0, []))
        now_in = ranges.get((r.series_key, r.metric))
        if now_in is not None and (r.last_before_sha, r.first_after_sha) not in now_in:
            where = ", ".join(f"{b[:12]}..{f[:12]}" for b, f in sorted(now_in))
            moved.append(f"{r.command or r.series_key[:12]} {r.metric} → {where}")
        found[int(r.id)] = (state, count + 1, moved)
    return {k: v for k, v in found.items() if v[2]}


def _supersede(conn: Connection, points: Sequence[StoredChangePoint], now: datetime
               ) -> tuple[list[int], list[int]]:
    """Notes on the summaries whose alerts moved (once per distinct note); a ``new`` one
    whose every alert moved resolved invalid (``Recorded.moved``, ``.superseded``)."""
    moved, superseded = [], []
    for summary_id, (state, count, members) in sorted(_moved_members(conn, points).items()):
        text = "the change point moved: " + "; ".join(sorted(members))
        row = conn.execute(select(alert_summaries.c.notes).where(
            alert_summaries.c.id == summary_id)).one()
        notes = list(row.notes or [])
        if any(n.get("text") == text for n in notes):
            continue
        whole = state == NEW and len(members) == count
        after = INVALID if whole else state
        notes.append({"at": now.isoformat(timespec="seconds"), "state": after,
                      "by": "kvperf regressions", "text": text})
        stamps = {"resolved_at": now} if whole else {}
        conn.execute(update(alert_summaries).where(alert_summaries.c.id == summary_id)
                     .values(state=after, notes=notes, updated_at=now, **stamps))
        moved.append(summary_id)
        if whole:
            superseded.append(summary_id)
    return moved, superseded


def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _summary(row: Any, members: list[Alert]) -> AlertSummary:
    stamps = {k: _aware(getattr(row, k)) for k in ("first_after_at", "created_at",
                                                   "updated_at", "acknowledged_at",
                                                   "culprit_at", "resolved_at")}
    return AlertSummary(
        int(row.id), row.last_before_sha, row.first_after_sha, stamps["first_after_at"],
        row.state, row.owner, row.culprit_sha, row.parent_sha, row.bisect_log,
        [Note(str(n.get("at")), str(n.get("state")), n.get("by"), str(n.get("text")))
         for n in row.notes or []], stamps["created_at"] or datetime.now(UTC),
        stamps["updated_at"] or datetime.now(UTC), stamps["acknowledged_at"],
        stamps["culprit_at"], stamps["resolved_at"], members)


def _number(x: float | None) -> float:
    """A stored double; NaN (SQLite keeps it as NULL) back as NaN."""
    return float("nan") if x is None else float(x)


def _members(conn: Connection, ids: list[int]) -> dict[int, list[Alert]]:
    out: dict[int, list[Alert]] = {i: [] for i in ids}
    query = select(alerts).where(alerts.c.summary_id.in_(ids)).order_by(alerts.c.id)
    for r in conn.execute(query):
        out[int(r.summary_id)].append(Alert(
            int(r.id), r.series_key, r.metric, dict(r.params or {}), r.direction,
            _number(r.magnitude), _number(r.pvalue), _number(r.before_mean),
            _number(r.after_mean)))
    return out


def summaries(engine: Engine, states: Sequence[str] = ()) -> list[AlertSummary]:
    """The summaries (newest first), only those in ``states`` when given, with their
    alerts."""
    query = select(alert_summaries).order_by(desc(alert_summaries.c.id))
    if states:
        query = query.where(alert_summaries.c.state.in_(list(states)))
    with engine.connect() as conn:
        rows = list(conn.execute(query))
        members = _members(conn, [int(r.id) for r in rows])
    return [_summary(r, members[int(r.id)]) for r in rows]


def summary(engine: Engine, summary_id: int) -> AlertSummary:
    """One summary; UsageError when no alert has that id."""
    query = select(alert_summaries).where(alert_summaries.c.id == summary_id)
    with engine.connect() as conn:
        row = conn.execute(query).first()
        if row is None:
            raise UsageError(f"no alert {summary_id} in this database (kvperf alerts list "
                             "shows them)")
        return _summary(row, _members(conn, [summary_id])[summary_id])


def change(engine: Engine, summary_id: int, action: str, *, by: str | None = None,
           note: str | None = None, **values: str | None) -> AlertSummary:
    """Apply ``action`` (a TRANSITIONS key) to one summary, with its extra column
    ``values`` (owner, culprit_sha, …) and a note; refused as ``next_state`` says."""
    now = datetime.now(UTC)
    with engine.begin() as conn:
        row = conn.execute(select(alert_summaries).where(
            alert_summaries.c.id == summary_id).with_for_update()).first()
        if row is None:
            raise UsageError(f"no alert {summary_id} in this database (kvperf alerts list "
                             "shows them)")
        state = next_state(summary_id, row.state, action)
        notes = list(row.notes or [])
        if note:
            notes.append({"at": now.isoformat(timespec="seconds"), "state": state,
                          "by": by or values.get("owner") or row.owner, "text": note})
        stamps = {_STAMP[state]: now} if state != row.state and state in _STAMP else {}
        conn.execute(update(alert_summaries).where(alert_summaries.c.id == summary_id)
                     .values(state=state, notes=notes, updated_at=now, **stamps, **values))
    return summary(engine, summary_id)


def for_range(engine: Engine, last_before_sha: str, first_after_sha: str) -> int | None:
    """The summary of one commit range, if one is stored."""
    s = alert_summaries.c
    with engine.connect() as conn:
        found = conn.execute(select(s.id).where(s.last_before_sha == last_before_sha,
                                                s.first_after_sha == first_after_sha)).scalar()
    return None if found is None else int(found)


def _flat(value: object, prefix: str = "") -> dict[str, str]:
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for k, v in value.items():
            out |= _flat(v, f"{prefix}{k}.")
        return out
    return {prefix.rstrip("."): "" if value is None else str(value)}


def environment(engine: Engine, sha: str) -> dict[str, str]:
    """The environment of the latest stored run of commit ``sha`` (its ``env``), flat:
    ``host.kernel`` → value; empty when none is stored."""
    query = (select(runs.c.env).where(runs.c.commit_sha == sha)
             .order_by(desc(runs.c.id)).limit(1))
    with engine.connect() as conn:
        env = conn.execute(query).scalar()
    return _flat(env) if isinstance(env, dict) and env else {}


def name_culprit(engine: Engine, last_before_sha: str, first_after_sha: str, culprit: str,
                 parent: str, log: str) -> int | None:
    """A bisection over a range named its first bad commit: that range's open summary (if
    one is stored) moves to ``culprit``; returns its id, None when none is (or it is
    resolved already)."""
    found = for_range(engine, last_before_sha, first_after_sha)
    if found is None or summary(engine, found).state not in OPEN:
        return None
    change(engine, found, "culprit", note=f"bisect named {culprit[:12]} ({log})",
           culprit_sha=culprit, parent_sha=parent, bisect_log=log)
    return found


def commit_subjects(engine: Engine, shas: Sequence[str]) -> dict[str, str]:
    """The subject line of each commit the ``commits`` table knows (track determine)."""
    query = select(commits.c.sha, commits.c.subject).where(commits.c.sha.in_(list(shas)))
    with engine.connect() as conn:
        return {str(r.sha): str(r.subject or "") for r in conn.execute(query)}


def states(engine: Engine) -> dict[tuple[str, str, str, str], str]:
    """Each stored alert's summary state and id (``"#3 acknowledged"``), by (series key,
    metric, last commit before, first after): what the history page marks its change
    points with."""
    a, s = alerts.c, alert_summaries.c
    query = (select(a.series_key, a.metric, s.last_before_sha, s.first_after_sha, s.id,
                    s.state, s.owner)
             .select_from(alerts.join(alert_summaries, s.id == a.summary_id)))
    with engine.connect() as conn:
        return {(r.series_key, r.metric, r.last_before_sha, r.first_after_sha):
                f"#{r.id} {r.state}" + (f" ({r.owner})" if r.owner else "")
                for r in conn.execute(query)}
