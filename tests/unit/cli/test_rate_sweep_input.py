"""`kvperf run --rate-sweep`'s bad input: exit 2 with a message naming the flag (or the
config key), before any server starts (no results directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvperf.cli.main import main
from tests.helpers import write_config

GOOD = {"duration": 1, "commands": ["SET"]}

CASES: list[tuple[str, list[str], object, str]] = [
    ("zero rate", ["--rate-sweep", "--rates", "0,1000"], GOOD, "--rates"),
    ("negative rate", ["--rate-sweep", "--rates=-5"], GOOD, "--rates"),
    ("rate not a number", ["--rate-sweep", "--rates", "fast"], GOOD, "--rates"),
    ("zero step", ["--rate-sweep", "--rate-steps", "0,50"], GOOD, "--rate-steps"),
    ("unparsable slo", ["--rate-sweep", "--slo", "p99 under 1ms"], GOOD, "--slo"),
    ("slo without unit", ["--rate-sweep", "--slo", "p99<=1"], GOOD, "--slo"),
    ("point seconds zero", ["--rate-sweep", "--point-seconds", "0"], GOOD,
     "--point-seconds"),
    ("factor not above 1", ["--rate-sweep", "--knee-factor", "1"], GOOD, "--knee-factor"),
    ("rates and steps", ["--rate-sweep", "--rates", "1000", "--rate-steps", "50"], GOOD,
     "--rates and --rate-steps"),
    ("another tool", ["--rate-sweep", "--tool", "valkey-benchmark"], GOOD,
     "--rate-sweep needs kvload"),
    ("instructions", ["--rate-sweep", "--measure", "instructions"], {**GOOD},
     "--rate-sweep measures latency over time: not with --measure instructions"),
    ("memory", ["--rate-sweep", "--measure", "memory"], GOOD, "not with --measure memory"),
    ("server mode", ["--rate-sweep", "--mode", "server"], GOOD, "--rate-sweep drives load"),
    ("slo without sweep", ["--slo", "p99<=1ms"], GOOD, "--slo needs --rate-sweep"),
    ("rates without sweep", ["--rates", "1000"], GOOD, "--rates needs --rate-sweep"),
    ("commits", ["--rate-sweep", "--commits", "HEAD"], GOOD, "with --commits"),
    ("definitions", ["--rate-sweep", "--definitions", "/tmp"], None, "with --definitions"),
    ("config key, other tool", ["--tool", "valkey-benchmark"],
     {"requests": 1000, "commands": ["SET"], "rate_sweep": True}, "--rate-sweep needs kvload"),
    ("config key, bad slo", [], {**GOOD, "rate_sweep": {"slo": "p99<=fast"}},
     "rate_sweep.slo"),
    ("config key, zero rate", [], {**GOOD, "rate_sweep": {"rates": [0]}}, "rate_sweep.rates"),
]


def _main(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own refusals
        return int(exc.code or 0)


@pytest.mark.parametrize(("case", "flags", "config", "message"), CASES,
                         ids=[c[0] for c in CASES])
def test_bad_rate_sweep_input_exits_2_naming_the_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, flags: list[str],
        config: object, message: str) -> None:
    args = ["run", "--results-dir", str(tmp_path / "r")]
    if config is not None:
        args += ["--config", str(write_config(tmp_path, [config]))]
    code = _main([*args, *flags])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert message in err, err
    assert not (tmp_path / "r").exists(), "bad input must not start a run"


def test_dry_run_of_a_sweep_plans_without_running(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path, [GOOD])
    code = _main(["run", "--results-dir", str(tmp_path / "r"), "--config", str(path),
                  "--rate-sweep", "--dry-run"])
    out = capsys.readouterr()
    assert code == 0, out.err
    # 1 s closed loop + 1 s overhead, then 10 × (0.5 s settle + 5 s + 1 s)
    assert ("rate sweep: 1 closed-loop trial(s), then 10 open-loop point(s) (10%, 30%, 50%, "
            "60%, 70%, 80%, 85%, 90%, 95%, 100%); 11 trials ≈ 1 min 7 s") in out.out, out.out
    assert not (tmp_path / "r").exists()


COMPARE_CASES: list[tuple[str, list[str], str]] = [
    ("duet", ["--rate-sweep", "--schedule", "duet"], "--schedule duet"),
    ("another tool", ["--rate-sweep", "--tool", "valkey-benchmark"],
     "--rate-sweep needs kvload"),
    ("instructions", ["--rate-sweep", "--measure", "instructions"], "not with --measure"),
    ("bad slo", ["--rate-sweep", "--slo", "p99=1ms"], "--slo"),
    ("zero rate", ["--rate-sweep", "--rates", "0"], "--rates"),
    ("steps without sweep", ["--rate-steps", "50"], "--rate-steps needs --rate-sweep"),
]


@pytest.mark.parametrize(("case", "flags", "message"), COMPARE_CASES,
                         ids=[c[0] for c in COMPARE_CASES])
def test_bad_compare_rate_sweep_input_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, flags: list[str],
        message: str) -> None:
    path = write_config(tmp_path, [GOOD])
    code = _main(["compare", "--server-bin", "/usr/bin/valkey-server", "--server-bin",
                  "/usr/bin/valkey-server", "--config", str(path), "--results-dir",
                  str(tmp_path / "r"), *flags])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert message in err, err
    assert not (tmp_path / "r").exists()


def test_a_configs_sweep_refuses_an_explicit_duet(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path, [{**GOOD, "rate_sweep": True}])
    code = _main(["compare", "--server-bin", "/usr/bin/valkey-server", "--server-bin",
                  "/usr/bin/valkey-server", "--config", str(path), "--results-dir",
                  str(tmp_path / "r"), "--schedule", "duet"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "--schedule duet: a rate sweep's points run alone" in err, err
