"""Reaching beyond loopback: ``--bind`` and ``--generate-password`` of ``--mode server``,
``--tls --tls-ca`` of ``--mode client``, ``--server-host ssh://…`` (server/remote.py: a
fresh server per trial on another host), and the password server and client modes take from
$KVPERF_SERVER_PASSWORD (read once and removed from the environment, so no child inherits
it; it never enters argv, logs or results)."""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
from collections.abc import Iterator
from typing import Any

from rich.console import Console

from kvperf.cli._paths import local_path
from kvperf.core import secret
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Mode
from kvperf.pipeline import Prepared, RunOptions
from kvperf.pipeline.model import Launcher
from kvperf.server.remote import (
    DEFAULT_PORTS,
    PORT_TRIES,
    SshHost,
    SshTarget,
    parse_ports,
    parse_target,
)


def add_network_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bind", metavar="ADDR",
                   help="--mode server: the address to listen on (default 127.0.0.1); any "
                        "other needs a password: $KVPERF_SERVER_PASSWORD or "
                        "--generate-password")
    p.add_argument("--generate-password", action="store_true",
                   help="--mode server: make a random password and print it once")
    p.add_argument("--tls", action="store_true",
                   help="--mode client: talk TLS to the server (needs --tls-ca)")
    p.add_argument("--tls-ca", type=local_path, metavar="FILE",
                   help="--mode client --tls: the CA certificate that signed the server's")
    add_server_host_args(p)


def add_server_host_args(p: argparse.ArgumentParser) -> None:
    """--server-host and its options (run, and the interleaved commands)."""
    p.add_argument("--server-host", metavar="ssh://[USER@]HOST[:PORT]",
                   help="start each trial's server on this host over SSH (OpenSSH, "
                        "BatchMode: keys, no prompts) and drive the load from here")
    p.add_argument("--ssh-config", type=local_path, metavar="FILE",
                   help="--server-host: ssh's config file (ssh -F), e.g. IdentityFile")
    p.add_argument("--remote-server-bin", metavar="PATH",
                   help="--server-host: the server binary's path there (default: copy the "
                        "local one into a per-run temp dir)")
    p.add_argument("--remote-ports", metavar="LO-HI",
                   help="--server-host: the servers' ports there, e.g. what a firewall "
                        f"opens (default {DEFAULT_PORTS[0]}-{DEFAULT_PORTS[1]}; a port in use "
                        f"there → the next, {PORT_TRIES} tries)")


def _client(args: argparse.Namespace) -> bool:
    return bool(args.mode == Mode.CLIENT or args.use_running_server)


def _check_bind(args: argparse.Namespace, password: secret.Secret | None) -> str:
    bind = args.bind or "127.0.0.1"
    if args.bind is not None and args.mode != Mode.SERVER:
        raise UsageError("--bind applies only with --mode server (use --target-ip to say "
                         "where a client connects)")
    try:
        loopback = secret.is_loopback(bind)
    except ValueError:
        raise UsageError(f"--bind {bind!r} is not an IP address") from None
    if not loopback and password is None:
        raise UsageError(
            f"--bind {bind} reaches beyond this host: the server needs a password. Set "
            f"${secret.SERVER_PASSWORD_ENV}, or pass --generate-password")
    return str(ipaddress.ip_address(bind))


def _check_tls(args: argparse.Namespace) -> None:
    if (args.tls or args.tls_ca) and not _client(args):
        raise UsageError("--tls/--tls-ca apply to --mode client (a server kvperf starts gets "
                         "TLS from the config's tls_mode)")
    if args.tls and args.tls_ca is None:
        raise UsageError("--tls needs --tls-ca FILE (the CA that signed the server's "
                         "certificate)")
    if args.tls_ca is not None and not args.tls:
        raise UsageError("--tls-ca needs --tls")
    if args.tls_ca is not None and not args.tls_ca.is_file():
        raise UsageError(f"--tls-ca {str(args.tls_ca)!r}: no such file")


def refuse_server_host_with_definitions(args: argparse.Namespace) -> None:
    if args.server_host is not None:
        raise UsageError("--server-host does not run --definitions or module scenarios "
                         "yet (they start replicas, clusters and modules here)")


def check_server_host(args: argparse.Namespace, *sides: Prepared) -> SshTarget | None:
    """--server-host parsed and checked against what a remote server supports (exit 2);
    None for a local run, and for commands without the flags (bisect, regressions)."""
    if getattr(args, "server_host", None) is None:
        if (getattr(args, "ssh_config", None) or getattr(args, "remote_server_bin", None)
                or getattr(args, "remote_ports", None)):
            raise UsageError("--ssh-config/--remote-server-bin/--remote-ports need "
                             "--server-host")
        return None
    target = parse_target(args.server_host)
    if args.remote_ports is not None:
        parse_ports(args.remote_ports)
    if getattr(args, "definitions", None) or any(p.options.mode != Mode.BOTH for p in sides):
        raise UsageError("--server-host starts the servers itself (not with --mode "
                         "server/client, --use-running-server or --definitions)")
    if len(sides) > 1 and args.remote_server_bin:
        raise UsageError("--remote-server-bin names one binary: the sides of an interleaved "
                         "run are copied instead")
    for prepared in sides:
        if prepared.options.measure != Measure.TIMING or prepared.options.profile:
            raise UsageError("--server-host measures timing only (no --measure "
                             "instructions, no --profile: they run on the server's host)")
        for trial in prepared.trials:
            if trial.server.cluster_mode or trial.server.tls or trial.server.modules:
                raise UsageError(f"config object {trial.spec_index}: --server-host starts "
                                 "standalone servers without TLS or modules")
    if args.ssh_config is not None and not args.ssh_config.is_file():
        raise UsageError(f"--ssh-config {str(args.ssh_config)!r}: no such file")
    return target


@contextlib.contextmanager
def server_host(args: argparse.Namespace, target: SshTarget | None
                ) -> Iterator[Launcher | None]:
    """The Launcher of --server-host (its control connection open for the run), or None."""
    if target is None:
        yield None
        return
    ports = parse_ports(args.remote_ports) if args.remote_ports else DEFAULT_PORTS
    with SshHost(target, args.ssh_config, args.remote_server_bin, ports) as host:
        yield host.launcher()


def network_options(args: argparse.Namespace) -> dict[str, Any]:
    """bind, password and tls_ca of RunOptions from the flags and the environment."""
    password = secret.take_env()
    if args.generate_password:
        if args.mode != Mode.SERVER:
            raise UsageError("--generate-password applies only with --mode server")
        if password is not None:
            raise UsageError(f"--generate-password with ${secret.SERVER_PASSWORD_ENV} set: "
                             "choose one")
        password = secret.generate()
    bind = _check_bind(args, password)
    _check_tls(args)
    if not (_client(args) or args.mode == Mode.SERVER):
        password = None  # servers kvperf starts for itself stay on loopback, without one
    return {"bind": bind, "password": password, "tls_ca": args.tls_ca}


def print_generated_password(args: argparse.Namespace, options: RunOptions,
                             console: Console) -> None:
    """The one time a generated password is shown (never logged, never written)."""
    if args.generate_password and options.password is not None:
        console.print(f"server password (shown only now): {options.password.reveal()}",
                      highlight=False, soft_wrap=True)
