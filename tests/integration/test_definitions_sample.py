"""A stratified sample of the real corpus runs on real valkey: for every tested-group, the
definition with the cheapest preload that plans on oss-standalone and sends only commands
the server has, with ``--override-test-time 1``. Each test executed the command mix it asks
for (INFO commandstats, within 5 points), preloaded exactly ``check.keyspacelen`` keys where
the definition says so, and its memtier-format JSON gives numbers at the exporter's paths.

Which commands a definition sends is read from its raw YAML text (every ``--command`` of its
memtier_benchmark client and preload arguments, memtier's own SET/GET without one), not with
kvperf's parser; which of them the server lacks, from the server (COMMAND INFO). Exactly the
groups of ``KNOWN_UNRUNNABLE`` have no definition this server can run: each runs its
cheapest one anyway and fails naming its reason, and the others still run.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kvperf.definitions.loader import load
from kvperf.definitions.plan import Plan, plan_all
from kvperf.server.resp import ConnectionLost, Endpoint, RespClient
from tests.fixtures.corpus import suites_dir
from tests.helpers import require_binary, run_kvperf

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1200),
              pytest.mark.usefixtures("no_strays")]

MIX_TOLERANCE = 0.05
_ARG = re.compile(r"^--(?P<name>[a-z-]+)=(?P<value>\S+)$")
_COMMAND = re.compile(r"""--command(?:=|\s+)["']?([A-Za-z][A-Za-z0-9._|-]*)""")

# Group → (the commands its cheapest definition sends that this valkey-server lacks, the
# reason, what the failed row's error says). No other group may fail.
KNOWN_UNRUNNABLE = {
    "array": ({"arring"}, "ARRING: the array type of a newer Redis; Valkey has no AR* "
              "commands", "the server executed no ARRING call"),
    "json": ({"json.get", "json.set"}, "JSON.GET / JSON.SET: a JSON module's commands "
             "(RedisJSON, valkey-json), not loaded", "the preload got"),
}


def _preload_cost(plan: Plan) -> int:
    """Requests the preload sends (0 without one): allkeys = the key range, else -n × clients
    × threads (memtier's defaults 50 and 4)."""
    if plan.preload is None:
        return 0
    args = {m["name"]: m["value"] for a in plan.preload.argv if (m := _ARG.match(a))}
    if args.get("requests") == "allkeys":
        return int(args.get("key-maximum", "10000000")) - int(args.get("key-minimum", "0")) + 1
    return (int(args.get("requests", "10000")) * int(args.get("clients", "50"))
            * int(args.get("threads", "4")))


def _merged(section: object) -> dict[str, object]:
    """A section as a map (redisbench-admin 0.2 writes lists of one-key maps)."""
    if isinstance(section, list):
        return {k: v for item in section if isinstance(item, dict) for k, v in item.items()}
    return section if isinstance(section, dict) else {}


def _commands(source: Path) -> set[str]:
    """The commands a definition sends, read from its YAML text (not with kvperf's parser):
    the first word of every ``--command`` of its memtier_benchmark client(s) and preload,
    memtier's own SET and GET for one without ``--command``."""
    raw = yaml.safe_load(source.read_text())
    configs = [_merged(raw.get("clientconfig")),
               *(_merged(c) for c in raw.get("clientconfigs") or []),
               _merged(_merged(raw.get("dbconfig")).get("preload_tool"))]
    names: set[str] = set()
    for config in configs:
        if config.get("tool") == "memtier_benchmark":
            sent = {m.lower() for m in _COMMAND.findall(str(config.get("arguments", "")))}
            names |= sent or {"set", "get"}
    return names


