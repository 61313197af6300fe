"""`kvperf trace stats TRACE` and `kvperf trace anonymize IN OUT`: what a recorded trace
holds (command mix, connections, rate per second, key popularity with a fitted Zipf
exponent, value sizes, and the recorded reply sizes and latency when ``kvload record
--replies`` saw them), a synthetic workload approximating it (``--emit-workload``), and a copy
safe to share (docs/TRACES.md). A bad trace exits 2 with the byte offset."""

from __future__ import annotations

import argparse
import json
import shlex
from typing import Any

from rich.markup import escape
from rich.table import Table

from kvperf.analysis.trace_stats import TraceStats, stats
from kvperf.analysis.trace_workload import TOOLS, emit
from kvperf.cli._common import Cli
from kvperf.cli._paths import local_path
from kvperf.core.errors import UsageError
from kvperf.driver import trace_format
from kvperf.driver.trace_anonymize import anonymize_counting


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "trace", help="inspect or anonymize a recorded trace (kvload record)",
        description="Recorded traces (docs/TRACES.md): stats, anonymize.")
    sub = p.add_subparsers(dest="trace_command", required=True)
    s = sub.add_parser("stats", help="command mix, keys (Zipf exponent), value sizes, rate")
    s.add_argument("trace", type=local_path, metavar="TRACE")
    s.add_argument("--json", type=local_path, metavar="FILE", help="also write them as JSON")
    s.add_argument("--emit-workload", choices=TOOLS, metavar="kvload|memtier",
                   help="print only a command line approximating the trace: kvload's own "
                        "mode or `kvload memtier` (what is approximated goes to stderr)")
    s.set_defaults(handler=handle_stats)
    a = sub.add_parser("anonymize", help="keys and values replaced by deterministic stand-ins")
    a.add_argument("trace", type=local_path, metavar="IN")
    a.add_argument("out", type=local_path, metavar="OUT")
    a.add_argument("--salt", default="kvperf",
                   help="secret mixed into the stand-ins (default: kvperf; use your own so "
                        "that a known key cannot be matched to its stand-in)")
    a.add_argument("--keep-slots", action="store_true",
                   help="stand-ins also hash to their key's cluster slot (CRC16 mod 16384, "
                        "hash tags honoured)")
    a.set_defaults(handler=handle_anonymize)


def handle_stats(args: argparse.Namespace, cli: Cli) -> int:
    trace = trace_format.read(args.trace)
    found = stats(trace)
    if args.emit_workload is not None:
        if not trace.records:
            raise UsageError(f"{args.trace} holds no commands: no workload to emit")
        made = emit(args.emit_workload, trace, found)
        for note in made.notes:
            cli.err.print(escape(f"kvperf trace stats: {note}"), highlight=False, soft_wrap=True)
        cli.out.print(escape(shlex.join(made.argv)), highlight=False, soft_wrap=True)
    else:
        _print(cli, found, str(args.trace))
    if args.json is not None:
        args.json.write_text(json.dumps(found.as_json(), indent=2) + "\n")
    return 0


def _print(cli: Cli, s: TraceStats, name: str) -> None:
    zipf = "-" if s.zipf_s is None else f"{s.zipf_s:.2f}"
    cli.out.print(f"{name}: {s.commands} commands, {s.connections} connections, "
                  f"{s.span_s:.1f} s, {s.keys} keys, Zipf exponent {zipf}"
                  f"{' (anonymized)' if s.anonymized else ''}", highlight=False)
    mix = Table(title="Command mix")
    mix.add_column("command")
    mix.add_column("count", justify="right")
    mix.add_column("share", justify="right")
    for name_, count in s.mix.items():
        mix.add_row(name_, str(count), f"{100 * count / max(s.commands, 1):.1f}%")
    cli.out.print(mix)
    if s.value_sizes:
        cli.out.print(_sizes_table("Value sizes (bytes)", "values", s.value_sizes))
    keys = Table(title="Most accessed keys")
    keys.add_column("key")
    keys.add_column("accesses", justify="right")
    for key, count in s.top_keys:
        keys.add_row(key, str(count))
    cli.out.print(keys)
    cli.out.print("commands per second: " + " ".join(map(str, s.per_second)), highlight=False)
    cli.out.print(f"pipeline depth (commands per recorded read): {s.pipeline_depth}",
                  highlight=False)
    _print_replies(cli, s)


def _print_replies(cli: Cli, s: TraceStats) -> None:
    if s.replies is None:
        cli.out.print("recorded replies: none (recorded without kvload record --replies"
                      f"{', a MONITOR capture' if s.monitor else ''})", highlight=False)
        return
    r = s.replies
    cli.out.print(f"recorded replies: {r.count}, latency at the proxy p50 {r.latency_p50_us} µs,"
                  f" p99 {r.latency_p99_us} µs", highlight=False)
    cli.out.print(_sizes_table("Reply sizes (bytes, as recorded)", "replies",
                               r.size_histogram))


def _sizes_table(title: str, counted: str, histogram: dict[str, int]) -> Table:
    """A size histogram (bucket → count) as a table."""
    sizes = Table(title=title)
    sizes.add_column("size")
    sizes.add_column(counted, justify="right")
    for bucket, count in histogram.items():
        sizes.add_row(bucket, str(count))
    return sizes


def handle_anonymize(args: argparse.Namespace, cli: Cli) -> int:
    if args.out.resolve() == args.trace.resolve():
        raise UsageError("OUT must differ from IN (the original is kept)")
    source = trace_format.read(args.trace)
    made, kept = anonymize_counting(source, args.salt.encode(), args.keep_slots)
    trace_format.write(args.out, made)
    slots = ", each key's cluster slot kept" if args.keep_slots else ""
    cli.out.print(f"{args.out}: {len(made.records)} commands, keys and values replaced "
                  f"(anonymized{slots})", highlight=False)
    if kept:
        cli.err.print(f"[yellow]warning[/yellow]: {len(kept)} key(s) kept as they are: too few "
                      f"characters to change for a stand-in of the same length in the same "
                      f"slot (e.g. {kept[0].decode('utf-8', 'replace')!r})", highlight=False)
    return 0
