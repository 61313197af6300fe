"""One commit's definition corpus judged against a baseline commit's (pure): each test's
verdict on its throughput (analysis/comparison.py's unpaired rule: one run a side is judged
against the water line), its KPIs, failures, tests only one side has, and totals per
tested group. Regressions and broken KPIs make the exit status 1 (for CI)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kvperf.analysis.comparison import GroupKey, compare, group_key
from kvperf.analysis.verdict import DEFAULT_RULE, Rule, Verdict
from kvperf.results.row import Row, is_ok

OK, FAILED, NEW, GONE = "ok", "failed", "new", "not run"


@dataclass(frozen=True)
class Entry:
    """One test (definition × topology) of the commit: its status (``not run``: only the
    baseline has it), throughput on both sides, the change, verdict and why, its KPIs."""

    name: str
    topology: str
    groups: tuple[str, ...]
    status: str
    error: str | None = None
    rps: float | None = None
    base_rps: float | None = None
    verdict: str = ""
    reason: str = ""
    kpis: int = 0
    kpis_failed: tuple[str, ...] = ()

    @property
    def change(self) -> float | None:
        if self.rps is None or not self.base_rps:
            return None
        return self.rps / self.base_rps - 1


@dataclass(frozen=True)
class GroupTotal:
    group: str
    tests: int
    regressions: int
    improvements: int
    failed: int
    kpis_failed: int


@dataclass(frozen=True)
class CorpusReport:
    """The commit's corpus (and its baseline's, when one is given): entries sorted by
    change (the worst first; failures and tests without a change after), totals per group,
    the jobs' notes (refusals, why a job failed)."""

    commit: str
    baseline: str | None
    entries: tuple[Entry, ...]
    totals: tuple[GroupTotal, ...]
    notes: tuple[str, ...]

    @property
    def regressions(self) -> int:
        return sum(1 for e in self.entries if e.verdict == Verdict.REGRESSION)

    @property
    def kpis_failed(self) -> int:
        return sum(len(e.kpis_failed) for e in self.entries)

    @property
    def exit_code(self) -> int:
        return 1 if self.regressions or self.kpis_failed else 0


def _where(row: Row) -> tuple[str, str]:
    definition = row.get("definition") or {}
    return str(definition.get("name") or row["command"]), str(definition.get("topology", "?"))


def _entry(row: Row, base: Row | None, compared: bool) -> Entry:
    definition = row.get("definition") or {}
    kpis = definition.get("kpis") or []
    failed = tuple(f"{k['path']} {k['mode']} {k['bound']:g}: "
                   f"{'-' if k['value'] is None else format(k['value'], 'g')}"
                   for k in kpis if not k["passed"])
    name, topology = _where(row)
    ok = is_ok(row)
    return Entry(name, topology, tuple(definition.get("tested_groups") or ()) or ("-",),
                 OK if ok else FAILED, None if ok else str(row.get("error")),
                 row["rps"] if ok else None,
                 base["rps"] if base is not None and is_ok(base) else None,
                 NEW if compared and base is None else "", kpis=len(kpis),
                 kpis_failed=failed)


def _judged(entry: Entry, verdict: tuple[str, str] | None) -> Entry:
    if verdict is None:
        return entry
    return Entry(entry.name, entry.topology, entry.groups, entry.status, entry.error,
                 entry.rps, entry.base_rps, verdict[0], verdict[1], entry.kpis,
                 entry.kpis_failed)


def _order(entry: Entry) -> tuple[int, float, str, str]:
    change = entry.change
    rank = 0 if change is not None else 1 if entry.status == FAILED else 2
    return rank, change if change is not None and not math.isnan(change) else 0.0, \
        entry.name, entry.topology


def corpus_report(commit: str, rows: Sequence[Row], baseline: str | None = None,
                  base_rows: Sequence[Row] = (), notes: Sequence[str] = (),
                  rule: Rule = DEFAULT_RULE) -> CorpusReport:
    """The report (module doc); the last row of a test counts when a test ran twice."""
    new = {_where(r): r for r in rows}
    base = {_where(r): r for r in base_rows}
    keys: dict[GroupKey, tuple[str, str]] = {group_key(r): _where(r) for r in new.values()}
    judged = {}
    if baseline is not None:
        results, _ = compare(list(base.values()), list(new.values()), "rps", rule)
        judged = {keys[c.group]: (str(c.decision.verdict), c.decision.reason)
                  for c in results if c.group in keys}
    entries = [_judged(_entry(r, base.get(w), baseline is not None), judged.get(w))
               for w, r in new.items()]
    entries += [Entry(name, topology, (), GONE) for name, topology in base if
                (name, topology) not in new]
    entries.sort(key=_order)
    return CorpusReport(commit, baseline, tuple(entries), _totals(entries), tuple(notes))


def _totals(entries: Sequence[Entry]) -> tuple[GroupTotal, ...]:
    groups = sorted({g for e in entries for g in e.groups})
    return tuple(GroupTotal(
        g, sum(1 for e in entries if g in e.groups),
        sum(1 for e in entries if g in e.groups and e.verdict == Verdict.REGRESSION),
        sum(1 for e in entries if g in e.groups and e.verdict == Verdict.IMPROVEMENT),
        sum(1 for e in entries if g in e.groups and e.status == FAILED),
        sum(len(e.kpis_failed) for e in entries if g in e.groups)) for g in groups)
