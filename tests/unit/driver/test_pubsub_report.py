"""A kvload pubsub report read into a row: delivered/s and publish-to-deliver latency, the
counts kept; a report with lost or duplicated messages fails the test (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from kvperf.core.errors import DriverError
from kvperf.driver.pubsub import is_pubsub_report, measurement
from tests.unit.driver.test_kvload_report import make_report


def _document(lost: int = 0, duplicated: int = 0) -> dict[str, Any]:
    test = make_report(requests=4000)
    test["pubsub"] = {"published": 1000, "published_rps": 1250.0, "delivered": 4000,
                      "delivered_rps": 5000.0, "fanout": 4.0, "expected": 4000 + lost,
                      "lost": lost, "duplicated": duplicated, "subscribers_with_loss": 0,
                      "publish_errors": 0, "drain_s": 0.01}
    return {"format": "kvload", "version": 1, "tests": [test]}


def test_delivered_rate_and_counts() -> None:
    document = _document()
    assert is_pubsub_report(document)
    assert not is_pubsub_report({"format": "kvload", "tests": [make_report()]})
    m = measurement(document)
    assert m.rps == 5000.0 and m.requests == 4000 and m.p99_latency_ms == 1.5
    assert m.extra["pubsub"]["fanout"] == 4.0 and m.extra["pubsub"]["published"] == 1000


@pytest.mark.parametrize(("lost", "duplicated"), [(3, 0), (0, 2)])
def test_lost_or_duplicated_messages_fail(lost: int, duplicated: int) -> None:
    with pytest.raises(DriverError, match=f"{lost} message\\(s\\) lost and {duplicated} dup"):
        measurement(_document(lost, duplicated))
