"""``--module-repo R`` on ``compare`` and ``run --commits``: the flags checked into one
request (pipeline/module_sides.py) before any build — a module-scenario config is needed,
refs counted, the server binary fixed (``--server-bin``, ``--valkey-path`` or the embedded
default), and ``{server_src}`` known when the server comes from a source tree."""

from __future__ import annotations

import os
from pathlib import Path

from kvperf.config.scenarios import load_module_config, select
from kvperf.core.errors import UsageError
from kvperf.pipeline.commands.checks import (
    build_request,
    checked_runs,
    interference_policy,
    names,
    refuse_module_measure,
    store_request,
)
from kvperf.pipeline.request.module_sides import ModuleSidesFlags, ModuleSidesRequest, ModuleSource
from kvperf.pipeline.request.options import ModuleOptions
from kvperf.pipeline.request.sides import default_label
from kvperf.pipeline.run.modules import check_module_measure
from kvperf.sourcebuild.builder import find_server


def _server(flags: ModuleSidesFlags) -> tuple[str | None, Path | None]:
    """The fixed server binary and the source tree behind it, if known."""
    given = [f for f, v in (("--server-bin", flags.server_bin), ("--valkey-path",
             flags.valkey_path), ("--server-ref", flags.server_ref)) if v is not None]
    if len(given) > 1:
        raise UsageError(f"give one server for every module build: {' or '.join(given)}")
    if flags.valkey_path is None:
        env = os.environ.get("KVPERF_SERVER_SRC")
        return flags.server_bin, Path(env) if env else None
    server = find_server(flags.valkey_path)
    if server is None:
        raise UsageError(f"--valkey-path {flags.valkey_path}: no built valkey-server in "
                         "src/ (build it first: make -C DIR)")
    return str(server), flags.valkey_path.resolve()


def module_sides_request(flags: ModuleSidesFlags) -> ModuleSidesRequest:
    """The checked request (UsageError or ConfigError, exit 2)."""
    if flags.module_config is None:
        raise UsageError("--module-repo needs --module-config FILE (the scenarios each "
                         "module build runs)")
    if flags.kind == "compare" and len(flags.refs) != 2:
        raise UsageError(f"compare --module-repo needs two module refs (A then B), got "
                         f"{len(flags.refs)}")
    if not flags.refs:
        raise UsageError("--module-repo needs module refs (--commits REF …)")
    refuse_module_measure(flags.measure)
    config = load_module_config(flags.module_config)
    selected = select(config, names(flags.groups), names(flags.scenarios))
    check_module_measure(config, selected, flags.measure)  # before any build
    server_bin, server_src = _server(flags)
    runs = checked_runs(flags.runs if flags.runs is not None else
                        (8 if flags.kind == "compare" else 1))
    store = store_request(flags.store, live=True)
    options = ModuleOptions(config, selected, flags.store.results_dir, None, server_bin,
                            flags.module, flags.module_paths, quick=flags.quick,
                            measure=flags.measure)
    cache = build_request(flags.builds, tree=Path(".")).cache
    server_build = (build_request(flags.builds) if flags.server_ref is not None else None)
    source = ModuleSource(flags.repo, flags.build, flags.artifact, cache, flags.builds.jobs,
                          server_src)
    out_dir = flags.store.results_dir / (flags.label or default_label(f"module-{flags.kind}"))
    return ModuleSidesRequest(flags.refs, source, options, runs, out_dir, flags.seed, store,
                              interference_policy(flags.interference, retry_default=True),
                              server_build, flags.server_ref)
