"""`kvperf regressions --bisect`'s flags are checked before the history is read: exit 2 with
one message, no database opened, nothing built (docs/guide/continuous.md "Change points")."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvperf.cli.main import main


@pytest.mark.parametrize(("flags", "says"), [
    (["--json"], "--bisect does not apply with --json"),
    (["--build-jobs", "0"], "--build-jobs must be at least 1, got 0"),
    (["--make-args", "CFLAGS='-O2"], "--make-args \"CFLAGS='-O2\""),
    (["--no-repo"], "building refs needs --repo"),
])
def test_bisect_flags_refused_before_the_history_is_read(
        flags: list[str], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # not a git repository: no --repo default
    db = tmp_path / "history.db"
    repo = [] if flags == ["--no-repo"] else ["--repo", str(tmp_path)]
    flags = [f for f in flags if f != "--no-repo"]
    code = main(["regressions", "--db", f"sqlite:///{db}", "--bisect", *repo,
                 "--build-cache", str(tmp_path / "cache"), *flags])
    err = capsys.readouterr().err
    assert code == 2, err
    assert says in " ".join(err.split()), err
    assert not db.exists() and not (tmp_path / "cache").exists()


def test_json_without_bisect_still_lists(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The refusal is --bisect's: --json alone prints the (empty) list, exit 0."""
    code = main(["regressions", "--db", f"sqlite:///{tmp_path / 'h.db'}", "--json"])
    assert code == 0 and capsys.readouterr().out.strip() == "[]"
