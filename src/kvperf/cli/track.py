"""`kvperf track …`: commit tracking for runner fleets (store/track.py holds the rules).

determine  list the branch's last commits (git), record them, enqueue missing jobs (of the
           server, --repo, or of a module, --module-repo with a module-test config)
claim      take one job (prints it as JSON, or ``null`` when the queue is empty); its
           ``kind`` is ``module`` when determine enqueued it with --module-repo; never a
           definition-corpus job (determine --definitions): ``run`` takes those
mark       finish a claimed job: complete | failed
renew      extend a claimed job's lease (heartbeat for long runs)
query      list jobs and counts per state
cleanup    requeue expired claims; optionally delete old completed job rows
run        claim and run definition-shard jobs (determine --definitions) until none is left
status     each commit's corpus: its definition jobs done / failed / pending
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from kvperf.cli._builds import add_build_args
from kvperf.cli._clients import add_clients_dir
from kvperf.cli._common import Cli, ConsoleHooks
from kvperf.cli._paths import local_path
from kvperf.cli._store import add_store_options, store_flags
from kvperf.core.redact import redact_urls
from kvperf.pipeline.commands import track
from kvperf.pipeline.commands.checks import store_request
from kvperf.pipeline.commands.track import (
    Job,
    track_claim,
    track_claim_request,
    track_cleanup,
    track_determine,
    track_determine_request,
    track_mark,
    track_query,
    track_renew,
    track_status,
)
from kvperf.pipeline.commands.track_run import JobDone, track_run, track_run_request
from kvperf.pipeline.request.common import BuildFlags, DefinitionFlags, StoreRequest
from kvperf.pipeline.request.stored import (
    TrackCleanupRequest,
    TrackMarkRequest,
    TrackQueryRequest,
    TrackRenewRequest,
    TrackStatusRequest,
)
from kvperf.report.track import corpus_table, jobs_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "track", help="commit tracking for runner fleets (determine, claim, mark, …)",
        description="A queue of (commit, config content, architecture) jobs in the database: "
                    "runners claim jobs with a lease (FOR UPDATE SKIP LOCKED on PostgreSQL), "
                    "so no two run the same job and a crashed runner's job is taken again.")
    sub = p.add_subparsers(dest="track_command", metavar="ACTION", required=True)
    _add_determine(sub)
    _add_claim(sub)
    _add_mark(sub)
    _add_renew(sub)
    _add_query(sub)
    _add_cleanup(sub)
    _add_run(sub)
    _add_status(sub)


def _add_determine(sub: Any) -> None:
    p = sub.add_parser("determine", help="enqueue the branch's last commits not yet tracked")
    p.add_argument("--repo", help="the server's git repository: a local path or a URL")
    p.add_argument("--module-repo", metavar="R",
                   help="instead of --repo: a module's git repository; its commits are "
                        "tracked with a module-test --config (test_groups), each job run "
                        "with `run --commits SHA --module-repo R` on the runner's fixed "
                        "server (the claimed job's kind is module)")
    p.add_argument("--client-repo", metavar="NAME=R",
                   help="instead of --repo: a client library's git repository, named by its "
                        "harness; each job run with `run --client NAME@SHA --client-repo "
                        "NAME=R` (the claimed job's kind is client)")
    add_clients_dir(p)
    p.add_argument("--branch", default="unstable")
    p.add_argument("--max-commits", type=int, default=10)
    p.add_argument("--config", type=local_path,
                   help="benchmark config (JSON); tracked by its content, not its name")
    g = p.add_argument_group(
        "a corpus of definitions", "instead of --config (with --repo): one job per commit and "
        "shard of definition files sharing a preload, run by `track run`")
    g.add_argument("--definitions", nargs="+", type=local_path, metavar="PATH",
                   help="definition files or folders, under --corpus")
    g.add_argument("--corpus", type=local_path, default=Path("."), metavar="DIR",
                   help="the corpus root: jobs name files relative to it (default: .)")
    g.add_argument("--shard-size", type=int, default=8, metavar="N",
                   help="at most N definition files per job (default 8; 1: one job per "
                        "definition)")
    g.add_argument("--tests-regexp", default=".*", metavar="RE",
                   help="only definitions whose name or file name matches RE")
    g.add_argument("--topologies", nargs="+", metavar="NAME",
                   help="only these topologies of each definition")
    g.add_argument("--override-test-time", type=int, metavar="S",
                   help="replace each memtier client's --test-time by S seconds")
    g.add_argument("--cap-request-bound", action="store_true",
                   help="with --override-test-time S: request-bound memtier clients stop at "
                        "their requests or S seconds, whichever comes first")
    p.add_argument("--architecture", default=platform.machine(),
                   help=f"architecture the jobs are for (default: this host's, "
                        f"{platform.machine()})")
    p.add_argument("--max-attempts", type=int, default=track.DEFAULT_MAX_ATTEMPTS,
                   help="claims before a failing job stays failed (default 3)")
    add_store_options(p)
    p.set_defaults(handler=handle_determine)


def _add_claim(sub: Any) -> None:
    p = sub.add_parser("claim", help="claim one job; prints it as JSON (null: none left); "
                                     "definition-corpus jobs are left to `track run`")
    p.add_argument("--runner", required=True, help="this runner's name (recorded)")
    p.add_argument("--lease", type=float, default=track.DEFAULT_LEASE_SECONDS,
                   metavar="SECONDS", help="claim expires after this long unless renewed "
                                           f"(default {track.DEFAULT_LEASE_SECONDS})")
    p.add_argument("--architecture", help="only jobs for this architecture")
    p.add_argument("--hold", type=float, default=0.0, metavar="SECONDS",
                   help="for tests: after claiming, sleep this long before exiting "
                        "(simulates a runner busy with its job)")
    add_store_options(p)
    p.set_defaults(handler=handle_claim)


def _add_mark(sub: Any) -> None:
    p = sub.add_parser("mark", help="finish a claimed job: complete or failed")
    p.add_argument("--id", type=int, required=True, dest="job_id")
    p.add_argument("outcome", choices=(track.COMPLETE, track.FAILED))
    p.add_argument("--error", help="why it failed (kept in last_error)")
    p.add_argument("--attempt", type=int,
                   help="the claim's attempt number: refuse if the job was claimed again since")
    add_store_options(p)
    p.set_defaults(handler=handle_mark)


def _add_renew(sub: Any) -> None:
    p = sub.add_parser("renew", help="extend a claimed job's lease (heartbeat)")
    p.add_argument("--id", type=int, required=True, dest="job_id")
    p.add_argument("--lease", type=float, default=track.DEFAULT_LEASE_SECONDS, metavar="SECONDS")
    p.add_argument("--attempt", type=int)
    add_store_options(p)
    p.set_defaults(handler=handle_renew)


def _add_query(sub: Any) -> None:
    p = sub.add_parser("query", help="list jobs and counts per state")
    p.add_argument("--state", action="append", default=[], choices=track.STATES)
    p.add_argument("--sha", help="sha prefix")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true", help="print the jobs as a JSON list")
    add_store_options(p)
    p.set_defaults(handler=handle_query)


def _add_cleanup(sub: Any) -> None:
    p = sub.add_parser("cleanup", help="requeue expired claims; delete old completed job rows")
    p.add_argument("--no-requeue-expired", dest="requeue_expired", action="store_false",
                   help="do not touch expired claims")
    p.add_argument("--requeue-expired", dest="requeue_expired", action="store_true",
                   default=True, help="requeue expired claims, or fail them at the retry cap "
                                      "(the default)")
    p.add_argument("--delete-completed-older-than", type=float, metavar="DAYS",
                   help="delete job rows completed more than DAYS ago (results are kept)")
    add_store_options(p)
    p.set_defaults(handler=handle_cleanup)


def _add_run(sub: Any) -> None:
    p = sub.add_parser("run", help="claim and run definition-shard jobs until none is left")
    p.add_argument("--runner", required=True, help="this runner's name (recorded)")
    p.add_argument("--corpus", type=local_path, default=Path("."), metavar="DIR",
                   help="the corpus root the jobs' files are relative to (default: .)")
    p.add_argument("--lease", type=float, default=600.0, metavar="SECONDS",
                   help="a claim's lease, renewed every third of it while the job runs "
                        "(default 600): a runner killed mid-job loses its job this long "
                        "after")
    p.add_argument("--architecture", help="only jobs for this architecture")
    p.add_argument("--server-bin", help="run every job on this server binary (default: "
                                        "build the job's commit from its repository)")
    p.add_argument("--max-jobs", type=int, metavar="N", help="stop after N jobs")
    p.add_argument("--wait", action="store_true",
                   help="when no job is claimable but other runners hold some, wait: a "
                        "held job whose runner died is taken over when its lease expires "
                        "(default: stop)")
    p.add_argument("--ignore-resources", action="store_true",
                   help="run definitions whose memory request does not fit this machine")
    add_build_args(p, repo=False)
    add_store_options(p)
    p.set_defaults(handler=handle_run)


def _add_status(sub: Any) -> None:
    p = sub.add_parser("status", help="each commit's corpus: definition jobs per state")
    p.add_argument("--sha", help="sha prefix")
    p.add_argument("--json", action="store_true", help="print it as a JSON list")
    add_store_options(p)
    p.set_defaults(handler=handle_status)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=None, sort_keys=True) + "\n")
    sys.stdout.flush()


def _opening(cli: Cli, store: StoreRequest) -> None:
    cli.err.print(f"database: {store.name}", highlight=False)


def handle_determine(args: argparse.Namespace, cli: Cli) -> int:
    asked = track_determine_request(
        repo=args.repo, module_repo=args.module_repo, client_repo=args.client_repo,
        clients_dirs=tuple(args.clients_dir), branch=args.branch,
        max_commits=args.max_commits, config=args.config,
        architecture=args.architecture, max_attempts=args.max_attempts,
        store=store_flags(args), definitions=DefinitionFlags(
            None if args.definitions is None else tuple(args.definitions),
            args.tests_regexp, topologies=None if args.topologies is None
            else tuple(args.topologies), override_test_time=args.override_test_time,
            cap_request_bound=args.cap_request_bound),
        corpus=args.corpus, shard_size=args.shard_size)
    _opening(cli, asked.store)
    done = track_determine(asked, cli.world)
    config = asked.config
    what = "module " if asked.module else ""
    jobs = (f"config {config.name} ({config.hash[:12]})" if config else
            f"{len(asked.shards)} definition shard(s) each")
    cli.err.print(f"{done.commits} commits of {what}{redact_urls(asked.repo)} {asked.branch}; "
                  f"{len(done.enqueued)} new jobs for {jobs} on {asked.architecture}",
                  highlight=False)
    _print_json({"commits": done.commits, "enqueued": done.enqueued,
                 "config_hash": config.hash if config else None,
                 "shards": [s.name for s in asked.shards]})
    return 0


def handle_claim(args: argparse.Namespace, cli: Cli) -> int:
    asked = track_claim_request(runner=args.runner, lease=args.lease,
                                architecture=args.architecture, hold=args.hold,
                                store=store_flags(args))
    _opening(cli, asked.store)
    claimed = track_claim(asked, cli.world)
    job = claimed.job
    _print_json({**job.as_json(), "kind": claimed.kind} if job else None)
    if job and asked.hold:
        time.sleep(asked.hold)
    return 0


def handle_mark(args: argparse.Namespace, cli: Cli) -> int:
    asked = TrackMarkRequest(args.job_id, args.outcome, args.error, args.attempt,
                             store_request(store_flags(args)))
    _opening(cli, asked.store)
    job = track_mark(asked, cli.world)
    cli.err.print(f"job {job.id} ({job.sha[:12]}) {job.state} after {job.attempts} "
                  f"attempt(s)", highlight=False)
    return 0


def handle_renew(args: argparse.Namespace, cli: Cli) -> int:
    asked = TrackRenewRequest(args.job_id, args.lease, args.attempt,
                              store_request(store_flags(args)))
    _opening(cli, asked.store)
    job = track_renew(asked, cli.world)
    _print_json(job.as_json(with_content=False))
    return 0


def handle_query(args: argparse.Namespace, cli: Cli) -> int:
    asked = TrackQueryRequest(tuple(args.state), args.sha, args.limit, args.json,
                              store_request(store_flags(args)))
    _opening(cli, asked.store)
    found = track_query(asked, cli.world)
    if asked.json:
        _print_json([j.as_json(with_content=False) for j in found.jobs])
        return 0
    cli.out.print(jobs_table(found.jobs))
    cli.out.print("  ".join(f"{s}: {n}" for s, n in found.counts.items()))
    return 0


def handle_cleanup(args: argparse.Namespace, cli: Cli) -> int:
    asked = TrackCleanupRequest(args.requeue_expired, args.delete_completed_older_than,
                                store_request(store_flags(args)))
    _opening(cli, asked.store)
    done = track_cleanup(asked, cli.world)
    cli.err.print(f"requeued {done.requeued} expired claim(s), failed {done.failed} at the "
                  f"retry cap, deleted {done.deleted} completed job row(s)", highlight=False)
    return 0


class _RunHooks(ConsoleHooks):
    """`track run`'s progress: each job claimed and marked, then its tests as `run
    --definitions` shows them."""

    def claimed(self, job: Job, files: tuple[str, ...]) -> None:
        self.err.print(f"job {job.id}: {job.sha[:12]} attempt {job.attempts}, "
                       f"{len(files)} definition file(s)", highlight=False)

    def marked(self, done: JobDone) -> None:
        what = ("lost: its lease was taken over, not marked" if done.lost else done.outcome)
        note = f" ({done.note})" if done.note else ""
        self.err.print(f"job {done.job.id}: {what}{note}", highlight=False, soft_wrap=True)


def handle_run(args: argparse.Namespace, cli: Cli) -> int:
    asked = track_run_request(
        runner=args.runner, lease=args.lease, architecture=args.architecture,
        corpus=args.corpus, server_bin=args.server_bin,
        build=BuildFlags(None, args.make_args, args.build_jobs, args.build_cache),
        results_dir=args.results_dir, max_jobs=args.max_jobs,
        ignore_resources=args.ignore_resources, store=store_flags(args), wait=args.wait)
    _opening(cli, asked.store)
    done = track_run(asked, cli.world, _RunHooks(cli))
    failed = sum(1 for d in done if d.outcome == track.FAILED and not d.lost)
    cli.err.print(f"{len(done)} job(s) run, {failed} failed; no claimable definition job "
                  "left" if asked.max_jobs is None or len(done) < asked.max_jobs else
                  f"{len(done)} job(s) run, {failed} failed (--max-jobs)", highlight=False)
    return 1 if failed else 0


def handle_status(args: argparse.Namespace, cli: Cli) -> int:
    asked = TrackStatusRequest(args.sha, store_request(store_flags(args)))
    _opening(cli, asked.store)
    found = track_status(asked, cli.world)
    if args.json:
        _print_json([{"sha": p.sha, "jobs": p.jobs, "done": p.done, **p.counts}
                     for p in found])
        return 0
    cli.out.print(corpus_table(found))
    return 0
