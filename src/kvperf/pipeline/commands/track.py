"""The commands over stored results — history, regressions, report, compare-results, track,
db — and doctor and suites: one request each, checked before a file is read, a database
opened or the machine probed."""

from __future__ import annotations

import json
from pathlib import Path

from kvperf.config.scenarios import is_module_config
from kvperf.core.errors import ConfigError, UsageError
from kvperf.pipeline.commands.checks import store_request
from kvperf.pipeline.request.common import StoreFlags
from kvperf.pipeline.request.stored import TrackClaimRequest, TrackDetermineRequest
from kvperf.store import track


def job_kind(config_content: str | None) -> str:
    """``module`` for a job whose config is a module-test config (test_groups: its commits
    are a module's, run with ``run --commits SHA --module-repo REPO``), else ``server``."""
    try:
        return "module" if is_module_config(json.loads(config_content or "")) else "server"
    except ValueError:
        return "server"


def track_determine_request(*, repo: str | None, branch: str, max_commits: int,
                            config: Path, architecture: str, max_attempts: int,
                            store: StoreFlags, module_repo: str | None = None
                            ) -> TrackDetermineRequest:
    if (repo is None) == (module_repo is None):
        raise UsageError("give --repo R (server commits) or --module-repo R (a module's "
                         "commits, run on a fixed server), one of them")
    try:
        content = config.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config {str(config)!r}: {exc.strerror or exc}"
                          ) from None
    tracked = track.config_from_text(config.name, content)
    module = module_repo is not None
    if (job_kind(content) == "module") != module:
        raise UsageError(f"config {str(config)!r}: " + (
            "--module-repo tracks a module-test config (test_groups); this one is a server "
            "benchmark config" if module else
            "a module-test config (test_groups) is tracked with --module-repo R"))
    return TrackDetermineRequest(module_repo or repo or "", branch, max_commits, tracked,
                                 architecture, max_attempts, store_request(store), module)


def track_claim_request(*, runner: str, lease: float, architecture: str | None, hold: float,
                        store: StoreFlags) -> TrackClaimRequest:
    if hold < 0:
        raise UsageError(f"--hold must be >= 0, got {hold}")
    return TrackClaimRequest(runner, lease, architecture, hold, store_request(store))
