"""The whole redis-benchmarks-specification 0.3.47 corpus through `kvperf run --definitions
… --dry-run`: every file plans or is refused with a reason, no traceback, ≥ 95% of the
memtier_benchmark definitions plan on all their topologies; every planned memtier argv is
accepted by kvload memtier itself. Prints the refusal reasons grouped and counted."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvperf.definitions.client import MEMTIER
from kvperf.definitions.dryrun import reason_group
from kvperf.definitions.exporter import evaluate
from kvperf.definitions.kpis import Kpi, check_all
from kvperf.definitions.loader import load
from kvperf.definitions.plan import Plan, plan_all
from tests.fixtures.corpus import suites_dir, vector_dir
from tests.helpers import require_binary, run_kvperf

LINE = re.compile(r"^(plan|refused) +(\S+) \[([^]:]+)")


@pytest.fixture(scope="module")
def dry_run(corpus: Path) -> subprocess.CompletedProcess[str]:
    return run_kvperf("run", "--definitions", suites_dir(corpus), vector_dir(corpus),
                      "--dry-run", "--override-test-time", "2", timeout=600)


def test_every_file_plans_or_is_refused(corpus: Path,
                                        dry_run: subprocess.CompletedProcess[str]) -> None:
    assert dry_run.returncode == 0, dry_run.stderr[-2000:]
    assert "Traceback" not in dry_run.stdout + dry_run.stderr
    files = sorted(suites_dir(corpus).glob("*.yml")) + sorted(vector_dir(corpus).glob("*"))
    definitions = load([suites_dir(corpus), vector_dir(corpus)]).definitions
    assert len(files) == 553 and len(definitions) == 552  # defaults.yml is merged, not run
    seen: dict[str, set[str]] = {}
    for line in dry_run.stdout.splitlines():
        found = LINE.match(line)
        if found:
            seen.setdefault(found.group(2), set()).add(found.group(1))
            assert found.group(1) == "plan" or line.split("]: ", 1)[1].strip(), line
    assert {d.name for d in definitions} == set(seen)
    assert "definition file(s):" in dry_run.stdout


def test_memtier_definitions_plan(corpus: Path) -> None:
    loaded = load([suites_dir(corpus), vector_dir(corpus)])
    results = plan_all(loaded.definitions, loaded.topologies, 2, file_exists=Path.is_file)
    memtier = {d.source for d in loaded.definitions if d.tools and set(d.tools) == {MEMTIER}}
    outcome: dict[Path, list[bool]] = {}
    for result in results:
        outcome.setdefault(result.definition.source, []).append(isinstance(result, Plan))
    planned = [source for source in memtier if all(outcome[source])]
    reasons = Counter(reason_group(r.reason) for r in results if not isinstance(r, Plan))
    print(f"\n{len(planned)} of {len(memtier)} memtier_benchmark definitions plan on every "
          f"topology ({100 * len(planned) / len(memtier):.1f}%); "
          f"{sum(map(len, outcome.values()))} definition × topology entries, "
          f"{sum(reasons.values())} refused:")
    for reason, count in reasons.most_common():
        print(f"  {count:4d}  {reason}")
    assert len(memtier) >= 531
    assert len(planned) >= 0.95 * len(memtier)


def _memtier_runs(corpus: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    loaded = load([suites_dir(corpus)])
    for result in plan_all(loaded.definitions, loaded.topologies, 2):
        if isinstance(result, Plan):
            cluster = ("--cluster-mode",) if result.topology.cluster else ()
            runs = [result.preload, *result.clients]
            for run in runs:
                if run is not None and run.tool == MEMTIER:
                    yield result.name, run.argv + cluster


def test_kvload_accepts_every_planned_argv(corpus: Path) -> None:
    """kvload memtier has no parse-only mode: aimed at a port that refuses connections, it
    exits 1 after accepting its options, 2 when it refuses one."""
    kvload = require_binary("kvload")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        port = str(closed.getsockname()[1])
        refused = []
        for name, argv in sorted(set(_memtier_runs(corpus))):
            done = subprocess.run([kvload, "memtier", "--server", "127.0.0.1", "--port", port,
                                   *argv], capture_output=True, text=True, timeout=30)
            if done.returncode != 1:
                refused.append(f"{name}: exit {done.returncode}: {done.stderr.strip()[:200]}")
    assert not refused, "\n".join(refused)


@pytest.mark.integration
@pytest.mark.usefixtures("no_strays")
def test_exporter_paths_resolve_on_kvload_memtier_json(corpus: Path, tmp_path: Path) -> None:
    """The corpus defaults' "ALL STATS" paths, and a KPI, over the JSON kvload memtier
    writes for a 1-second run against a real valkey-server."""
    loaded = load([suites_dir(corpus)])
    (plan,) = [r for r in plan_all(loaded.definitions, loaded.topologies, 1, ("oss-standalone",))
               if isinstance(r, Plan) and r.name == "memtier_benchmark-1Mkeys-string-get-10B"]
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = str(free.getsockname()[1])
    server = subprocess.Popen([require_binary("valkey-server"), "--port", port, "--save", "",
                               "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    try:
        out = tmp_path / "memtier.json"
        argv = [a for a in plan.clients[0].argv if not a.startswith(("--clients", "--threads"))]
        for attempt in range(50):
            done = subprocess.run(
                [require_binary("kvload"), "memtier", "--server", "127.0.0.1", "--port", port,
                 "--json-out-file", str(out), "-c", "2", "-t", "1", *argv],
                capture_output=True, text=True, timeout=60)
            if done.returncode != 1 or attempt == 49:
                break
            time.sleep(0.1)  # the server is still starting
        assert done.returncode == 0, done.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)
    document = json.loads(out.read_text())
    values = {v.name: v for v in evaluate(plan.metrics, document)}
    for path in [p for p in plan.metrics if p.startswith('$."ALL STATS"')]:
        assert values[path].value is not None, (path, values[path].missing)
    gate = check_all((Kpi("ge", '$."ALL STATS".Totals."Ops/sec"', 1),
                      Kpi("le", '$."ALL STATS".Totals."Ops/sec"', 1)), document)
    assert [r.passed for r in gate] == [True, False]
