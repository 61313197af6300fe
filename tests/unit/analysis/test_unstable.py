"""analysis/unstable.py: series whose A/A noise exceeds their minimum effect."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from kvperf.analysis.regressions import Series, Thresholds, series_findings
from kvperf.analysis.unstable import MAD_TO_SD, commit_noise, unstable_keys, unstable_series

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _series(key: str, values: list[float], metric: str = "rps") -> Series:
    return Series(key, {"command": key}, metric, values, [f"{key}{i:03d}" for i in
                                                         range(len(values))],
                  [T0 + timedelta(hours=i) for i in range(len(values))])


def _noisy(cv: float, n: int = 40, level: float = 100_000.0, seed: int = 3) -> list[float]:
    rng = random.Random(seed)
    return [level * math.exp(rng.gauss(0, cv)) for _ in range(n)]


def test_commit_noise_by_hand() -> None:
    # log ratios: +a, −a, +a, −a, +a (a = log 1.1): median 0.0953…, |dev| all 0 or 2a → MAD 0
    a = 1.1
    assert commit_noise([1, a, 1, a, 1, a]) == (0.0, 5)
    diffs = [0.01, -0.02, 0.03, -0.01, 0.02]
    values = [1.0]
    for d in diffs:
        values.append(values[-1] * math.exp(d))
    noise, pairs = commit_noise(values)
    median = sorted(diffs)[2]
    mad = sorted(abs(d - median) for d in diffs)[2]
    assert pairs == 5 and noise == pytest.approx(MAD_TO_SD * mad)
    assert math.isnan(commit_noise([1.0, 2.0, 3.0])[0])  # too few pairs


def test_a_step_is_not_noise() -> None:
    values = [100.0] * 10 + [50.0] * 10
    assert commit_noise(values, [10])[0] == 0.0
    assert commit_noise(values)[0] == 0.0  # one jump among 19 pairs: the median ignores it


def test_noisy_series_is_unstable_quiet_one_is_not() -> None:
    noisy = _series("SET", _noisy(0.05))  # 5% per commit: ~7% between two
    quiet = _series("GET", _noisy(0.002))
    (found,) = unstable_series([noisy, quiet])
    assert (found.series_key, found.metric, found.source) == ("SET", "rps", "history")
    assert found.noise > 0.05 and found.min_effect == 0.02 and found.pairs == 39
    assert unstable_keys([found]) == {("SET", "rps")}
    # a larger minimum effect than the noise: stable
    assert unstable_series([noisy], thresholds=Thresholds(min_magnitude=0.2)) == []


def test_a_measured_aa_noise_beats_the_history() -> None:
    quiet = _series("GET", _noisy(0.002))
    (found,) = unstable_series([quiet], measured={("GET", "rps"): 0.03})
    assert (found.noise, found.source) == (0.03, "noise run")
    assert unstable_series([_series("SET", _noisy(0.05))],
                           measured={("SET", "rps"): 0.01}) == []


def test_the_found_change_points_split_the_regimes() -> None:
    values = [v * (0.5 if i >= 20 else 1.0) for i, v in enumerate(_noisy(0.003))]
    series = _series("SET", values)
    findings = series_findings(series)
    assert [f.first_after.sha for f in findings] == ["SET020"]
    assert unstable_series([series], findings) == []
