"""`kvperf run/compare --trace` take --retry-disturbed / --exclude-disturbed as any timed
trials do (compare retries by default, run does not); `trace stats --emit-workload` and
`trace anonymize --keep-slots` are declared."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

from kvperf.cli._disturbed import interference_flags
from kvperf.cli.main import build_parser
from kvperf.driver.trace_format import Record, Trace, write
from kvperf.pipeline.commands.replay import trace_compare_request, trace_request
from kvperf.pipeline.request.options import InterferencePolicy
from kvperf.pipeline.request.replay import TraceFlags
from tests.helpers import run_main

PARSER = build_parser()


def _policy(*argv: str, retry_default: bool) -> InterferencePolicy:
    """The policy the command's replay request gets (compare's default retries)."""
    args = PARSER.parse_args(list(argv))
    flags = TraceFlags(Path("t.kvt"), interference=interference_flags(args))
    if retry_default:
        return trace_compare_request(replace(flags, server_bins=("a", "b"))).interference
    return trace_request(flags).interference


def test_compare_trace_retries_disturbed_replays_unless_told_not_to() -> None:
    base = ("compare", "--trace", "t.kvt", "--server-bin", "a", "--server-bin", "b")
    assert _policy(*base, retry_default=True) == InterferencePolicy(retry=True)
    assert _policy(*base, "--no-retry-disturbed", "--exclude-disturbed",
                   retry_default=True) == InterferencePolicy(retry=False, exclude=True)


def test_run_trace_retries_only_when_asked() -> None:
    assert _policy("run", "--trace", "t.kvt", retry_default=False) == InterferencePolicy()
    assert _policy("run", "--trace", "t.kvt", "--retry-disturbed",
                   retry_default=False).retry


def test_trace_subcommand_flags() -> None:
    args = PARSER.parse_args(["trace", "stats", "t.kvt", "--emit-workload", "memtier"])
    assert args.emit_workload == "memtier"
    args = PARSER.parse_args(["trace", "anonymize", "a.kvt", "b.kvt", "--keep-slots"])
    assert args.keep_slots


def test_emit_workload_prints_one_command_line_and_refuses_an_empty_trace(
        tmp_path: Path) -> None:
    trace = tmp_path / "t.kvt"
    records = [Record(i % 2, i * 1000, (b"GET", f"k:{i % 30}".encode())) for i in range(300)]
    records += [Record(0, i * 3000, (b"SET", b"k:1", b"v" * 10)) for i in range(100)]
    write(trace, Trace(0, 0, records))
    done = run_main("trace", "stats", trace, "--emit-workload", "kvload")
    assert done.returncode == 0, done.stderr
    argv = shlex.split(done.stdout)
    assert argv[0] == "kvload" and argv[-3:] == ["SET", "key:__rand_int__", "__data__"]
    assert argv.count("GET") == 3 and argv[argv.index("-d") + 1] == "10"
    assert "uniform over 30" in done.stderr
    write(trace, Trace(0, 0, []))
    done = run_main("trace", "stats", trace, "--emit-workload", "memtier")
    assert done.returncode == 2 and "holds no commands" in done.stderr, done.stderr
