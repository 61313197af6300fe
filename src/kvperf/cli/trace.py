"""`kvperf trace stats TRACE` and `kvperf trace anonymize IN OUT`: what a recorded trace
holds (command mix, connections, rate per second, key popularity with a fitted Zipf
exponent, value sizes) and a copy safe to share (docs/TRACES.md). A bad trace exits 2 with
the byte offset."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from kvperf.analysis.trace_stats import TraceStats, stats
from kvperf.cli._common import Cli
from kvperf.cli._paths import local_path
from kvperf.core.errors import UsageError
from kvperf.driver import trace_format
from kvperf.driver.trace_anonymize import anonymize


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "trace", help="inspect or anonymize a recorded trace (kvload record)",
        description="Recorded traces (docs/TRACES.md): stats, anonymize.")
    sub = p.add_subparsers(dest="trace_command", required=True)
    s = sub.add_parser("stats", help="command mix, keys (Zipf exponent), value sizes, rate")
    s.add_argument("trace", type=local_path, metavar="TRACE")
    s.add_argument("--json", type=local_path, metavar="FILE", help="also write them as JSON")
    s.set_defaults(handler=handle_stats)
    a = sub.add_parser("anonymize", help="keys and values replaced by deterministic stand-ins")
    a.add_argument("trace", type=local_path, metavar="IN")
    a.add_argument("out", type=local_path, metavar="OUT")
    a.add_argument("--salt", default="kvperf",
                   help="secret mixed into the stand-ins (default: kvperf; use your own so "
                        "that a known key cannot be matched to its stand-in)")
    a.set_defaults(handler=handle_anonymize)


def handle_stats(args: argparse.Namespace, cli: Cli) -> int:
    found = stats(trace_format.read(args.trace))
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
        sizes = Table(title="Value sizes (bytes)")
        sizes.add_column("size")
        sizes.add_column("values", justify="right")
        for bucket, count in s.value_sizes.items():
            sizes.add_row(bucket, str(count))
        cli.out.print(sizes)
    keys = Table(title="Most accessed keys")
    keys.add_column("key")
    keys.add_column("accesses", justify="right")
    for key, count in s.top_keys:
        keys.add_row(key, str(count))
    cli.out.print(keys)
    cli.out.print("commands per second: " + " ".join(map(str, s.per_second)), highlight=False)


def handle_anonymize(args: argparse.Namespace, cli: Cli) -> int:
    if args.out.resolve() == args.trace.resolve():
        raise UsageError("OUT must differ from IN (the original is kept)")
    source = trace_format.read(args.trace)
    made = anonymize(source, args.salt.encode())
    trace_format.write(args.out, made)
    cli.out.print(f"{args.out}: {len(made.records)} commands, keys and values replaced "
                  f"(anonymized)", highlight=False)
    return 0