def _missing_commands(names: set[str]) -> set[str]:
    """Which of these commands the default valkey-server does not know (COMMAND INFO)."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    server = subprocess.Popen([require_binary("valkey-server"), "--port", str(port), "--save",
                               ""], stdout=subprocess.DEVNULL)
    try:
        endpoint = Endpoint("127.0.0.1", port)
        for _ in range(200):
            with contextlib.suppress(OSError, ConnectionLost), RespClient(endpoint) as client:
                replies = client.call("COMMAND", "INFO", *sorted(names))
                assert isinstance(replies, list)
                return {n for n, r in zip(sorted(names), replies, strict=True) if r is None}
            time.sleep(0.05)
        raise AssertionError("valkey-server did not answer")
    finally:
        server.terminate()
        server.wait(timeout=30)


def _sample(corpus: Path) -> tuple[dict[str, Plan], set[str]]:
    """Group → its cheapest-preload standalone plan (ties: by name), preferring plans whose
    commands the server has; and the commands it lacks."""
    loaded = load([suites_dir(corpus)])
    plans = [p for p in plan_all(tuple(loaded.definitions), loaded.topologies, 2,
                                 ("oss-standalone",), file_exists=Path.is_file)
             if isinstance(p, Plan)]
    sends = {p.name: _commands(p.definition.source) for p in plans}
    missing = _missing_commands(set().union(*sends.values()))
    groups = sorted({g for p in plans for g in p.definition.tested_groups})
    return {g: min((p for p in plans if g in p.definition.tested_groups),
                   key=lambda p: (bool(sends[p.name] & missing), _preload_cost(p), p.name))
            for g in groups}, missing


def _ok_rows(rows: list[dict[str, object]]) -> Iterator[dict[str, object]]:
    return (r for r in rows if r["status"] == "ok")


def test_one_definition_per_tested_group_runs_as_asked(corpus: Path, tmp_path: Path) -> None:
    sample, missing = _sample(corpus)
    assert len(sample) >= 15, sorted(sample)  # the corpus' groups, all represented
    lacking = {g: _commands(p.definition.source) & missing for g, p in sample.items()}
    assert {g: c for g, c in lacking.items() if c} == \
        {g: commands for g, (commands, _, _) in KNOWN_UNRUNNABLE.items()}, lacking
    defs = tmp_path / "defs"
    defs.mkdir()
    for plan in {p.name: p for p in sample.values()}.values():
        shutil.copy(plan.definition.source, defs)
    shutil.copy(suites_dir(corpus) / "defaults.yml", defs)
    done = run_kvperf("run", "--definitions", "defs", "--override-test-time", "1",
                      "--topologies", "oss-standalone", "--no-db", cwd=tmp_path,
                      timeout=1100)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    rows = json.loads(next((tmp_path / "results").glob("*/metrics.json")).read_text())
    by_name = {r["command"]: r for r in rows}
    print(f"\nsample of {len(by_name)} definitions (the server lacks {sorted(missing)[:8]}…):")
    for group, plan in sample.items():
        row = by_name[plan.name]
        print(f"  {group:13} {plan.name}: {row['status']} {row['rps'] or '-'} ops/s")
    failed = {g for g, p in sample.items() if by_name[p.name]["status"] != "ok"}
    assert failed == set(KNOWN_UNRUNNABLE), {g: by_name[sample[g].name]["error"]
                                             for g in failed ^ set(KNOWN_UNRUNNABLE)}
    for group, (_, reason, says) in KNOWN_UNRUNNABLE.items():
        error = by_name[sample[group].name]["error"]
        assert says in error and "does this server have" in error, (group, reason, error)
    for row in _ok_rows(rows):
        _check(row)
    assert done.returncode == 1  # the known failures are failed trials


def _check(row: dict[str, object]) -> None:
    name, definition = row["command"], row["definition"]
    assert isinstance(definition, dict)
    for command, share in definition["command_mix"].items():
        assert share["calls"] > 0, (name, command)
        assert abs(share["executed"] - share["expected"]) <= MIX_TOLERANCE, (name, command,
                                                                             share)
    if row["keyspacelen"]:
        assert row["checks"]["keyspacelen"] == row["keyspacelen"], name  # type: ignore[index]
    # the "ALL STATS" paths; "BEST/WORST RUN RESULTS" exist only with --run-count > 1
    all_stats = {k: v for k, v in definition["metrics"].items() if k.startswith('$."ALL STATS"')}
    pubsub = (row.get("client") or {}).get("pubsub")  # type: ignore[union-attr]
    if pubsub:  # kvload pubsub measures its PUBLISH client's rate, not that client's latency
        ops = all_stats.pop('$."ALL STATS".Totals."Ops/sec"')
        assert ops == pubsub["published_rps"] and ops > 0, (name, ops, pubsub)
        assert len(all_stats) >= 3 and all(v is None for v in all_stats.values()), all_stats
        return
    assert len(all_stats) >= 4 and all(isinstance(v, float) for v in all_stats.values()), \
        (name, all_stats)
