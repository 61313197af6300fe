"""`kvperf clients`: the client harnesses kvperf knows (shipped, ``$KVPERF_CLIENTS_DIR``,
``--clients-dir``), whether each is installed; `kvperf clients install NAME… | --all`
installs them (docs/CLIENTS.md)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.markup import escape
from rich.table import Table

from kvperf.cli._clients import add_clients_dir
from kvperf.cli._common import Cli
from kvperf.clients.install import MissingRuntime, install, missing_runtime
from kvperf.clients.manifest import Manifest, discover, search_dirs, select
from kvperf.core.errors import UsageError


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


def _known(args: argparse.Namespace) -> dict[str, Manifest]:
    return discover(search_dirs(args.clients_dir))


def handle_list(args: argparse.Namespace, cli: Cli) -> int:
    known = _known(args)
    if args.json:
        cli.out.print_json(json.dumps([
            {"name": m.name, "language": m.language, "library": m.library,
             "version": m.version, "models": [c.value for c in m.models],
             "installed": m.installed, "summary": m.summary,
             "folder": str(m.folder), "install_dir": str(m.install_dir)}
            for m in known.values()]))
        return 0
    table = Table(title="Client harnesses (kvperf clients install NAME; "
                        "kvperf run --client NAME)")
    for column in ("name", "language", "library", "version", "models", "installed",
                   "summary"):
        table.add_column(column, overflow="fold")
    for m in sorted(known.values(), key=lambda m: (m.language, m.name)):
        table.add_row(m.name, m.language, m.library, m.version,
                      ", ".join(c.value for c in m.models) or "?",
                      "yes" if m.installed else "no", escape(m.summary))
    cli.out.print(table)
    return 0


def handle_install(args: argparse.Namespace, cli: Cli) -> int:
    known = _known(args)
    if args.all == bool(args.names):
        raise UsageError("kvperf clients install: name the clients, or --all (not both); "
                         f"known clients: {', '.join(sorted(known)) or 'none'}")
    if args.available and not args.all:
        raise UsageError("kvperf clients install: --available goes with --all")
    chosen = list(known.values()) if args.all else select(known, args.names)
    if args.available:
        chosen = _available(chosen, cli)
    for manifest in chosen:
        try:
            install(manifest, lambda line: cli.err.print(escape(line), highlight=False))
        except MissingRuntime as exc:  # exit 1: this machine lacks what the client needs
            raise MissingRuntime(f"{exc} (kvperf clients install --all --available skips "
                                 "such clients)") from None
    return 0


def _available(chosen: list[Manifest], cli: Cli) -> list[Manifest]:
    """The clients whose ``requires`` succeed; each skipped one named with why."""
    kept = []
    for manifest in chosen:
        problem = None if manifest.installed else missing_runtime(manifest)
        if problem:
            cli.err.print(f"skipped {escape(manifest.name)}: {escape(problem)}",
                          highlight=False)
        else:
            kept.append(manifest)
    return kept
