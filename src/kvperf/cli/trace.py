"""`kvperf trace stats TRACE` and `kvperf trace anonymize IN OUT`: what a recorded trace
holds (command mix, connections, rate per second, key popularity with a fitted Zipf
exponent, value sizes, and the recorded reply sizes and latency when ``kvload record
--replies`` saw them), a synthetic workload approximating it (``--emit-workload``), and a copy
safe to share (docs/TRACES.md). A bad trace exits 2 with the byte offset."""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape

from kvperf.cli._common import Cli
from kvperf.cli._paths import local_path
from kvperf.pipeline.commands.trace import TOOLS, trace_anonymize, trace_stats
from kvperf.report.trace import stats_view


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "trace", help="inspect or anonymize a recorded trace (kvload record)",
        description="Recorded traces (docs/TRACES.md): stats, anonymize.")
    sub = p.add_subparsers(dest="trace_command", required=True)
    s = sub.add_parser("stats", help="command mix, keys (Zipf exponent), value sizes, rate")
    s.add_argument("trace", type=local_path, metavar="TRACE")
    s.add_argument("--json", type=local_path, metavar="FILE", help="also write them as JSON")
    s.add_argument("--emit-workload", choices=TOOLS, metavar="kvload|memtier|kvperf",
                   help="print only a workload approximating the trace: a command line of "
                        "kvload's own mode or `kvload memtier`, or a kvperf config (JSON) "
                        "for `kvperf run --config` (what is approximated goes to stderr)")
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
    found = trace_stats(args.trace, emit_workload=args.emit_workload, json_file=args.json)
    if found.workload is not None:
        for note in found.workload.notes:
            cli.err.print(escape(f"kvperf trace stats: {note}"), highlight=False, soft_wrap=True)
        cli.out.print(escape(found.workload.text), highlight=False, soft_wrap=True)
    else:
        for part in stats_view(found.stats, str(args.trace)):
            cli.out.print(part, highlight=False)
    return 0


def handle_anonymize(args: argparse.Namespace, cli: Cli) -> int:
    made = trace_anonymize(args.trace, args.out, salt=args.salt, keep_slots=args.keep_slots)
    slots = ", each key's cluster slot kept" if made.keep_slots else ""
    cli.out.print(f"{made.out}: {made.commands} commands, keys and values replaced "
                  f"(anonymized{slots})", highlight=False)
    if made.kept:
        cli.err.print(f"[yellow]warning[/yellow]: {len(made.kept)} key(s) kept as they are: "
                      f"too few characters to change for a stand-in of the same length in the "
                      f"same slot (e.g. {made.kept[0].decode('utf-8', 'replace')!r})",
                      highlight=False)
    return 0
