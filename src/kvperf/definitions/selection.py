"""Which definitions and topologies run: the corpus runner's selection flags (pure).

- ``tests_regexp``: ``re.search`` on the definition's name or file name (the runner searches
  the file path).
- ``priority_lower`` / ``priority_upper``: inclusive bounds on ``priority``; a definition
  without a priority is kept, as the runner keeps it.
- ``tested_groups`` / ``tested_commands``: names, matched case-insensitively against the
  definition's lists (any one matches). The runner takes regexes here; kvperf takes names so
  that a misspelt one is an error rather than an empty selection.
- ``topologies``: run only these topologies of each definition.

``check`` turns every selection mistake into a UsageError naming it (and what is known).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kvperf.core.errors import UsageError
from kvperf.definitions.model import Definition


@dataclass(frozen=True)
class Selection:
    tests_regexp: str = ".*"
    priority_lower: int | None = None
    priority_upper: int | None = None
    tested_groups: tuple[str, ...] = ()
    tested_commands: tuple[str, ...] = ()
    topologies: tuple[str, ...] = ()


def _known(values: set[str], limit: int = 12) -> str:
    ordered = sorted(values)
    more = f", … ({len(ordered)} in all)" if len(ordered) > limit else ""
    return ", ".join(ordered[:limit]) + more


def _check_names(flag: str, wanted: tuple[str, ...], present: set[str]) -> None:
    lowered = {value.lower() for value in present}
    for name in wanted:
        if name.lower() not in lowered:
            raise UsageError(f"{flag} {name!r}: no loaded definition has it (known: "
                             f"{_known(present) or 'none'})")


def check(selection: Selection, definitions: tuple[Definition, ...],
          topologies: set[str]) -> None:
    """UsageError for a bad regexp, inverted priority bounds or an unknown name."""
    try:
        re.compile(selection.tests_regexp)
    except re.error as exc:
        raise UsageError(f"--tests-regexp {selection.tests_regexp!r}: {exc}") from None
    low, high = selection.priority_lower, selection.priority_upper
    if low is not None and high is not None and low > high:
        raise UsageError(f"--tests-priority-lower-limit {low} is above "
                         f"--tests-priority-upper-limit {high}")
    _check_names("--tested-groups", selection.tested_groups,
                 {g for d in definitions for g in d.tested_groups})
    _check_names("--tested-commands", selection.tested_commands,
                 {c for d in definitions for c in d.tested_commands})
    for name in selection.topologies:
        if name not in topologies:
            raise UsageError(f"--topologies {name!r} is not a known topology (known: "
                             f"{_known(topologies, 40)})")


def _overlaps(wanted: tuple[str, ...], have: tuple[str, ...]) -> bool:
    return not wanted or bool({w.lower() for w in wanted} & {h.lower() for h in have})


def selected(definition: Definition, selection: Selection) -> bool:
    pattern = re.compile(selection.tests_regexp)
    if not (pattern.search(definition.name) or pattern.search(definition.source.name)):
        return False
    priority = definition.priority
    if priority is not None:
        if selection.priority_lower is not None and priority < selection.priority_lower:
            return False
        if selection.priority_upper is not None and priority > selection.priority_upper:
            return False
    if selection.topologies and not set(selection.topologies) & set(definition.topologies):
        return False
    return (_overlaps(selection.tested_groups, definition.tested_groups)
            and _overlaps(selection.tested_commands, definition.tested_commands))


def select(definitions: tuple[Definition, ...], selection: Selection
           ) -> tuple[Definition, ...]:
    return tuple(d for d in definitions if selected(d, selection))
