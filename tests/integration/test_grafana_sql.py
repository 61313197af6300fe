"""Every SQL statement of the Grafana provisioning (panels, variables, annotations) runs against
a real PostgreSQL 15 holding real results, with Grafana's variables and macros substituted,
and returns rows.

Grafana cannot run here, so ``render`` implements the part of its SQL interpolation the
dashboards use: ``$var`` / ``${var}`` (multi-value and "All" → quoted comma list, single value
→ raw text, as Grafana's SQL datasources format them) and ``$__timeFilter(expr)``.

Data: a real ``kvperf run`` (valkey-server + kvload, 2 rounds of SET and GET) written live
with ``--db postgresql://…`` as the first of 12 commits of a real git repository whose commit
metadata ``kvperf track determine`` recorded; the 11 later commits are that run's
metrics.json pushed again with the commit replaced (SET's rps −15 % from commit 6 on, so
``kvperf regressions --store`` has a change point to fill the regressions table with).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml

from kvperf.cli.main import main
from kvperf.store.db import open_store, parse_url
from kvperf.store.push import push_file
from tests.helpers import ROOT, read_metrics, require_binary, run_kvperf, write_config
from tests.pg import PgCluster
from tests.unit.fleet.gitrepo import make_repo

pytestmark = pytest.mark.integration
PROVISIONING = ROOT / "grafana" / "provisioning"
DASHBOARDS = sorted((PROVISIONING / "dashboards").glob("*.json"))
TIME_FROM, TIME_TO = "2000-01-01T00:00:00Z", "2100-01-01T00:00:00Z"
COMMITS, STEP_AT = 12, 6


def statements(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, sql) of every panel target, query variable and annotation."""
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield f"panel {panel['title']!r} {target['refId']}", target["rawSql"]
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            yield f"variable {var['name']}", var["query"]
    for anno in dashboard["annotations"]["list"]:
        yield f"annotation {anno['name']}", anno["target"]["rawSql"]


def _format(values: list[str], multi: bool) -> str:
    if multi:
        return ",".join("'" + v.replace("'", "''") + "'" for v in values)
    return values[0]


def expand_time_filter(sql: str) -> str:
    """``$__timeFilter(expr)`` → ``expr BETWEEN from AND to`` (expr may nest parentheses)."""
    macro = "$__timeFilter("
    while (start := sql.find(macro)) >= 0:
        depth, i = 1, start + len(macro)
        while depth:
            assert i < len(sql), f"unbalanced $__timeFilter( in:\n{sql}"
            depth += {"(": 1, ")": -1}.get(sql[i], 0)
            i += 1
        expr = sql[start + len(macro):i - 1]
        sql = f"{sql[:start]}{expr} BETWEEN '{TIME_FROM}' AND '{TIME_TO}'{sql[i:]}"
    return sql


def render(sql: str, values: dict[str, list[str]], multi: dict[str, bool]) -> str:
    """Grafana's interpolation of the variables and the macros these dashboards use."""
    sql = expand_time_filter(sql)
    sql = sql.replace("$__timeFrom()", f"'{TIME_FROM}'").replace("$__timeTo()", f"'{TIME_TO}'")
    for name in sorted(values, key=len, reverse=True):
        text = _format(values[name], multi[name])
        sql = sql.replace("${" + name + "}", text).replace("$" + name, text)
    left = re.findall(r"\$\{?\w+", sql)
    assert not left, f"unsubstituted Grafana variables/macros {left} in:\n{sql}"
    return sql


def variable_values(conn: psycopg.Connection[Any],
                    dashboard: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, bool]]:
    """Every variable set to all of its values (query variables run their own SQL first)."""
    values: dict[str, list[str]] = {}
    multi: dict[str, bool] = {}
    for var in dashboard["templating"]["list"]:
        multi[var["name"]] = bool(var.get("multi") or var.get("includeAll"))
        if var["type"] == "query":
            rows = conn.execute(render(var["query"], values, multi)).fetchall()
            values[var["name"]] = [str(r[0]) for r in rows]
        else:
            values[var["name"]] = [o["value"] for o in var["options"] if o["selected"]]
        assert values[var["name"]], f"variable {var['name']} has no values"
    return values, multi


