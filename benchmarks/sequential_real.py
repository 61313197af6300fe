#!/usr/bin/env python3
"""`--runs auto` against the fixed --runs on real compares: the same rows judged both ways.

Runs K compares of the test fixture's ``base`` against its ``set-slow`` commit (SET slowed
~10–15% at P=16; tests/fixtures/valkey_repo.py), each a fixed --rounds of 1 s duet rounds of
SET and GET (kvload, P=16, 50 clients, the server on core 0 and the load on core 1), and
then, from each compare's stored rows:

- the fixed rule (α = 0.01, compare's verdicts) on the first n rounds, for every n: whether
  the SET series is a regression; the detection rate over the K compares per n, and the
  fewest n detecting it in ≥ 90%;
- the auto rule (``analysis.sequential.replay``: the looks ``--runs auto --max-runs
  --rounds`` takes, each series stopping on its own) over the prefixes of the same rows:
  the round at which the SET series stopped and its verdict; their mean.

Same rows, same machine state: the comparison is fair. ``--aa``: ``base`` against itself
instead; counts the compares the auto rule flags anywhere (a row flagged at a look while its
series was open, or in the final table) and those the fixed rule at --rounds flags.

The builds come from the fixture's build cache (built once, minutes, when absent).
``--reuse DIR``: judge the compares an earlier run left in DIR instead of running any;
``--level L``: the auto rule with one level at every look (``--level 0.00121``: the constant
rule before the spent levels) instead of the calibrated levels. ``--windows``: also both
rules on disjoint windows of each compare's rounds (renumbered from 1) — the fixed rule on
every window of n rounds (12 rounds: three windows of 4, four of 3), the auto rule on the two
halves — more draws of the same machine state than the first n rounds alone give (rounds of
one compare are alike: the same builds, the same order of sides, one after another).

Usage (the lead's runs, on a quiet machine):
    PYTHONPATH=src:. .venv/bin/python benchmarks/sequential_real.py --k 10
    PYTHONPATH=src:. .venv/bin/python benchmarks/sequential_real.py --aa --k 20
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from kvperf.analysis.comparison import compare_paired
from kvperf.analysis.sequential import FLAGS, SPENT, Design, replay, rounds_run, series_verdicts
from kvperf.analysis.verdict import DEFAULT_RULE, Verdict
from kvperf.results.row import Row
from kvperf.store.files import read_rows

CONFIG = [{"duration": 1, "warmup": 1, "commands": ["SET", "GET"], "pipelines": 16,
           "keyspacelen": 1000, "clients": 50, "server_cpu_range": "0",
           "client_cpu_range": "1"}]
SET = "SET d=3 P=16 c=50"
ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.90


def run_compares(k: int, rounds: int, aa: bool, directory: Path) -> list[Path]:
    """K fixed-round compares (their label directories), each with its own side order."""
    from tests.fixtures.valkey_repo import cache_dir, fixture_repo

    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "config.json"
    config.write_text(json.dumps(CONFIG))
    env = {**os.environ, "KVPERF_BUILD_CACHE": str(cache_dir() / "build-cache"),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT),
                                          os.environ.get("PYTHONPATH", "")])}
    kvperf = Path(sys.prefix) / "bin" / "kvperf"
    found = []
    for i in range(k):
        label = f"{'aa' if aa else 'ab'}-{i + 1}"
        started = time.monotonic()
        done = subprocess.run(
            [str(kvperf), "compare", "base", "base" if aa else "set-slow", "--repo",
             str(fixture_repo()), "--runs", str(rounds), "--config", str(config),
             "--schedule", "duet", "--seed", str(1000 + i), "--tool", "kvload", "--no-db",
             "--results-dir", str(directory), "--label", label],
            capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            sys.exit(f"compare {label} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        print(f"  {label}: {time.monotonic() - started:.0f} s", flush=True)
        found.append(directory / label)
    return found


def sides(label: Path) -> tuple[list[Row], list[Row]]:
    return read_rows(label / "A" / "metrics.json"), read_rows(label / "B" / "metrics.json")


def prefix(rows: list[Row], n: int) -> list[Row]:
    return [r for r in rows if int(r.get("run") or 0) <= n]


def fixed_set(a: list[Row], b: list[Row], n: int) -> Verdict | None:
    """The SET series' verdict under the fixed rule on the first n rounds."""
    return dict(series_verdicts(compare_paired(prefix(a, n), prefix(b, n)))).get(SET)


def judge_ab(labels: list[Path], design: Design) -> None:
    rounds = min(rounds_run(sides(label)[0]) for label in labels)
    detected = {n: 0 for n in range(2, rounds + 1)}
    stops = []
    for label in labels:
        a, b = sides(label)
        for n in detected:
            detected[n] += fixed_set(a, b, n) is Verdict.REGRESSION
        looks = replay(a, b, design)
        stop = looks.stopped.get(SET)
        stops.append(stop.rounds if stop else rounds)
        print(f"  {label.name}: auto SET "
              + (stop.text() if stop else f"undecided after {rounds} rounds") + "; fixed: " +
              " ".join(f"{n}:{(fixed_set(a, b, n) or '-')[:3]}" for n in detected), flush=True)
    rates = {n: hits / len(labels) for n, hits in detected.items()}
    print("\nfixed --runs n: SET detected as a regression in " +
          ", ".join(f"n={n} {rate:.0%}" for n, rate in rates.items()))
    fixed = next((n for n, rate in rates.items() if rate >= TARGET), None)
    mean = sum(stops) / len(stops)
    print(f"auto (--max-runs {design.max_rounds}, {design.kind} levels "
          + ", ".join(f"{k}: {level:.3g}" for k, level in design.levels.items()) + "): "
          f"SET decided after {mean:.2f} rounds on average (of {len(stops)}: {stops})")
    print(f"fixed --runs detecting it in ≥ 90%: {fixed if fixed else f'> {rounds}'}; "
          f"auto {'FEWER' if fixed and mean < fixed else 'NOT fewer'} rounds")


