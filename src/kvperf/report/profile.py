"""The artifact table of a profiled run (terminal and markdown): which file holds which
artifact of which trial and node, then each node's top self-CPU symbols and DSOs, and the
share of on-CPU samples per shared object (the server, a module's .so, libc, the kernel)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from kvperf.results.profile import dso_shares, subject_nodes
from kvperf.results.records import ProfileEntry, ProfileNode, ProfileRecord
from kvperf.results.row import Row

ARTIFACT_COLUMNS = ("test", "profiler", "node", "artifact", "file")
TOP_COLUMNS = ("test", "node", "top self-CPU symbols", "top DSOs")
EXCLUDED_NOTE = ("profiled trials are excluded from timing statistics and verdicts "
                 "(perf sampling perturbs throughput and latency)")
TOP_SHOWN = 3
DSO_SHOWN = 6  # shared objects with a column of their own; the rest add up in "other"
DSO_TITLE = "On-CPU share per shared object"


def _test(row: Row, label: str | None = None, run: str | None = None) -> str:
    label = row.get("label", "") if label is None else label
    run = str(row.get("run")) if run is None else run
    params = [f"{short}={row.get(name)}" for short, name in
              (("d", "data_size"), ("P", "pipeline"), ("c", "clients"))
              if row.get(name) is not None]  # a definition's rows have none of them
    config_set = row.get("config_set") or {}
    client = [f"{config_set['client']} {config_set.get('concurrency', '')}".strip()
              ] if config_set.get("client") else []  # a client harness's row
    return " ".join([label or "", *client, str(row.get("command")), *params,
                     f"run {run}"]).strip()


def node_label(node: ProfileNode) -> str:
    """A server node's number, or "client" for a client harness's part (pure)."""
    return node.get("role") or str(node["node"])


def artifact_rows(rows: list[Row]) -> list[list[str]]:
    """One line per artifact file of every profiled row (pure)."""
    lines = []
    for row in rows:
        profile = row.get("profile")
        if not profile:
            continue
        for node in profile["nodes"]:
            for artifact, path in node["files"].items():
                lines.append([_test(row), f"{profile['profiler']} {profile['event']}",
                              node_label(node), artifact, path])
    return lines


DIFFERENTIAL = "differential flamegraph (B vs A, per request)"


def differential_rows(made: list[tuple[Row, str]],
                      profiler: str = "perf cpu-clock") -> list[list[str]]:
    """One artifact line per series' differential flamegraph: (a row of it, its file)."""
    return [[_test(row, label="", run="all"), profiler, "all",
             DIFFERENTIAL, path] for row, path in made]


def artifact_table(title: str, lines: list[list[str]]) -> Table:
    """An artifact table of the given lines."""
    table = Table(title=title)
    for column in ARTIFACT_COLUMNS:
        table.add_column(column, overflow="fold")
    for line in lines:
        table.add_row(*map(escape, line))
    return table


def markdown_artifacts(title: str, lines: list[list[str]]) -> str:
    return "\n".join([f"## {title}", "", *_md_table(ARTIFACT_COLUMNS, lines), ""]) + "\n"


def _top(entries: list[ProfileEntry]) -> str:
    return ", ".join(f"{e['name']} {e['self_pct']:.1f}%" for e in entries[:TOP_SHOWN])


def _profiled(rows: list[Row]) -> list[tuple[Row, ProfileRecord]]:
    """The profiled rows with their profile objects."""
    return [(row, profile) for row in rows if (profile := row.get("profile"))]


def _symbols(node: ProfileNode) -> str:
    """Top self-CPU symbols; in wall-time mode also where the threads blocked."""
    text = _top(node["top_symbols"])
    wall = node.get("wall_time")
    if wall:
        text += f" · of wall time: {_top(wall['top_off_cpu'])}"
    return text


def top_rows(rows: list[Row]) -> list[list[str]]:
    """Each profiled node's top symbols and DSOs by self CPU (pure)."""
    return [[_test(row), node_label(node), _symbols(node), _top(node["top_dsos"])]
            for row, profile in _profiled(rows) for node in profile["nodes"]]


def _dsos(profile: ProfileRecord) -> list[ProfileEntry]:
    """The row's per-DSO shares (rows written before ``dsos`` existed: from the nodes)."""
    return profile.get("dsos") or dso_shares(subject_nodes(profile["nodes"]))


def dso_columns(rows: list[Row]) -> list[str]:
    """The DSOs with the largest summed share over the profiled rows, at most DSO_SHOWN."""
    totals: dict[str, float] = {}
    for _, profile in _profiled(rows):
        for entry in _dsos(profile):
            totals[entry["name"]] = totals.get(entry["name"], 0.0) + entry["self_pct"]
    return sorted(totals, key=lambda n: (-totals[n], n))[:DSO_SHOWN]


def dso_rows(rows: list[Row]) -> tuple[list[str], list[list[str]]]:
    """(columns, lines): per profiled row its % of on-CPU samples in each of the top shared
    objects, then ``other`` (the rest of the samples perf attributed) (pure)."""
    names = dso_columns(rows)
    lines = []
    for row, profile in _profiled(rows):
        shares = {e["name"]: e["self_pct"] for e in _dsos(profile)}
        other = sum(v for n, v in shares.items() if n not in names)
        lines.append([_test(row), *(f"{shares.get(n, 0.0):.1f}%" for n in names),
                      f"{other:.1f}%"])
    return ["test", *names, "other"], lines


def dso_table(rows: list[Row]) -> Table:
    columns, lines = dso_rows(rows)
    table = Table(title=f"profile: {DSO_TITLE.lower()}")
    for column in columns:
        table.add_column(escape(column), overflow="fold",
                         justify="left" if column == "test" else "right")
    for line in lines:
        table.add_row(*map(escape, line))
    return table


def notes(rows: list[Row]) -> list[str]:
    """The exclusion note, and each distinct profiler note (e.g. no kernel stacks)."""
    found = [profile.get("note") for _, profile in _profiled(rows)]
    if not found:
        return []
    return [EXCLUDED_NOTE, *dict.fromkeys(n for n in found if n)]


def terminal_tables(rows: list[Row]) -> list[Table]:
    """The artifact table and the top self-CPU table (none when nothing was profiled)."""
    artifacts = artifact_rows(rows)
    if not artifacts:
        return []
    top = Table(title="profile: top self CPU")
    for column in TOP_COLUMNS:
        top.add_column(column, overflow="fold")
    for line in top_rows(rows):
        top.add_row(*map(escape, line))
    return [artifact_table("profile artifacts", artifacts), top, dso_table(rows)]


def _md_table(columns: tuple[str, ...], lines: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in lines]
    return out


def markdown(rows: list[Row]) -> str:
    """The same tables as markdown, with the notes ('' when nothing was profiled)."""
    artifacts = artifact_rows(rows)
    if not artifacts:
        return ""
    parts = ["## Profile artifacts", "", *_md_table(ARTIFACT_COLUMNS, artifacts), "",
             "## Top self CPU", "", *_md_table(TOP_COLUMNS, top_rows(rows)), ""]
    columns, lines = dso_rows(rows)
    parts += [f"## {DSO_TITLE}", "", *_md_table(tuple(columns), lines), ""]
    parts += [f"- {note}" for note in notes(rows)]
    return "\n".join(parts) + "\n"
