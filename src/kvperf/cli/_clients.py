"""What `kvperf clients`, `run --client` and `compare --client` share: --clients-dir and
--concurrency declared once, and the client table (docs/CLIENTS.md)."""

from __future__ import annotations

import argparse

from kvperf.cli._choices import enum_choice
from kvperf.cli._paths import local_path
from kvperf.core.kinds import Concurrency


def add_clients_dir(p: argparse.ArgumentParser, default: object = None) -> None:
    """--clients-dir, declared once (clients, clients install, run, compare)."""
    p.add_argument("--clients-dir", action="append", type=local_path,
                   default=[] if default is None else default,
                   metavar="DIR", help="a folder of your own harnesses "
                   "(<language>/<name>/manifest.json; repeatable; also $KVPERF_CLIENTS_DIR)")


def add_client_repo(p: argparse.ArgumentParser) -> None:
    """--client-repo [NAME=]PATH, declared once (run, compare, bisect, clients install)."""
    p.add_argument("--client-repo", action="append", default=[], metavar="[NAME=]PATH",
                   help="the library's git repository (a path or URL) for --client NAME@REF: "
                        "the harness runs the library built from that commit (repeatable "
                        "as NAME=PATH for several libraries)")


def add_client_args(p: argparse.ArgumentParser) -> None:
    """--client NAME (repeatable), --clients-dir, --concurrency."""
    p.add_argument("--client", action="append", default=[], metavar="NAME", dest="clients",
                   help="measure a client library's harness instead of the server (kvperf "
                        "clients lists them; repeatable; 'kvload' adds kvload's own trial "
                        "as the reference line)")
    add_clients_dir(p)
    add_client_repo(p)
    p.add_argument("--concurrency", type=enum_choice(Concurrency), choices=tuple(Concurrency),
                   help="the harnesses' concurrency model (default: the config's "
                        "'concurrency', else single for 1 client and pool for more)")
