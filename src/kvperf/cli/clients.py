"""`kvperf clients`: the client harnesses kvperf knows (shipped, ``$KVPERF_CLIENTS_DIR``,
``--clients-dir``), whether each is installed; `kvperf clients install NAME… | --all`
installs them (docs/CLIENTS.md)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.markup import escape

from kvperf.cli._clients import add_clients_dir
from kvperf.cli._common import Cli
from kvperf.pipeline.commands.clients import install_clients, install_request, known_clients
from kvperf.report.harnesses import harness_json, harnesses_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "clients", help="list the client harnesses (client libraries as subjects); "
                        "'clients install' installs them",
        description="List the client-library harnesses kvperf knows, with each one's "
                    "language, library, pinned version and whether it is installed "
                    "(docs/CLIENTS.md).")
    add_clients_dir(p)
    p.add_argument("--json", action="store_true", help="the list as JSON on stdout")
    p.set_defaults(handler=handle_list)
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    i = sub.add_parser("install", help="install client harnesses into kvperf's cache",
                       description="Run each named client's install steps (its manifest) "
                                   "into ~/.cache/kvperf/clients; an installed one is left "
                                   "as it is.")
    i.add_argument("names", nargs="*", metavar="NAME", help="clients to install")
    i.add_argument("--all", action="store_true", help="every known client")
    i.add_argument("--available", action="store_true",
                   help="with --all: skip (and list) clients whose runtime is missing here "
                        "instead of failing on them")
    add_clients_dir(i, argparse.SUPPRESS)
    i.set_defaults(handler=handle_install)


def handle_list(args: argparse.Namespace, cli: Cli) -> int:
    known = known_clients(args.clients_dir)
    if args.json:
        cli.out.print_json(json.dumps([harness_json(m) for m in known.clients]))
        return 0
    cli.out.print(harnesses_table(known.clients))
    return 0


class _Told:
    """An install's progress and skipped clients, on stderr."""

    def __init__(self, cli: Cli) -> None:
        self.cli = cli

    def skipped(self, name: str, why: str) -> None:
        self.cli.err.print(f"skipped {escape(name)}: {escape(why)}", highlight=False)

    def said(self, line: str) -> None:
        self.cli.err.print(escape(line), highlight=False)


def handle_install(args: argparse.Namespace, cli: Cli) -> int:
    asked = install_request(names=args.names, every=args.all, available=args.available,
                            dirs=args.clients_dir)
    install_clients(asked, _Told(cli))
    return 0
