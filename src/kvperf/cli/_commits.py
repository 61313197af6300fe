"""`kvperf run --commits A B … [--baseline C]`: build each ref, run them interleaved."""

from __future__ import annotations

import argparse
import re
import sys

from rich.console import Console

from kvperf.analysis.comparison import compare_paired
from kvperf.cli._builds import build_flags, build_refs
from kvperf.cli._interleaved import check_schedule, request_from, run_sides
from kvperf.cli._profile import print_profile
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Mode
from kvperf.pipeline import RunOptions
from kvperf.pipeline.sides import side_from_build
from kvperf.report.comparison import terminal_table
from kvperf.report.table import results_table


def side_name(ref: str, sha: str | None, taken: set[str]) -> str:
    """A directory-safe, unique name for a ref's results (the ref itself is data)."""
    safe = re.sub(r"[^\w.+-]", "_", ref).strip(".") or "ref"
    name = safe if safe == ref or sha is None else f"{safe}-{sha[:8]}"
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _check(options: RunOptions) -> None:
    if options.mode != Mode.BOTH:
        raise UsageError("--commits builds and starts its own servers: it cannot be combined "
                         "with --mode server/client or --use-running-server")
    if options.server_bin or options.valkey_path:
        raise UsageError("--commits builds its servers: drop --server-bin/--valkey-path")


def run_commits(args: argparse.Namespace, options: RunOptions, console: Console) -> int:
    _check(options)
    refs = ([args.baseline] if args.baseline else []) + list(args.commits)
    check_schedule(args, len(refs))
    builds = build_refs(build_flags(args), refs, console)
    taken: set[str] = set()
    sides = [side_from_build(side_name(b.ref, b.sha, taken), b) for b in builds]
    if args.dry_run:
        console.print("builds done; --dry-run: nothing run")
        return 0
    result, plan = run_sides(args, request_from(args, "commits"), sides, console)
    prepared = plan.sides
    out = Console(width=None if sys.stdout.isatty() else 220)
    for name, rows in result.rows.items():
        out.print(results_table(rows, f"{name} · {prepared[name].context.commit}"))
    if args.baseline:
        base = sides[0].name
        for side in sides[1:]:
            results = compare_paired(result.rows[base], result.rows[side.name], "all")
            out.print(terminal_table(results, f"baseline {base}", side.name))
    print_profile(out, [r for rows in result.rows.values() for r in rows], plan.out_dir)
    out.print(f"results: {', '.join(str(p.out_dir) for p in prepared.values())} "
              f"(order seed {result.seed})")
    if result.failed:
        console.print(f"[red]{result.failed} trial(s) failed[/red]")
        return 1
    return 0
