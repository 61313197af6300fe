"""How `run` and `compare` measure and judge, as flags — ``--measure``, ``--keys``,
``--min-effect``, ``--water-line`` (checked in pipeline/request) — and the instruction-mode
output of both."""

from __future__ import annotations

import argparse

from rich.console import Console

from kvperf.cli._choices import enum_choice
from kvperf.core.kinds import Measure
from kvperf.pipeline.commands.outputs import Row
from kvperf.pipeline.commands.vocabulary import (
    DEFAULT_MIN_EFFECT,
    DEFAULT_WATER_LINE,
    INSTRUCTION_REQUESTS,
)
from kvperf.pipeline.request.common import MEMORY_KEYS
from kvperf.report.instructions import run_table


def add_measure_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--measure", type=enum_choice(Measure), choices=tuple(Measure),
                   default=Measure.TIMING,
                   help="timing (default): throughput and latency; instructions: run the "
                        "server under callgrind and count its instructions in the measure "
                        f"stage only ({INSTRUCTION_REQUESTS} requests per command with the "
                        "built-in config); perf-instructions: hardware counters via perf "
                        "stat; memory: seed --keys keys per data size and type, report "
                        "bytes per key (INFO memory and a MEMORY USAGE sample), time nothing")
    p.add_argument("--keys", type=int, default=MEMORY_KEYS, metavar="N",
                   help=f"--measure memory: keys seeded per trial (default {MEMORY_KEYS:,})")


def add_min_effect(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument("--min-effect", type=float, default=DEFAULT_MIN_EFFECT * 100,
                   metavar="PCT", help="instruction mode: smallest change flagged, in percent "
                                       f"(default {DEFAULT_MIN_EFFECT * 100:g}%%)")


def add_compare_arguments(p: argparse.ArgumentParser) -> None:
    add_measure_argument(p)
    add_min_effect(p)


def add_water_line(p: argparse.ArgumentParser) -> None:
    p.add_argument("--water-line", type=float, default=DEFAULT_WATER_LINE * 100, metavar="PCT",
                   help="with one value per side (no statistics): a change beyond ± PCT%% is "
                        f"a regression or improvement (default {DEFAULT_WATER_LINE * 100:g})")


def print_instructions(out: Console, rows: list[Row]) -> None:
    table = run_table(rows)
    if table is not None:
        out.print(table)
