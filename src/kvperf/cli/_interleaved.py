"""The flags `compare` and `noise` share (their runs, the results directory, the side order,
the schedule, the store, --server-host), declared once."""

from __future__ import annotations

import argparse

from kvperf.cli._choices import enum_choice
from kvperf.cli._network import add_server_host_args
from kvperf.cli._paths import local_path
from kvperf.cli._store import add_db_options, add_results_dir
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Schedule
from kvperf.pipeline.commands.vocabulary import DUET_DEFAULT_SECONDS
from kvperf.pipeline.request.common import INSTRUCTION_RUNS
from kvperf.pipeline.request.sides import AUTO, DEFAULT_MAX_ROUNDS, MIN_ROUNDS


def add_common(p: argparse.ArgumentParser, default_runs: int) -> None:
    p.add_argument("--config", type=local_path,
                   help="JSON config (default: built-in SET/GET matrix)")
    p.add_argument("--runs", type=runs_value, default=None,
                   help=f"interleaved rounds (default {default_runs}; ≥ 5 to flag 5× the CV; "
                        f"{INSTRUCTION_RUNS} with --measure instructions), or 'auto': a "
                        "round at a time, each series until it is decided (see --max-runs)")
    p.add_argument("--max-runs", type=int, default=None, metavar="N",
                   help=f"with --runs auto: the most rounds to run (default "
                        f"{DEFAULT_MAX_ROUNDS}; at least {MIN_ROUNDS}, the rounds before the "
                        "first look)")
    p.add_argument("--tool", choices=("kvload", "valkey-benchmark", "redis-benchmark"),
                   help="load tool (default: kvload if installed)")
    add_results_dir(p)
    p.add_argument("--label", help="results subdirectory (default: derived from the sides)")
    p.add_argument("--seed", type=int, help="seed of the side order (default: random, recorded)")
    add_schedule_argument(p)
    add_db_options(p)
    add_server_host_args(p)


def runs_value(text: str) -> int | str:
    """--runs: a whole number, or ``auto`` (argparse names the flag, exit 2)."""
    if text == AUTO:
        return AUTO
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of rounds or 'auto', got "
                                         f"{text!r}") from None


def refuse_auto_runs(runs: int | str | None, max_runs: int | None, flag: str) -> None:
    """--runs auto and --max-runs where the sides are not a config's interleaved rounds."""
    if runs == AUTO or max_runs is not None:
        raise UsageError(f"--runs auto and --max-runs do not apply with {flag}; give --runs N")


def add_schedule_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--schedule", type=enum_choice(Schedule), choices=tuple(Schedule),
                   default=Schedule.ALTERNATE,
                   help="alternate (default): the sides' trials run one after another in a "
                        "random order per round; duet: they run at the same time on the same "
                        "pinned CPUs, so machine noise hits both alike (needs duration-bound "
                        f"trials; the built-in config then measures {DUET_DEFAULT_SECONDS} s)")
