"""core/proc.py and core/git.py: the one process runner and the one git runner."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from kvperf.core.errors import CommandError, GitError
from kvperf.core.git import git, subcommand
from kvperf.core.proc import file_tail, probe, run, run_logged


def test_run_captures_stdout_and_stderr_apart(tmp_path: Path) -> None:
    done = run([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"],
               cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "out\n", "err\n")
    assert done.check() is done


def test_a_failure_names_the_command_and_its_last_line() -> None:
    done = run([sys.executable, "-c", "import sys; print('first'); sys.exit('last words')"])
    with pytest.raises(CommandError, match=r"-c .* failed \(exit 1\): last words$") as info:
        done.check()
    assert info.value.code == 1 and info.value.exited and "first" in info.value.tail()


def test_missing_and_slow_commands_are_command_errors_with_shell_codes() -> None:
    with pytest.raises(CommandError, match="not found") as missing:
        run(["/nonexistent/kvperf-tool", "--version"])
    assert missing.value.code == 127 and not missing.value.exited
    started = time.monotonic()
    with pytest.raises(CommandError, match="timed out after 0 s") as slow:
        run(["sleep", "30"], timeout=0.2)
    assert slow.value.code == 124 and not slow.value.exited and time.monotonic() - started < 10


def test_probe_never_raises_for_the_command() -> None:
    assert probe(["/nonexistent/kvperf-tool"]) == (127, "/nonexistent/kvperf-tool: not found")
    assert probe([sys.executable, "-c", "print('v1')"]) == (0, "v1\n")


def test_run_logged_appends_and_streams_lines(tmp_path: Path) -> None:
    log, seen = tmp_path / "logs" / "build.log", []
    code = run_logged([sys.executable, "-c", "print('a'); print('b')"], log,
                      on_line=seen.append)
    assert code == 0 and seen == ["a", "b"]
    assert file_tail(log, 2) == "a\nb"
    assert file_tail(tmp_path / "missing.log") == ""


def test_git_errors_name_the_subcommand(tmp_path: Path) -> None:
    assert subcommand(("--git-dir", "x.git", "rev-parse", "HEAD")) == "rev-parse"
    assert subcommand(("-C", "repo", "log")) == "log"
    with pytest.raises(GitError, match=r"^git log failed \(exit \d+\): .*not a git"):
        git("-C", str(tmp_path), "log")


def test_git_redacts_url_credentials_in_its_errors(tmp_path: Path) -> None:
    with pytest.raises(GitError) as info:
        git("clone", "--quiet", "https://user:secret@127.0.0.1:1/r.git", str(tmp_path / "c"),
            timeout=60)
    assert "secret" not in str(info.value) and "secret" not in info.value.tail()


def test_starts_never_fail_while_another_thread_changes_the_environment() -> None:
    """A child started with env=None read the C library's ``environ`` in kvperf's own memory
    (vfork); a thread setting and removing a variable meanwhile (pytest, at every test phase)
    made the exec fail with "Bad address" — twice in CI. Without the copy this test failed in
    each of 3 runs; with it, no start failed in 6,287 (20 s of the same).
    The test runs 4 s and at least 300 starts: with a release build beside it on a fresh
    machine's 2 cores, 4 s held only 108 starts (27/s, against ~900/s from one thread on a
    quiet one)."""
    begun = time.monotonic()
    failures: list[str] = []
    started = [0]

    def going() -> bool:
        elapsed = time.monotonic() - begun
        return elapsed < 4.0 or (started[0] < 300 and elapsed < 60.0)

    def starts() -> None:
        while going():
            code, out = probe(["/bin/true"])
            started[0] += 1
            if code != 0:
                failures.append(out)

    def churn() -> None:
        while going():
            os.environ["KVPERF_TEST_CHURN"] = "x" * 64
            del os.environ["KVPERF_TEST_CHURN"]

    threads = [threading.Thread(target=f) for f in (starts, starts, churn)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert started[0] > 200 and not failures, (started[0], failures[:3])


def test_a_child_gets_kvperf_s_environment_as_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the copy means: the variables of ``os.environ`` (a bare ``os.putenv`` behind its
    back is not seen), and an explicit ``env`` replaces them."""
    monkeypatch.setenv("KVPERF_TEST_SEEN", "yes")
    os.putenv("KVPERF_TEST_UNSEEN", "yes")
    try:
        printed = run([sys.executable, "-c", "import os; print(sorted(k for k in os.environ "
                       "if k.startswith('KVPERF_TEST_')))"]).stdout
    finally:
        os.unsetenv("KVPERF_TEST_UNSEEN")
    assert "KVPERF_TEST_SEEN" in printed and "KVPERF_TEST_UNSEEN" not in printed
    alone = run(["/usr/bin/env"], env={"ONLY": "1"}).stdout
    assert alone.strip().splitlines() == ["ONLY=1"]
