"""The CLI's shape: every command module (cli/<command>.py) is in the import-linter contract
that keeps command modules from importing one another."""

from __future__ import annotations

import tomllib

from tests.helpers import ROOT


def test_every_command_module_is_kept_independent() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (independent,) = [c for c in contracts["contracts"] if c["type"] == "independence"
                      and c["name"].startswith("cli imports no sibling command")]
    commands = {f"kvperf.cli.{p.stem}" for p in (ROOT / "src" / "kvperf" / "cli").glob("*.py")
                if not p.stem.startswith("_") and p.stem != "main"}
    assert set(independent["modules"]) == commands
