"""`kvperf doctor`: what this machine offers for benchmarking, with a hint where it hurts.

Informational: exits 0 whatever it finds (a missing tool or a noisy machine is a row of the
table, not an error).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kvperf import __version__
from kvperf.cli._common import Cli
from kvperf.pipeline.commands.doctor import doctor, doctor_request
from kvperf.report.doctor import doctor_json, doctor_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "doctor", help="what this machine offers for benchmarking, with hints",
        description="One table of servers and load tools (versions, capabilities), kvload's "
                    "build, perf / valgrind / hardware counters, io_uring, CPUs, governor, "
                    "turbo, SMT, isolated CPUs, NUMA, CPU vulnerability mitigations and noisy "
                    "neighbours, each with a hint where it hurts measurements. Exits 0 "
                    "whatever it finds.")
    p.add_argument("--json", action="store_true",
                   help="print the facts as JSON (format 'kvperf-doctor', versioned)")
    p.add_argument("--sample", type=float, default=0.5, metavar="SECONDS",
                   help="seconds of CPU activity sampled for noisy neighbours (default 0.5)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace, cli: Cli) -> int:
    asked = doctor_request(json=args.json, sample=args.sample)
    found = doctor(asked)
    if asked.json:
        sys.stdout.write(json.dumps(doctor_json(found.sections, __version__), indent=2) + "\n")
        return 0
    cli.out.print(doctor_table(found.sections))
    return 0