def window(rows: list[Row], start: int, width: int) -> list[Row]:
    """Rounds start+1 … start+width, numbered 1 … width."""
    return [{**r, "run": int(r.get("run") or 0) - start} for r in rows
            if start < int(r.get("run") or 0) <= start + width]


def judge_windows(labels: list[Path], design: Design) -> None:
    """Both rules on disjoint windows of every compare's rounds (module doc, ``--windows``)."""
    rounds = min(rounds_run(sides(label)[0]) for label in labels)
    print(f"\ndisjoint windows of each compare's {rounds} rounds:")
    for n in range(3, rounds // 2 + 1):
        hits = total = 0
        for label in labels:
            a, b = sides(label)
            for start in range(0, rounds - n + 1, n):
                verdict = fixed_set(window(a, start, n), window(b, start, n), n)
                hits, total = hits + (verdict is Verdict.REGRESSION), total + 1
        print(f"  fixed rule, n={n}: SET a regression in {hits} of {total} windows "
              f"({hits / total:.0%})")
    width, stops = rounds // 2, []
    for label in labels:
        a, b = sides(label)
        for start in (0, width):
            stop = replay(window(a, start, width), window(b, start, width),
                          design).stopped.get(SET)
            stops.append(stop.rounds if stop and stop.verdict is Verdict.REGRESSION
                         else width + 1)
    print(f"  auto, windows of {width} rounds: SET a regression after {sum(stops) / len(stops):.2f}"
          f" rounds on average (of {len(stops)}: {stops}; {width + 1}: not within the window)")


def judge_aa(labels: list[Path], design: Design) -> None:
    flagged_auto = flagged_fixed = 0
    for label in labels:
        a, b = sides(label)
        looks = replay(a, b, design)
        final = looks.final(a, b)
        alarms = looks.alarms + [f"{c.metric}: {c.decision.verdict} in the final table"
                                 for c in final if c.decision.verdict in FLAGS]
        fixed = [c for c in compare_paired(a, b, "all", DEFAULT_RULE)
                 if c.decision.verdict in FLAGS]
        flagged_auto += bool(alarms)
        flagged_fixed += bool(fixed)
        stops = looks.stops(series_verdicts(final), rounds_run(a))
        print(f"  {label.name}: " + "; ".join(f"{s.series}: {s.text()}" for s in stops)
              + (f"; FLAGGED: {alarms}" if alarms else ""), flush=True)
    print(f"\nA/A: auto flagged {flagged_auto} of {len(labels)} compares; the fixed rule at "
          f"all rounds flagged {flagged_fixed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10, help="compares to run")
    parser.add_argument("--rounds", type=int, default=12,
                        help="fixed rounds per compare (= the auto rule's --max-runs)")
    parser.add_argument("--aa", action="store_true", help="base against itself")
    parser.add_argument("--level", type=float, default=None,
                        help="one level for every look (default: the calibrated levels; "
                             "--level 0.00121 with --rounds 12: the constant rule before them)")
    parser.add_argument("--results-dir", type=Path, default=None,
                        help="where the compares go (default: a temporary directory, kept)")
    parser.add_argument("--reuse", type=Path, default=None, metavar="DIR",
                        help="judge the compares already in DIR")
    parser.add_argument("--windows", action="store_true",
                        help="also judge disjoint windows of each compare's rounds")
    parser.add_argument("--spent", type=float, default=None, metavar="C",
                        help="the spent levels at constant C (C × shape) instead of SPENT's")
    parser.add_argument("--share", type=float, default=None,
                        help="a look also tests the open series' rps in a family of their "
                             "own, the full rule at this share of the look's level")
    args = parser.parse_args()
    started = time.monotonic()
    if args.spent is not None:
        SPENT[args.rounds] = args.spent
    design = Design(max_rounds=args.rounds, level=args.level, spent=args.spent is not None)
    if args.share is not None:
        design = replace(design, share=args.share)
    if args.reuse:
        labels = sorted(p for p in args.reuse.iterdir() if (p / "B" / "metrics.json").is_file()
                        and p.name.startswith("aa-" if args.aa else "ab-"))
    else:
        directory = args.results_dir or Path(tempfile.mkdtemp(prefix="kvperf-seq-real-"))
        print(f"{args.k} compares of {args.rounds} rounds into {directory}", flush=True)
        labels = run_compares(args.k, args.rounds, args.aa, directory)
    (judge_aa if args.aa else judge_ab)(labels, design)
    if args.windows and not args.aa:
        judge_windows(labels, design)
    print(f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
