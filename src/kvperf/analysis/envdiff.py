"""What differs between the environments of two or more sides (pure).

Each side's facts are merged over its rows: the row's ``env`` (host facts, tools, the
server build's compiler and make arguments, pinning …; nested objects flattened to dotted
names) and its ``tool_version``. A fact whose value varies within a side shows every value
(``varies``). A fact is listed when the sides' values differ; facts that differ by design
between the sides of a compare (the ref, commit, build log, binary path) are left out. A
difference known to move results carries a warning: the CPU governor, turbo/boost,
mitigations, SMT, the CPU model and microcode, the compiler and build flags, another host;
a kernel difference carries a note. A fact some side did not record is listed without a
warning (an older kvperf collected fewer facts). CodSpeed's environment report and pyperf's
``check_system`` list the same facts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kvperf.results.records import Env
from kvperf.results.row import Row

ABSENT = "–"

# Facts that differ by design between the sides (what a compare compares), or per trial.
BY_DESIGN = frozenset({
    "ref", "commit_sha", "commit_date", "commit_subject", "build_log", "build_cached",
    "server_binary", "server_commit", "server_ref", "client_source", "build.sha",
    "build.ref", "build.seconds", "build.finished_at", "build.warm_from", "build.server_bin",
})

# Fact (or its prefix before a dot) → why a difference moves results.
MOVES_RESULTS = {
    "governor": "the CPU frequency governor changes clock speeds: set both to performance",
    "turbo": "turbo/boost changes clock speeds with load and temperature",
    "mitigations": "CPU vulnerability mitigations change the cost of syscalls and context "
                   "switches",
    "smt": "SMT (hyper-threading) shares a core between the server and its neighbours",
    "cpu": "another CPU model",
    "microcode": "another microcode revision (it can change mitigations and timings)",
    "host": "another machine",
    "build.compiler": "another compiler builds other code",
    "build.make_args": "other build flags build other code",
    "build.cflags": "other compiler flags build other code",
}
NOTES = {"kernel": "another kernel (scheduler, network stack and mitigations may differ)"}
UNRECORDED = "not recorded on every side (an older kvperf, or a binary kvperf did not build)"


@dataclass(frozen=True)
class FactDiff:
    """One fact that differs: its value per side (in side order; several joined with " | "
    when it varies within a side, ``–`` when a side lacks it), and why it matters."""

    fact: str
    values: tuple[str, ...]
    varies: bool
    warning: str | None = None  # known to move results
    note: str | None = None  # worth knowing


@dataclass(frozen=True)
class EnvDiff:
    """The differing facts of ``sides`` (names in order)."""

    sides: tuple[str, ...]
    facts: tuple[FactDiff, ...]

    @property
    def warnings(self) -> tuple[FactDiff, ...]:
        return tuple(f for f in self.facts if f.warning)

    def __bool__(self) -> bool:
        return bool(self.facts)


def flatten(env: Env, prefix: str = "") -> dict[str, str]:
    """Nested objects as dotted names; lists and scalars as text (None left out)."""
    out: dict[str, str] = {}
    for key, value in env.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out |= flatten(value, f"{name}.")
        elif value is not None and value != "":
            out[name] = " ".join(map(str, value)) if isinstance(value, list) else str(value)
    return out


def row_facts(row: Row) -> dict[str, str]:
    """A row's environment facts: its env flattened and the load tool's version."""
    env = row.get("env") or {}
    facts = flatten(env if isinstance(env, dict) else {})
    if row.get("tool_version"):
        facts.setdefault("tool_version", str(row.get("tool_version")))
    return facts


def side_facts(facts: Sequence[Mapping[str, str]]) -> dict[str, tuple[str, ...]]:
    """Each fact's distinct values over a side's rows, in first-seen order; a fact some rows
    lack gets ``–`` among its values."""
    names = list(dict.fromkeys(name for one in facts for name in one))
    return {name: tuple(dict.fromkeys(one.get(name, ABSENT) for one in facts))
            for name in names}


def _why(fact: str, table: Mapping[str, str]) -> str | None:
    return table.get(fact) or table.get(fact.split(".", 1)[0])


def env_diff(sides: Mapping[str, Sequence[Mapping[str, str]]]) -> EnvDiff:
    """The facts whose values differ between ``sides`` (name → each row's facts)."""
    merged = {name: side_facts(facts) for name, facts in sides.items() if facts}
    names = sorted({f for facts in merged.values() for f in facts} - BY_DESIGN)
    found = []
    for fact in names:
        values = [merged[side].get(fact, (ABSENT,)) for side in merged]
        if all(v == values[0] for v in values):  # the same (or varying alike) everywhere
            continue
        unrecorded = any(v == (ABSENT,) for v in values)  # an older kvperf, another tool
        found.append(FactDiff(fact, tuple(" | ".join(v) for v in values),
                              any(len(v) > 1 for v in values),
                              None if unrecorded else _why(fact, MOVES_RESULTS),
                              UNRECORDED if unrecorded else _why(fact, NOTES)))
    return EnvDiff(tuple(merged), tuple(found))


def rows_env_diff(sides: Mapping[str, Sequence[Row]]) -> EnvDiff:
    """``env_diff`` of result rows (every row, failed ones too: the environment is the
    side's whatever its trials did)."""
    return env_diff({name: [row_facts(r) for r in rows] for name, rows in sides.items()})


def changed_facts(before: Mapping[str, tuple[str, ...]], after: Mapping[str, tuple[str, ...]]
                  ) -> tuple[FactDiff, ...]:
    """The facts of a machine that changed from one history point to the next (each a
    ``side_facts`` merge). A fact one point lacks is not a change (a newer kvperf collects
    more facts); nor are the facts that differ by design (the commit, its build log)."""
    names = sorted((before.keys() & after.keys()) - BY_DESIGN)
    return tuple(FactDiff(f, (" | ".join(before[f]), " | ".join(after[f])),
                          len(before[f]) > 1 or len(after[f]) > 1, _why(f, MOVES_RESULTS),
                          _why(f, NOTES))
                 for f in names if before[f] != after[f])


@dataclass(frozen=True)
class EnvChange:
    """A history point whose environment differs from the previous point that has one."""

    index: int  # of the point in the history
    facts: tuple[FactDiff, ...]

    @property
    def label(self) -> str:
        """``environment changed: governor performance → powersave; …``"""
        return "environment changed: " + "; ".join(
            f"{f.fact} {f.values[0]} → {f.values[1]}" for f in self.facts)


def history_changes(points: Sequence[Sequence[Env]]) -> tuple[EnvChange, ...]:
    """Per history point (its runs' envs, in order), where the environment changed from
    the last point before it that recorded one."""
    out, last = [], None
    for index, envs in enumerate(points):
        if not envs:
            continue
        merged = side_facts([flatten(env) for env in envs])
        if last is not None and (facts := changed_facts(last, merged)):
            out.append(EnvChange(index, facts))
        last = merged
    return tuple(out)
