"""TLS material made in-process with trustme: a throwaway CA and a certificate for 127.0.0.1
(and the address a server is bound to)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TlsFiles:
    """PEM files for a server and for clients that verify it."""

    ca: Path
    cert: Path
    key: Path


def make_tls_files(directory: Path, *hosts: str) -> TlsFiles:
    """Write a CA and a server certificate valid for 127.0.0.1, ::1, localhost and ``hosts``
    (the address of ``--mode server --bind``)."""
    import trustme  # here: its import (cryptography) costs every kvperf command ~0.1 s

    directory.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    names = dict.fromkeys(("127.0.0.1", "::1", "localhost", *hosts))
    server = ca.issue_cert(*names)
    directory = directory.absolute()  # the server reads them from its own working directory
    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    ca.cert_pem.write_to_path(str(files.ca))
    server.cert_chain_pems[0].write_to_path(str(files.cert))
    server.private_key_pem.write_to_path(str(files.key))
    return files