@pytest.fixture(scope="module")
def real_db(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> str:
    require_binary("valkey-server")
    tmp = tmp_path_factory.mktemp("grafana")
    url = pg_cluster.create_database("grafana_sql")
    shas = make_repo(tmp / "repo", COMMITS)
    config = write_config(tmp, [{"requests": 20000, "keyspacelen": 1000, "data_sizes": [64],
                                 "pipelines": [1], "clients": [10], "commands": ["SET", "GET"]}])
    done = run_kvperf("track", "determine", "--repo", tmp / "repo", "--max-commits",
                      str(COMMITS), "--config", config, "--db", url)
    assert done.returncode == 0, done.stderr
    # commit 0's rows are pushed below like every other commit's: a copy of this run,
    # undisturbed (pushed as measured, a busy machine's disturbed trial left commit 0's
    # mean off the others and the step was not found)
    done = run_kvperf("run", "--config", config, "--runs", "2", "--commit", shas[0],
                      "--results-dir", tmp / "results", "--no-db")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_metrics(tmp / "results")
    assert rows and all(r["status"] == "ok" for r in rows)
    engine = open_store(parse_url(url))
    for i, sha in enumerate(shas):
        derived = copy.deepcopy(rows)
        for row in derived:
            row["commit"] = sha
            # synthetic revisions: undisturbed whatever a busy machine did to the measured run
            # (disturbed trials stay out of metric_summary, which the panels read)
            row["interference"]["disturbed"] = False
            if row["command"] == "SET" and i >= STEP_AT:
                row["rps"] *= 0.85
        path = tmp / "pushed" / sha / "metrics.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(derived))
        assert push_file(engine, path).added == len(rows)
    engine.dispose()
    assert main(["regressions", "--db", url, "--store", "--metric", "rps",
                 "--max-pvalue", "0.01", "--min-magnitude", "0.05"]) == 0
    return url


def test_provisioning_files_are_valid() -> None:
    ds = yaml.safe_load((PROVISIONING / "datasources" / "kvperf.yaml").read_text())
    (source,) = ds["datasources"]
    assert source["type"] == "grafana-postgresql-datasource" and source["uid"] == "kvperf-pg"
    assert source["secureJsonData"]["password"].startswith("${"), "password must come from env"
    provider = yaml.safe_load((PROVISIONING / "dashboards" / "kvperf.yaml").read_text())
    assert provider["providers"][0]["type"] == "file"
    assert DASHBOARDS, "no dashboard JSON"
    for path in DASHBOARDS:
        dash = json.loads(path.read_text())
        names = {v["name"] for v in dash["templating"]["list"]}
        assert {"command", "data_size", "pipeline", "clients", "io_threads", "cluster_mode",
                "tls"} <= names
        for panel in dash["panels"]:
            assert panel["datasource"]["uid"] == "kvperf-pg"


@pytest.mark.slow
@pytest.mark.parametrize("path", DASHBOARDS, ids=[p.name for p in DASHBOARDS])
def test_every_statement_runs_and_returns_rows(real_db: str, path: Path) -> None:
    dash = json.loads(path.read_text())
    u = parse_url(real_db)
    with psycopg.connect(host=u.host, port=u.port, user=u.username, password=u.password,
                         dbname=u.database) as conn:
        values, multi = variable_values(conn, dash)
        assert set(values["command"]) == {"SET", "GET"}
        checked = []
        for where, sql in statements(dash):
            rows = conn.execute(render(sql, values, multi)).fetchall()
            assert rows, f"{where} returned no rows"
            checked.append(where)
        # the regressions table holds the injected SET step between commits 5 and 6
        regressions = conn.execute(render(
            next(sql for w, sql in statements(dash) if "Change points" in w), values, multi)
        ).fetchall()
    # … and its alert (`regressions --store` recorded it), still new
    assert any(r[1] == "regression" and r[2] == "SET" and r[11] == "new" for r in regressions)
    assert len(checked) >= 12


def test_render_formats_like_grafana() -> None:
    sql = ("SELECT 1 WHERE a IN ($a) AND b = '${b}' AND "
           "$__timeFilter(COALESCE(x, min(y)))")
    out = render(sql, {"a": ["it's", "z"], "b": ["p99"]}, {"a": True, "b": False})
    assert out == ("SELECT 1 WHERE a IN ('it''s','z') AND b = 'p99' AND "
                   f"COALESCE(x, min(y)) BETWEEN '{TIME_FROM}' AND '{TIME_TO}'")
    with pytest.raises(AssertionError, match="unsubstituted"):
        render("SELECT $missing", {}, {})
