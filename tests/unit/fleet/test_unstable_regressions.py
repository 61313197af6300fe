"""`kvperf regressions --unstable` on a stored history (SQLite, pushed through the store):
SET's rps wobbles ±6% from commit to commit — more than its 2% minimum effect — so it is
listed as unstable and its change point (a 40% drop at commit 20) is left out of the list
and of the change_points table unless --include-unstable; GET is quiet and its 10% step
is listed as always."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from kvperf.store.db import open_store, parse_url
from tests.helpers import run_main
from tests.unit.fleet.history_data import T0, populate, seed_row, sha

STEP_AT = 20
WOBBLE = (0.0, 0.05, -0.04, 0.06, -0.06, 0.02, -0.03, 0.04, -0.05, 0.01, -0.02)


def _set(i: int) -> float:
    return 200_000.0 * (0.6 if i >= STEP_AT else 1.0) * (1 + WOBBLE[i * 7 % len(WOBBLE)])


SERIES = {"SET": (_set, lambda i: 1.0),
          "GET": (lambda i: 250_000.0 * (0.9 if i >= STEP_AT else 1.0), lambda i: 0.8)}


def _listed(db: str, *flags: str) -> list[tuple[str, str]]:
    done = run_main("regressions", "--db", db, "--metric", "rps", "--json", *flags)
    assert done.returncode == 0, done.stderr
    return [(x["params"]["command"], x["first_after"]["sha"]) for x in json.loads(done.stdout)]


def test_unstable_series_are_listed_and_their_change_points_left_out(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    populate(open_store(parse_url(db)), tmp_path / "results", 40, SERIES, noise=0.002)
    unstable = run_main("regressions", "--db", db, "--metric", "rps", "--unstable", "--json")
    assert unstable.returncode == 0, unstable.stderr
    (found,) = json.loads(unstable.stdout)
    assert (found["params"]["command"], found["metric"], found["source"]) == ("SET", "rps",
                                                                              "history")
    assert found["noise"] > found["min_effect"] == 0.02 and found["pairs"] == 38
    assert _listed(db) == [("GET", sha(STEP_AT))]
    assert sorted(_listed(db, "--include-unstable")) == [("GET", sha(STEP_AT)),
                                                        ("SET", sha(STEP_AT))]
    table = run_main("regressions", "--db", db, "--metric", "rps")
    assert "1 change point(s) on 1 unstable series left out" in " ".join(table.stdout.split())
    text = run_main("regressions", "--db", db, "--metric", "rps", "--unstable")
    assert "unstable series: A/A noise above the minimum effect" in text.stdout
    bad = run_main("regressions", "--db", db, "--unstable", "--store")
    assert bad.returncode == 2 and "--unstable lists the unstable series" in bad.stderr

    for flags, stored in (((), 1), (("--include-unstable",), 2)):
        done = run_main("regressions", "--db", db, "--metric", "rps", "--store", *flags)
        assert f"stored {stored} change point(s)" in done.stderr, done.stderr


def _noise_run(root: Path) -> Path:
    """A `kvperf noise` results directory for GET: six rounds, B off A by ±5% alternately
    (a measured A/A spread of ~5.5%, where GET's history is quiet)."""
    for side, sign in (("A", 0.0), ("B", 1.0)):
        rows = [seed_row(0, t, "GET", 250_000.0 * (1 + sign * 0.05 * (-1) ** t), 0.8,
                         T0 + timedelta(minutes=t)) for t in range(6)]
        for t, row in enumerate(rows):
            row["run"], row["trial_id"] = t, "get"  # kvperf's pairing: trial and round
        (root / side).mkdir(parents=True)
        (root / side / "metrics.json").write_text(json.dumps(rows))
    return root


def test_a_noise_run_measures_the_series_it_ran(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    populate(open_store(parse_url(db)), tmp_path / "results", 40, SERIES, noise=0.002)
    noise = _noise_run(tmp_path / "noise")
    done = run_main("regressions", "--db", db, "--metric", "rps", "--unstable", "--json",
                    "--noise-run", noise)
    assert done.returncode == 0, done.stderr
    found = {x["params"]["command"]: x for x in json.loads(done.stdout)}
    assert set(found) == {"SET", "GET"}
    assert found["GET"]["source"] == "noise run" and found["GET"]["noise"] > 0.05
    assert found["SET"]["source"] == "history"
    assert _listed(db, "--noise-run", str(noise)) == []  # GET's step now left out too
    bad = run_main("regressions", "--db", db, "--unstable", "--noise-run", tmp_path)
    assert bad.returncode == 2 and "not a `kvperf noise` results directory" in bad.stderr
