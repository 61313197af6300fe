"""Reaching beyond loopback, as flags: ``--bind`` and ``--generate-password`` of
``--mode server``, ``--tls --tls-ca`` of ``--mode client``, and ``--server-host ssh://…``
with its options (checked in pipeline/request; the SSH connection is pipeline/world.py's)."""

from __future__ import annotations

import argparse

from kvperf.cli._paths import local_path
from kvperf.pipeline.commands.vocabulary import DEFAULT_PORTS, PORT_TRIES
from kvperf.pipeline.request.common import RemoteFlags


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


def remote_flags(args: argparse.Namespace) -> RemoteFlags:
    return RemoteFlags(args.server_host, args.ssh_config, args.remote_server_bin,
                       args.remote_ports)
