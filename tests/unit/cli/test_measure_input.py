"""--measure: bad combinations exit 2 with one clear message before any server starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvperf.server import perf_stat
from tests.helpers import require_binary, run_main, write_config

GOOD = {"requests": 1000, "commands": ["SET"]}

CASES: list[tuple[str, list[str], object, str]] = [
    ("duration", [], {"duration": 3, "commands": ["SET"]}, "needs 'requests'"),
    ("no seed in redis-benchmark", ["--tool", "redis-benchmark"], GOOD,
     "cannot fix its random key seed"),
    ("client mode", ["--mode", "client", "--port", "1"], GOOD, "cannot be used with --mode"),
    ("unknown measure", ["--measure", "cycles"], GOOD, "invalid choice"),
]


@pytest.mark.parametrize(("case", "flags", "config", "message"), CASES,
                         ids=[c[0] for c in CASES])
def test_instruction_mode_rejects(tmp_path: Path, case: str, flags: list[str], config: object,
                                  message: str) -> None:
    path = write_config(tmp_path, [config])
    done = run_main("run", "--measure", "instructions", "--config", path, "--results-dir",
                      tmp_path / "r", *flags)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()


def test_perf_instructions_says_plainly_that_counters_are_missing(tmp_path: Path) -> None:
    require_binary("perf")
    reason = perf_stat.unsupported()  # these VMs expose no hardware counters
    assert reason is not None and "does not count hardware instructions" in reason
    assert "<not supported>" in reason and "--measure instructions" in reason
    done = run_main("run", "--measure", "perf-instructions", "--results-dir", tmp_path / "r")
    assert done.returncode == 2 and reason in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()


def test_perf_csv_parsing() -> None:
    assert perf_stat.parse_count("12345,,instructions:u,1000,100.00,,\n") == 12345
    assert perf_stat.parse_count("<not supported>,,instructions,0,100.00,,\n") is None
    assert perf_stat.parse_count("# started on x\n\n0.4,msec,cpu-clock,1,100.00,,\n") is None


def test_instruction_mode_defaults_to_a_fixed_request_count(tmp_path: Path) -> None:
    done = run_main("run", "--measure", "instructions", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "20000" in done.stdout, done.stdout
    assert "400000" not in done.stdout


def test_compare_checks_min_effect_before_running(tmp_path: Path) -> None:
    done = run_main("compare", "--server-bin", "valkey-server", "--server-bin",
                      "valkey-server", "--measure", "instructions", "--min-effect", "150",
                      "--results-dir", tmp_path / "r")
    assert done.returncode == 2 and "--min-effect" in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()
