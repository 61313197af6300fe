"""What a trial with faults needs before any server starts (prepare._fault_refusal): servers
kvperf starts, kvload, and no replica reads (UsageError, exit 2)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kvperf.config.loader import parse_config
from kvperf.core.kinds import Mode
from kvperf.pipeline.run.prepare import _fault_refusal
from kvperf.plan.matrix import expand

KVLOAD: Any = SimpleNamespace(name="kvload")
STARTED: Any = SimpleNamespace(mode=Mode.BOTH)


def _trial(**extra: object) -> Any:
    obj = {"commands": ["GET"], "duration": 3, "replicas": 1,
           "faults": [{"at": 1, "kill": "primary"}], **extra}
    return expand(parse_config([obj], {0, 1}))[0]


def test_faults_run_on_servers_kvperf_starts_with_kvload() -> None:
    assert _fault_refusal(_trial(), KVLOAD, STARTED) is None
    client: Any = SimpleNamespace(mode=Mode.CLIENT)
    assert "servers kvperf starts" in (_fault_refusal(_trial(), KVLOAD, client) or "")
    other: Any = SimpleNamespace(name="valkey-benchmark")
    assert "--tool kvload" in (_fault_refusal(_trial(), other, STARTED) or "")


def test_faults_with_replica_reads_are_refused() -> None:
    refused = _fault_refusal(_trial(read_from_replicas="yes"), KVLOAD, STARTED)
    assert refused is not None and "read_from_replicas" in refused
