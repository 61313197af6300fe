"""``compare A B --profile`` (and ``--measure instructions``): one differential flamegraph
per series, B against A.

Per side the folded stacks of every node and run of the series are summed and divided by the
requests those runs executed (perf: CPU picoseconds per request; instructions: instructions
per 1000 requests), so that a side that served more requests in its measure stage does not
look slower. kvflame (inferno's differential folding) then colours each frame of B red where
its self cost per request grew and blue where it shrank.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import CommandError, ServerError
from kvperf.core.proc import run
from kvperf.pipeline.run.profiling import kvflame_path
from kvperf.results import folded
from kvperf.results.profile import subject_nodes
from kvperf.results.row import Row

# what the scaled counts are, per kind of stacks (folded.PER_REQUEST_SCALE: × 1000 / request)
COUNT_NAMES = {"profile": "ps/request", "instructions": "instructions/1000 requests",
               "wall-time": "ns of wall time/request"}  # wall-time stacks are in µs


@dataclass(frozen=True)
class Differential:
    """One series' differential flamegraph."""

    trial_id: str
    row: Row  # a B row of the series (its parameters name the series)
    svg: Path


def _stack_files(row: Row, base: Path, kind: str) -> list[Path]:
    """The folded-stack files of a row: each node's perf stacks, or callgrind's call graph."""
    if kind == "instructions":
        graph = (row.get("instructions") or {}).get("flamegraph")
        return [(base / graph).with_suffix(".folded")] if graph else []
    nodes = subject_nodes((row.get("profile") or {}).get("nodes", []))
    return [base / node["files"]["folded stacks"] for node in nodes]


def _side(rows: list[Row], base: Path, kind: str) -> Counter[str] | None:
    """A side's stacks of one series scaled per request (None: no stacks)."""
    total: Counter[str] = Counter()
    requests = 0.0
    for row in rows:
        count, files = folded.requests_of(row), _stack_files(row, base, kind)
        if not files or not count:
            continue
        requests += count
        for path in files:
            total.update(folded.parse(path.read_text()))
    return folded.per_request(total, requests) if requests and total else None


def _series(rows: list[Row]) -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row["trial_id"], []).append(row)
    return grouped


def differentials(a_rows: list[Row], b_rows: list[Row], a_dir: Path,
                  b_dir: Path, out_dir: Path, title: str,
                  kind: str = "profile") -> list[Differential]:
    """Write ``flamediff/<trial_id>.{a,b}.folded`` and ``.svg`` per series both sides profiled."""
    made = []
    b_series = _series(b_rows)
    for trial_id, a_group in _series(a_rows).items():
        a, b = _side(a_group, a_dir, kind), _side(b_series.get(trial_id, []), b_dir, kind)
        if a is None or b is None:
            continue
        stem = out_dir / "flamediff" / trial_id
        stem.parent.mkdir(parents=True, exist_ok=True)
        before, after = stem.with_suffix(".a.folded"), stem.with_suffix(".b.folded")
        before.write_text(folded.render(a))
        after.write_text(folded.render(b))
        svg = stem.with_suffix(".svg")
        mode = (a_group[0].get("profile") or {}).get("mode")
        count_name = COUNT_NAMES["wall-time" if mode == "wall-time" else kind]
        try:
            run([str(kvflame_path()), "diff", str(before), str(after), str(svg),
                 f"{title} · {trial_id}", count_name], name="kvflame diff").check()
        except CommandError as exc:
            raise ServerError(f"differential flamegraph of {trial_id}: {exc}") from None
        made.append(Differential(trial_id, b_series[trial_id][0], svg))
    return made
