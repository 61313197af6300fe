"""``compare A B --profile``: one differential flamegraph per series, B against A.

Per side the folded stacks of every node and run of the series are summed and divided by the
requests those runs executed (CPU picoseconds per request), so that a side that served more
requests in its measure stage does not look slower. kvflame (inferno's differential folding)
then colours each frame of B red where it grew per request and blue where it shrank.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import CommandError, ServerError
from kvperf.core.proc import run
from kvperf.pipeline.profiling import kvflame_path
from kvperf.results import folded
from kvperf.results.row import Row

COUNT_NAME = "ps/request"


@dataclass(frozen=True)
class Differential:
    """One series' differential flamegraph."""

    trial_id: str
    row: Row  # a B row of the series (its parameters name the series)
    svg: Path


def _side(rows: list[Row], base: Path) -> Counter[str] | None:
    """A side's stacks of one series in picoseconds per request (None: nothing profiled)."""
    total: Counter[str] = Counter()
    requests = 0.0
    for row in rows:
        count, profile = folded.requests_of(row), row.get("profile")
        if not profile or not count:
            continue
        requests += count
        for node in profile["nodes"]:
            total.update(folded.parse((base / node["files"]["folded stacks"]).read_text()))
    return folded.per_request(total, requests) if requests and total else None


def _series(rows: list[Row]) -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row["trial_id"], []).append(row)
    return grouped


def differentials(a_rows: list[Row], b_rows: list[Row], a_dir: Path,
                  b_dir: Path, out_dir: Path, title: str) -> list[Differential]:
    """Write ``flamediff/<trial_id>.{a,b}.folded`` and ``.svg`` per series both sides profiled."""
    made = []
    b_series = _series(b_rows)
    for trial_id, a_group in _series(a_rows).items():
        a, b = _side(a_group, a_dir), _side(b_series.get(trial_id, []), b_dir)
        if a is None or b is None:
            continue
        stem = out_dir / "flamediff" / trial_id
        stem.parent.mkdir(parents=True, exist_ok=True)
        before, after = stem.with_suffix(".a.folded"), stem.with_suffix(".b.folded")
        before.write_text(folded.render(a))
        after.write_text(folded.render(b))
        svg = stem.with_suffix(".svg")
        try:
            run([str(kvflame_path()), "diff", str(before), str(after), str(svg),
                 f"{title} · {trial_id}", COUNT_NAME], name="kvflame diff").check()
        except CommandError as exc:
            raise ServerError(f"differential flamegraph of {trial_id}: {exc}") from None
        made.append(Differential(trial_id, b_series[trial_id][0], svg))
    return made
