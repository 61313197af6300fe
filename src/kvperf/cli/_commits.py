"""What `kvperf run --commits A B … [--baseline C]` shows: each commit's results, every
commit against the baseline, the profile artifacts, where the results are; exit 1 when a
trial failed."""

from __future__ import annotations

from kvperf.analysis.comparison import compare_paired
from kvperf.cli._common import Cli
from kvperf.cli._disturbed import print_disturbed
from kvperf.cli._profile import print_profile
from kvperf.pipeline.request.run import CommitsRequest
from kvperf.pipeline.sides.interleaved import Interleaved
from kvperf.report.comparison import terminal_table
from kvperf.report.table import results_table


def print_commits(cli: Cli, request: CommitsRequest, done: Interleaved | None) -> int:
    if done is None:
        cli.err.print("builds done; --dry-run: nothing run")
        return 0
    result, plan = done
    out, prepared = cli.out, plan.sides
    for name, rows in result.rows.items():
        out.print(results_table(rows, f"{name} · {prepared[name].context.commit}"))
    if request.baseline:
        base, *others = list(result.rows)
        for name in others:
            results = compare_paired(result.rows[base], result.rows[name], "all")
            out.print(terminal_table(results, f"baseline {base}", name))
    print_profile(out, [r for rows in result.rows.values() for r in rows], plan.out_dir)
    out.print(f"results: {', '.join(str(p.out_dir) for p in prepared.values())} "
              f"(order seed {result.seed})")
    print_disturbed(out, cli.err, [r for rows in result.rows.values() for r in rows])
    if result.failed:
        cli.err.print(f"[red]{result.failed} trial(s) failed[/red]")
        return 1
    return 0
