"""What disturbed trials get, as the request layer decides it: rerun by default for
compare, not for run; flags override; nothing judged where nothing is timed."""

from __future__ import annotations

import pytest

from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure, Mode
from kvperf.pipeline.commands.checks import RETRY_ENV, interference_policy
from kvperf.pipeline.commands.compare import compare_request
from kvperf.pipeline.commands.run import run_request
from kvperf.pipeline.request.common import InterferenceFlags
from kvperf.pipeline.request.options import InterferencePolicy
from kvperf.pipeline.request.run import RunFlags, RunRequest
from kvperf.pipeline.request.sides import CompareFlags


def test_compare_retries_by_default_and_run_does_not() -> None:
    compared = compare_request(CompareFlags(server_bins=("/usr/bin/valkey-server",) * 2))
    assert compared.sides.interference == InterferencePolicy(retry=True)
    ran = run_request(RunFlags())
    assert isinstance(ran, RunRequest) and ran.interference == InterferencePolicy(retry=False)
    off = compare_request(CompareFlags(server_bins=("/usr/bin/valkey-server",) * 2,
                                       interference=InterferenceFlags(retry=False,
                                                                      exclude=True)))
    assert off.sides.interference == InterferencePolicy(retry=False, exclude=True)


def test_nothing_timed_nothing_judged() -> None:
    assert interference_policy(InterferenceFlags(), retry_default=True,
                               measure=Measure.INSTRUCTIONS).threshold is None
    with pytest.raises(UsageError, match="--mode server measures nothing"):
        interference_policy(InterferenceFlags(retry=False), retry_default=False,
                            mode=Mode.SERVER)


def test_the_environment_sets_the_default_and_a_flag_still_wins(
        monkeypatch: pytest.MonkeyPatch) -> None:
    bins = ("/usr/bin/valkey-server",) * 2
    monkeypatch.setenv(RETRY_ENV, "0")
    assert compare_request(CompareFlags(server_bins=bins)).sides.interference == (
        InterferencePolicy(retry=False))
    flagged = compare_request(CompareFlags(server_bins=bins,
                                           interference=InterferenceFlags(retry=True)))
    assert flagged.sides.interference == InterferencePolicy(retry=True)
    monkeypatch.setenv(RETRY_ENV, "yes")
    ran = run_request(RunFlags())
    assert isinstance(ran, RunRequest) and ran.interference == InterferencePolicy(retry=True)
    monkeypatch.setenv(RETRY_ENV, "sometimes")
    with pytest.raises(UsageError, match="KVPERF_RETRY_DISTURBED='sometimes'"):
        compare_request(CompareFlags(server_bins=bins))
