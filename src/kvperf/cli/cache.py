"""`kvperf cache list|prune`: the dataset snapshot cache of `run --definitions`
(pipeline/commands/cache.py)."""

from __future__ import annotations

import argparse
from typing import Any

from kvperf.cli._common import Cli
from kvperf.cli._paths import local_path
from kvperf.pipeline.commands.cache import ACTIONS, cache, cache_request
from kvperf.pipeline.request.cache import CacheFlags
from kvperf.report.cache import size_text, snapshots_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "cache", help="list or prune the dataset snapshot cache (run --definitions)",
        description="The dataset snapshots run --definitions saved after real preloads: "
                    "list them, most recently used first, or prune the least recently "
                    "used until the rest fit --max-size.")
    p.add_argument("action", choices=ACTIONS, help="list | prune")
    p.add_argument("--snapshot-cache", type=local_path, metavar="DIR",
                   help="the cache (default: $KVPERF_SNAPSHOT_CACHE, else "
                        "~/.cache/kvperf/snapshots)")
    p.add_argument("--max-size", metavar="SIZE",
                   help="prune: the size to keep (20g, 500Mi, bytes; default "
                        "$KVPERF_SNAPSHOT_CACHE_SIZE, else 20g); 0 empties the cache")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace, cli: Cli) -> int:
    found = cache(cache_request(CacheFlags(args.action, args.snapshot_cache, args.max_size)))
    if found.removed:
        cli.out.print(snapshots_table(f"removed {len(found.removed)} snapshot(s)",
                                      found.removed))
    cli.out.print(snapshots_table(
        f"{found.root}: {len(found.entries)} snapshot(s), {size_text(found.total)} of "
        f"{size_text(found.max_bytes)}", found.entries))
    for key, why in found.unusable:
        cli.out.print(f"unusable {key}: {why} (its preload runs for real)", highlight=False)
    return found.exit_code
