"""`kvperf clients`' list of the client harnesses kvperf knows: a table (sorted by language
and name) and JSON (in the order they were found)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from kvperf.clients.manifest import Manifest
from kvperf.core.jsontypes import JsonObject


def harnesses_table(manifests: Sequence[Manifest]) -> Table:
    table = Table(title="Client harnesses (kvperf clients install NAME; "
                        "kvperf run --client NAME)")
    for column in ("name", "language", "library", "version", "models", "installed",
                   "summary"):
        table.add_column(column, overflow="fold")
    for m in sorted(manifests, key=lambda m: (m.language, m.name)):
        table.add_row(m.name, m.language, m.library, m.version,
                      ", ".join(c.value for c in m.models) or "?",
                      "yes" if m.installed else "no", escape(m.summary))
    return table


def harness_json(m: Manifest) -> JsonObject:
    return {"name": m.name, "language": m.language, "library": m.library,
            "version": m.version, "models": [c.value for c in m.models],
            "installed": m.installed, "summary": m.summary,
            "folder": str(m.folder), "install_dir": str(m.install_dir)}
