"""History queries: one value per revision per series per metric, aggregated in the database.

A series is a set of KEY_FIELDS values (``trials.series_key``); a revision is a commit sha, or
the run label when the run named no commit. Each cell is the mean over a revision's ok trials
with n and the sample standard deviation, read from ``metric_summary`` (n, sum and sum of
squares per (series, revision, metric), maintained on write), so 10 million stored values are
never aggregated at query time, and never in Python.

Disturbed trials (other processes took their CPUs; ``trials.disturbed``) are left out: the
summary never counts them, and revisions and series are found among trials that were not
disturbed. ``include_disturbed`` takes them back: the cells are then aggregated from the
metrics table (``summary_source``), at query time.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Float,
    FromClause,
    Select,
    TextClause,
    and_,
    func,
    or_,
    select,
    true,
)

from kvperf.core.errors import UsageError
from kvperf.results.metrics import METRIC_SETS, TOP_METRICS
from kvperf.results.row import KEY_FIELDS, SeriesParams
from kvperf.store.records import BOOL_COLUMNS, FLOAT_COLUMNS, INT_COLUMNS
from kvperf.store.schema import commits, metric_summary, metrics, trials

NESTED_PREFIXES = ("server.", "client.", "memory.", "harness.")
COMMON_METRICS = METRIC_SETS["all"]  # the catalogue's timing metrics


@dataclass(frozen=True)
class Revision:
    """A commit (or label) with results, and when it was committed or first measured."""

    name: str
    when: datetime | None


class Cell(NamedTuple):
    """One metric of one series at one revision: mean, sample sd and count of ok trials.
    (A NamedTuple, not a dataclass: building 2 million of them is ~2.5x cheaper.)"""

    series_key: str
    revision: str
    metric: str
    n: int
    mean: float
    sd: float

    @property
    def cv(self) -> float:
        """Coefficient of variation s/x̄ (sample sd); NaN for n < 2."""
        return self.sd / self.mean if self.n > 1 and self.mean else math.nan


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_metric(name: str) -> str:
    """A metric name kvperf stores; UsageError with a suggestion otherwise."""
    if name in TOP_METRICS or name.startswith(NESTED_PREFIXES):
        return name
    hint = _did_you_mean(name, COMMON_METRICS)
    raise UsageError(f"--metric {name!r} is not a stored metric{hint}; "
                     f"known: {', '.join(COMMON_METRICS)}")


def _typed_value(key: str, text: str) -> Any:
    if text.lower() in ("none", "null"):
        return None
    if key in BOOL_COLUMNS:
        if text.lower() not in ("yes", "no", "true", "false", "1", "0"):
            raise UsageError(f"--where {key}={text}: expected yes/no")
        return text.lower() in ("yes", "true", "1")
    try:
        if key in INT_COLUMNS:
            return int(text)
        if key in FLOAT_COLUMNS:
            return float(text)
        if key == "config_set":
            return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    except ValueError:
        kind = "an integer" if key in INT_COLUMNS else "a number" if key in FLOAT_COLUMNS \
            else 'JSON such as {"maxmemory-policy":"allkeys-lru"}'
        raise UsageError(f"--where {key}={text}: expected {kind}") from None
    return text


def parse_where(items: Sequence[str]) -> SeriesParams:
    """``key=value`` filters over KEY_FIELDS, typed; UsageError (did-you-mean) otherwise."""
    out: SeriesParams = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise UsageError(f"--where {item!r}: expected key=value, e.g. command=SET")
        if key not in KEY_FIELDS:
            hint = _did_you_mean(key, KEY_FIELDS)
            raise UsageError(f"--where {key!r} is not a series field{hint}; "
                             f"fields: {', '.join(KEY_FIELDS)}")
        out[key] = _typed_value(key, text.strip())
    return out


def _filters(where: SeriesParams, include_disturbed: bool = False) -> ColumnElement[bool]:
    clauses: list[ColumnElement[bool]] = [trials.c.status == "ok"]
    if not include_disturbed:
        clauses.append(trials.c.disturbed.is_(False))
    for key, value in where.items():
        column = trials.c[key]
        if value is None:
            clauses.append(column.is_(None))
        elif key == "command":
            clauses.append(func.upper(column) == str(value).upper())
        else:
            clauses.append(column == value)
    return and_(*clauses)


def latest_revisions(engine: Engine, last: int, where: SeriesParams,
                     include_disturbed: bool = False) -> list[Revision]:
    """The ``last`` newest revisions with ok trials matching ``where``, oldest first.
    Newest = latest commit time when the commits table knows it, else first measurement."""
    when = func.coalesce(func.max(commits.c.committed_at), func.min(trials.c.timestamp))
    query = (select(trials.c.revision, when.label("when"))
             .select_from(trials.outerjoin(commits, commits.c.sha == trials.c.revision))
             .where(_filters(where, include_disturbed)).group_by(trials.c.revision)
             .order_by(when.desc(), trials.c.revision.desc()).limit(last))
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return [Revision(r.revision, r.when) for r in reversed(rows)]


def disturbed_count(engine: Engine, revisions: Sequence[str] | None,
                    where: SeriesParams) -> int:
    """Ok trials matching ``where`` (of ``revisions``, or of every revision) that history
    leaves out by default because they were disturbed: what a reader is told."""
    condition = and_(_filters(where, include_disturbed=True), trials.c.disturbed.is_(True))
    if revisions is not None:
        condition = and_(condition, trials.c.revision.in_(list(revisions)))
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(trials)
                                .where(condition)).scalar_one())


def resolve_revision(engine: Engine, prefix: str) -> str:
    """The one revision that is ``prefix`` or starts with it; UsageError if none or several."""
    like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    query = (select(trials.c.revision).where(or_(trials.c.revision == prefix,
                                                 trials.c.revision.like(like, escape="\\")))
             .distinct().limit(5))
    with engine.connect() as conn:
        found = list(conn.execute(query).scalars())
    if prefix in found:
        return prefix
    if len(found) == 1:
        return str(found[0])
    if not found:
        raise UsageError(f"--sha {prefix}: no results for that commit or label in the database")
    raise UsageError(f"--sha {prefix} is ambiguous: {', '.join(found)}")


def summary_source(include_disturbed: bool = False) -> FromClause:
    """What cells are read from: ``metric_summary`` (ok trials that were not disturbed), or
    with ``include_disturbed`` the same columns aggregated from the metrics of every ok
    trial (named ``metric_summary`` too, so queries read either alike)."""
    if not include_disturbed:
        return metric_summary
    value = metrics.c.value
    return (select(trials.c.series_key, trials.c.revision, metrics.c.name,
                   func.count(value).label("n"), func.sum(value).label("total"),
                   func.sum(value * value).label("sumsq"), func.min(value).label("min"),
                   func.max(value).label("max"))
            .select_from(metrics.join(trials, trials.c.id == metrics.c.trial_id))
            .where(trials.c.status == "ok")
            .group_by(trials.c.series_key, trials.c.revision, metrics.c.name)
            .subquery("metric_summary"))


def series_filter(where: SeriesParams, source: FromClause = metric_summary,
                  include_disturbed: bool = False) -> ColumnElement[bool]:
    """``source`` rows of the series matching ``where`` (every row when it is empty:
    the summary holds ok trials only). A series key is the hash of the KEY_FIELDS that
    ``where`` filters on, so a series matches as a whole."""
    if not where:
        return true()
    keys = select(trials.c.series_key).where(_filters(where, include_disturbed)).distinct()
    return source.c.series_key.in_(keys)


def _cells_query(revisions: Sequence[str] | None, names: Sequence[str],
                 where: SeriesParams, include_disturbed: bool = False) -> Select[Any]:
    source = summary_source(include_disturbed)
    s = source.c
    condition = and_(series_filter(where, source, include_disturbed),
                     s.name.in_(names) if names else true(),
                     s.revision.in_(revisions) if revisions is not None else true())
    mean = s.total.op("/", return_type=Float())(s.n)  # no NUMERIC cast of n: stays double
    return select(s.series_key, s.revision, s.name, s.n, mean.label("mean"),
                  s.sumsq).where(condition)


def _sd(n: int, mean: float, sumsq: float) -> float:
    """Sample sd from count, mean and sum of squares: sqrt((Σx² − n·x̄²)/(n−1))."""
    if n < 2:
        return math.nan
    return math.sqrt(max(sumsq - n * mean * mean, 0.0) / (n - 1))


# A query's bind parameters: scalars, and lists for ANY(CAST(:names AS text[])).
BindParams = Mapping[str, str | int | float | bool | list[str] | None]


def fetch_rows(conn: Connection, query: Select[Any] | TextClause,
               params: BindParams | None = None) -> Sequence[Sequence[Any]]:
    """The query's rows; on PostgreSQL through a binary-format psycopg cursor, which reads
    2 million summary rows (or histories as arrays) in about half the time of the text
    format SQLAlchemy's execute uses."""
    driver = conn.connection.driver_connection
    if conn.dialect.name != "postgresql" or driver is None:
        return conn.execute(query, params or {}).all()
    compiled = query.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    with driver.cursor(binary=True) as cursor:
        rows: list[Sequence[Any]] = cursor.execute(
            str(compiled), {**compiled.params, **(params or {})}).fetchall()
    return rows


def cells(engine: Engine, revisions: Sequence[str] | None, names: Sequence[str],
          where: SeriesParams, include_disturbed: bool = False) -> list[Cell]:
    """Per (series, revision, metric) aggregates over ok trials (all revisions when None),
    disturbed ones left out unless ``include_disturbed``."""
    query = _cells_query(revisions, names, where, include_disturbed)
    with engine.connect() as conn:
        return [Cell(key, rev, name, int(n), float(mean), _sd(int(n), float(mean), float(sumsq)))
                for key, rev, name, n, mean, sumsq in fetch_rows(conn, query)]


def series_fields(engine: Engine, keys: Sequence[str]) -> dict[str, SeriesParams]:
    """The KEY_FIELDS values of each series (from one of its trials)."""
    if not keys:
        return {}
    first = (select(func.min(trials.c.id)).where(trials.c.series_key.in_(keys))
             .group_by(trials.c.series_key))
    query = select(trials.c.series_key, *(trials.c[f] for f in KEY_FIELDS)).where(
        trials.c.id.in_(first))
    with engine.connect() as conn:
        return {r.series_key: {f: getattr(r, f) for f in KEY_FIELDS}
                for r in conn.execute(query)}

