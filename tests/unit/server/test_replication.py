"""When the replicas INFO replication lists are in sync (pure)."""

from __future__ import annotations

from kvperf.server.replication import LagSamples, lagging, replica_lag

SLAVE = "ip=127.0.0.1,port=7001,state={state},offset={offset},lag=0"


def _info(offset: int, *slaves: tuple[str, int]) -> dict[str, str]:
    info = {"role": "master", "master_repl_offset": str(offset)}
    info.update({f"slave{i}": SLAVE.format(state=s, offset=o) for i, (s, o) in enumerate(slaves)})
    return info


def test_in_sync_when_every_replica_is_online_at_the_primary_offset() -> None:
    assert lagging(_info(500, ("online", 500)), 1) is None
    assert lagging(_info(500, ("online", 500), ("online", 500)), 2) is None


def test_not_in_sync_says_why() -> None:
    assert lagging(_info(0), 1) == "0 of 1 replica(s) connected"
    assert "wait_bgsave at offset 0" in (lagging(_info(500, ("wait_bgsave", 0)), 1) or "")
    assert "online at offset 400" in (lagging(_info(500, ("online", 400)), 1) or "")


def test_lag_is_the_primary_offset_minus_the_replica_offset() -> None:
    primary = {"master_repl_offset": "500"}
    assert replica_lag(primary, {"slave_repl_offset": "380"}) == 120
    assert replica_lag(primary, {"slave_repl_offset": "510"}) == 0  # read after: clamped
    samples = LagSamples([0, 120, 60])
    assert samples.record() == {"max_bytes": 120, "mean_bytes": 60.0, "samples": 3,
                                "interval_ms": 100}
    assert LagSamples().record() is None
