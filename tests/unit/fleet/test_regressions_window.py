"""`kvperf regressions --window N` (docs/guide/continuous.md "Change points"): E-Divisive on
sliding windows finds a short-lived regime — a regression fixed for three commits, then back —
that the whole-series split misses; a window shorter than two segments is a usage error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvperf.cli.main import main
from kvperf.store.db import open_store, parse_url
from tests.unit.fleet.history_data import populate, sha

FIXED_AT, BROKEN_AGAIN_AT = 40, 43
SERIES = {  # rps: −10% from commit 20, back for commits 40-42, −10% again from 43
    "SET": (lambda i: 200_000.0 * (1.0 if i < 20 or FIXED_AT <= i < BROKEN_AGAIN_AT else 0.9),
            lambda i: 1.0),
}


def _points(db: str, capsys: pytest.CaptureFixture[str], *flags: str) -> list[tuple[int, str]]:
    """(first commit after, direction) of each listed change point, in commit order."""
    code = main(["regressions", "--db", db, "--metric", "rps", "--json", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    index = {sha(i): i for i in range(60)}
    return sorted((index[x["first_after"]["sha"]], x["direction"]) for x in json.loads(out))


def test_window_finds_a_short_regime_the_whole_series_misses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    populate(open_store(parse_url(db)), tmp_path / "results", 60, SERIES)
    assert _points(db, capsys) == [(20, "regression")]
    assert _points(db, capsys, "--window", "12") == [
        (20, "regression"), (FIXED_AT, "improvement"), (BROKEN_AGAIN_AT, "regression")]
    assert main(["regressions", "--db", db, "--window", "5"]) == 2
    assert "--window must be at least 6, got 5" in capsys.readouterr().err
