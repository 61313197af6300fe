"""sourcebuild.git_log against real git repositories made in a temp dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvperf.core.errors import UsageError
from kvperf.sourcebuild.git_log import branch_commits, parse_log
from tests.unit.fleet.gitrepo import make_repo


def test_local_repo_newest_first_with_dates_and_subjects(tmp_path: Path) -> None:
    shas = make_repo(tmp_path / "r", 5)
    got = branch_commits(str(tmp_path / "r"), "unstable", 3)
    assert [c.sha for c in got] == shas[::-1][:3]
    assert got[0].subject == "change 4: a | b"
    assert got[0].author == "A U Thor"
    assert got[0].committed_at.isoformat() == "2025-01-01T00:04:00+00:00"


def test_url_is_cloned_shallow(tmp_path: Path) -> None:
    shas = make_repo(tmp_path / "r", 4)
    got = branch_commits(f"file://{tmp_path / 'r'}", "unstable", 2)
    assert [c.sha for c in got] == shas[::-1][:2]


def test_unknown_branch_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", 1)
    with pytest.raises(UsageError, match="branch 'nope'"):
        branch_commits(str(tmp_path / "r"), "nope", 3)


def test_not_a_repo_and_bad_counts(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="repository"):
        branch_commits(str(tmp_path), "unstable", 3)
    with pytest.raises(UsageError, match="--max-commits"):
        branch_commits(str(tmp_path), "unstable", 0)


def test_parse_log_keeps_separators_in_subject() -> None:
    line = "\x1f".join(["a" * 40, "2025-01-02T03:04:05+02:00", "Me", "x \x1f y"])
    (c,) = parse_log(line + "\n\n")
    assert c.subject == "x \x1f y"
    assert c.committed_at.utcoffset() is not None
