"""`kvperf doctor` flags: a bad --sample is bad input (exit 2) before anything is probed."""

from __future__ import annotations

import pytest

from kvperf.cli.main import main
from kvperf.pipeline.commands import doctor


def test_bad_sample_is_exit_2_without_probing(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    def boom(*args: object) -> None:
        raise AssertionError("probed the machine despite bad input")

    monkeypatch.setattr(doctor, "examine", boom)
    assert main(["doctor", "--sample", "-1"]) == 2
    assert "--sample must be between 0 and 60 seconds" in capsys.readouterr().err
