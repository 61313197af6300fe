"""`kvperf alerts`: the requests of its subcommands (list, show, ack, assign, resolve,
report), checked before the database is opened."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvperf.pipeline.request.common import StoreRequest


@dataclass(frozen=True)
class AlertsListRequest:
    """`kvperf alerts list`: the summaries in ``states`` (all when empty)."""

    store: StoreRequest
    states: tuple[str, ...] = ()
    json: bool = False


@dataclass(frozen=True)
class AlertChangeRequest:
    """`kvperf alerts ack|assign|resolve|show ID`: ``action`` a store/alerts.py TRANSITIONS
    key ("show" changes nothing); ``force``: resolve as fixed though the commits after the
    change are not back within the metric's minimum effect."""

    store: StoreRequest
    alert: int
    action: str
    owner: str | None = None
    note: str | None = None
    force: bool = False
    json: bool = False


@dataclass(frozen=True)
class AlertReportRequest:
    """`kvperf alerts report ID`: the ready-to-file report, markdown (or ``html``) written
    to ``output``; ``open_issue``: filed with ``gh issue create`` when gh is installed and
    authenticated (``repo``: gh's --repo), else the file is left for a person."""

    store: StoreRequest
    alert: int
    output: Path
    html: bool = False
    open_issue: bool = False
    repo: str | None = None
