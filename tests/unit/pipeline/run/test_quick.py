"""Quick mode shrinks trials and rounds only when KVPERF_QUICK is set."""

from __future__ import annotations

import pytest

from kvperf.config.loader import parse_config
from kvperf.pipeline.run import quick

SPECS = parse_config([{"duration": 10, "warmup": 3, "commands": ["SET"]},
                      {"requests": [5000, 400000], "commands": ["GET"]}], {0, 1})


def test_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(quick.ENV, raising=False)
    assert quick.shrink(SPECS) == SPECS and quick.runs(10) == 10


def test_on_shrinks_every_trial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(quick.ENV, "1")
    timed, counted = quick.shrink(SPECS)
    assert timed.duration == (0.5,) and timed.warmup == (0,) and timed.requests is None
    assert counted.requests == (5000, 20000) and counted.duration is None
    assert quick.runs(10) == 2 and quick.runs(1) == 1


def test_on_caps_a_definitions_test_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(quick.ENV, raising=False)
    assert quick.test_time(None) is None and quick.test_time(30) == 30
    monkeypatch.setenv(quick.ENV, "1")
    assert quick.test_time(None) == 1 and quick.test_time(30) == 1


def test_a_spec_with_faults_keeps_its_duration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(quick.ENV, "1")
    (faulted,) = quick.shrink(parse_config(
        [{"duration": 5, "warmup": 2, "commands": ["SET"], "replicas": 1,
          "faults": [{"at": 2, "kill": "primary"}, {"at": 3, "promote": "replica"}]}], {0, 1}))
    assert faulted.duration == (5,) and faulted.warmup == (0,)


def test_a_swept_spec_measures_its_closed_loop_as_long_as_its_points(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(quick.ENV, "1")
    (flagged,) = quick.shrink(SPECS[:1], swept=True)  # kvperf run --rate-sweep
    (configured,) = quick.shrink(parse_config(
        [{"duration": 3, "commands": ["SET"], "rate_sweep": {"percents": [50, 100]}}], {0, 1}))
    assert flagged.duration == configured.duration == (quick.SECONDS,)
