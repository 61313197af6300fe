"""git in the build stage: mirrors, ref resolution (refs are data), worktrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvperf.core.errors import UsageError
from kvperf.sourcebuild import git
from tests.unit.sourcebuild.toy_repo import git as run_git
from tests.unit.sourcebuild.toy_repo import make_toy_repo


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    return make_toy_repo(tmp_path / "toy")


def test_refs_resolve_to_full_shas(toy: Path, tmp_path: Path) -> None:
    mirror = git.update_mirror(tmp_path / "cache", str(toy))
    assert git.resolve_ref(mirror, "v1") == run_git(toy, "rev-parse", "v1")
    assert git.resolve_ref(mirror, "main~1") == run_git(toy, "rev-parse", "v2")
    short = run_git(toy, "rev-parse", "--short", "v2")
    assert git.resolve_ref(mirror, short) == run_git(toy, "rev-parse", "v2")


def test_new_commits_are_fetched_into_the_existing_mirror(toy: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    git.update_mirror(cache, str(toy))
    (toy / "src" / "server.c").write_text("int x = 3;\n")
    run_git(toy, "commit", "-qam", "v3")
    run_git(toy, "tag", "v3")
    mirror = git.update_mirror(cache, str(toy))
    assert git.resolve_ref(mirror, "v3") == run_git(toy, "rev-parse", "v3")


@pytest.mark.parametrize("ref", ["nope", "v1;touch PWNED", "$(touch PWNED)", "`id`", "v1 v2"])
def test_unknown_and_hostile_refs_are_usage_errors(toy: Path, tmp_path: Path,
                                                   ref: str) -> None:
    mirror = git.update_mirror(tmp_path / "cache", str(toy))
    with pytest.raises(UsageError, match="names no commit"):
        git.resolve_ref(mirror, ref)
    assert not list(tmp_path.rglob("PWNED")) and not list(Path.cwd().glob("PWNED"))


def test_a_tag_with_shell_metacharacters_is_just_a_name(toy: Path, tmp_path: Path) -> None:
    run_git(toy, "tag", "x;$(touch_PWNED)", "v1")
    mirror = git.update_mirror(tmp_path / "cache", str(toy))
    assert git.resolve_ref(mirror, "x;$(touch_PWNED)") == run_git(toy, "rev-parse", "v1")


def test_a_ref_cannot_become_an_option(toy: Path, tmp_path: Path) -> None:
    mirror = git.update_mirror(tmp_path / "cache", str(toy))
    with pytest.raises(UsageError, match="not a git ref"):
        git.resolve_ref(mirror, "--all")


def test_missing_repository_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such directory"):
        git.update_mirror(tmp_path / "cache", str(tmp_path / "missing"))


def test_worktree_checks_out_the_commit_and_replaces_a_stale_one(toy: Path,
                                                                 tmp_path: Path) -> None:
    mirror = git.update_mirror(tmp_path / "cache", str(toy))
    dest = tmp_path / "wt"
    git.add_worktree(mirror, git.resolve_ref(mirror, "v1"), dest)
    assert (dest / "src" / "server.c").read_text() == "int x = 1;\n"
    (dest / "junk").write_text("x")
    git.add_worktree(mirror, git.resolve_ref(mirror, "v2"), dest)
    assert (dest / "src" / "server.c").read_text() == "int x = 2;\n"
    assert not (dest / "junk").exists()


def test_a_tree_left_by_another_clones_mirror_is_replaced(toy: Path, tmp_path: Path) -> None:
    """A failed build leaves its tree in the shared cache; the same commit from another
    clone of the repository (another mirror) must still check out there (the fixture
    repository's move to a new path once failed every rebuild of `broken` so)."""
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(toy), str(clone))
    first = git.update_mirror(tmp_path / "cache", str(toy))
    second = git.update_mirror(tmp_path / "cache", str(clone))
    assert first != second
    dest = tmp_path / "cache" / "builds" / "tree"
    git.add_worktree(first, git.resolve_ref(first, "v1"), dest)
    git.add_worktree(second, git.resolve_ref(second, "v2"), dest)
    assert (dest / "src" / "server.c").read_text() == "int x = 2;\n"


def test_commit_info(toy: Path, tmp_path: Path) -> None:
    mirror = git.update_mirror(tmp_path / "cache", str(toy))
    info = git.commit_info(mirror, git.resolve_ref(mirror, "v2"))
    assert info.subject == "commit v2" and info.author == "t"
    assert "T" in info.committed_at.isoformat()


def test_first_parent_range_lists_good_to_bad_oldest_first(toy: Path, tmp_path: Path) -> None:
    mirror = git.update_mirror(tmp_path / "cache", str(toy))
    v1, v2, broken = (run_git(toy, "rev-parse", t) for t in ("v1", "v2", "broken"))
    commits = git.first_parent_range(mirror, v1, broken)
    assert [c.sha for c in commits] == [v2, broken]
    assert [c.subject for c in commits] == ["commit v2", "commit broken"]
    with pytest.raises(UsageError, match=f"GOOD {broken[:12]} is not an ancestor of BAD"):
        git.first_parent_range(mirror, broken, v1)
    with pytest.raises(UsageError, match="not a full commit sha"):
        git.first_parent_range(mirror, "v1", broken)
