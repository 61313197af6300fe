"""``--profile`` end to end: real valkey-server, real perf, the installed kvflame."""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kvperf.analysis.comparison import compare_paired, group_rows
from tests.helpers import ROOT, require_binary, run_kvperf, write_config

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SET = [{"requests": 20000, "commands": ["SET"], "pipelines": 1, "keyspacelen": 1000,
        "clients": 4}]
QUICK = {"KVPERF_QUICK": "1"}
SVG = "{http://www.w3.org/2000/svg}"


def _frames(svg: Path) -> set[str]:
    """The function names of an SVG flamegraph's frames (their <title> text, sans counts)."""
    root = ET.parse(svg).getroot()
    assert root.tag == f"{SVG}svg"
    return {t.text.split(" (")[0] for t in root.iter(f"{SVG}title") if t.text}


# Alone: its frames are samples of a 1 s trial, and a brand-new machine's parallel lane (a
# build beside it) once left the server too little CPU for one SET stack to be sampled.
@pytest.mark.usefixtures("no_strays")
@pytest.mark.alone
def test_run_profile_writes_flamegraph_folded_stacks_and_report(tmp_path: Path) -> None:
    require_binary("valkey-server")
    require_binary("kvflame")
    # 100,000 requests, not quick mode's 20,000: a 0.3 s trial's ~150 samples of the server
    # once held no setCommand frame (the kernel's network stack takes most at pipeline 1)
    write_config(tmp_path, [{**SET[0], "requests": 100_000}], "set.json")
    done = run_kvperf("run", "--profile", "--config", "set.json", "--results-dir", "res",
                      "--label", "prof", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "profile artifacts" in done.stdout and "flamegraph" in done.stdout
    assert "excluded from timing statistics" in done.stdout
    out = tmp_path / "res" / "prof"
    [row] = json.loads((out / "metrics.json").read_text())
    profile = row["profile"]
    assert profile["event"] == "cpu-clock" and profile["frequency"] == 999
    assert profile["call_graph"] == "fp" and profile["mode"] == "cpu"
    [node] = profile["nodes"]
    assert set(node["files"]) == {"perf.data", "perf script", "folded stacks", "flamegraph",
                                  "perf report"}
    assert all((out / f).is_file() for f in node["files"].values())
    assert node["top_symbols"] and node["top_dsos"]
    # the per-DSO shares: the server is one of the first two shared objects of user space
    # (the kernel's network stack takes most at pipeline 1, and on a busy machine libc's
    # share can pass the server's), named as started (Debian's valkey-server is a symlink to
    # valkey-check-rdb, the name perf resolves)
    user = [e["name"] for e in profile["dsos"] if not e["name"].startswith("[")]
    assert "valkey-server" in user[:2], profile["dsos"]
    assert not any("check-rdb" in name for name in user), profile["dsos"]
    assert "on-cpu share per shared object" in done.stdout
    assert "## On-CPU share per shared object" in (out / "profile.md").read_text()
    frames = _frames(out / node["files"]["flamegraph"])
    assert {"processCommand", "setCommand"} <= frames, sorted(frames)[:50]
    folded = (out / node["files"]["folded stacks"]).read_text()
    assert any("processCommand" in line.split(";") for line in folded.splitlines())
    assert "| flamegraph |" in (out / "profile.md").read_text()
    assert group_rows([row]) == {}  # the profiled row is kept out of statistics
    history = run_kvperf("history", "--results-dir", "res", cwd=tmp_path)  # and the database's
    assert "no results" in history.stdout + history.stderr, history.stdout
    report = run_kvperf("report", "res/prof", "-o", "r.html", "--json", "r.json", cwd=tmp_path)
    assert report.returncode == 0, report.stdout + report.stderr
    html = (tmp_path / "r.html").read_text()
    assert "Profile artifacts" in html and 'perf-node0.svg">' in html
    artifacts = json.loads((tmp_path / "r.json").read_text())["artifacts"]
    svgs = [a["file"] for a in artifacts if a["artifact"] == "flamegraph"]
    assert svgs and all((tmp_path / f).is_file() for f in svgs)
    metrics = out / "metrics.json"
    compared = run_kvperf("compare-results", metrics, metrics)
    assert compared.returncode == 2 and "never compared" in compared.stderr, compared.stderr


@pytest.mark.usefixtures("no_strays")
def test_every_cluster_node_is_profiled_for_the_measure_stage_only(tmp_path: Path) -> None:
    """A 3-node cluster trial measures ~0.1 s: each node still has its own samples, because
    perf is enabled (acknowledged) before the stage, not left to attach during it."""
    write_config(tmp_path, [{**SET[0], "pipelines": 8, "cluster_mode": True}], "cl.json")
    done = run_kvperf("run", "--profile", "--config", "cl.json", "--results-dir", "res",
                      "--label", "cl", "--no-db", cwd=tmp_path, env=QUICK)
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "res" / "cl"
    [row] = json.loads((out / "metrics.json").read_text())
    nodes = row["profile"]["nodes"]
    assert [n["node"] for n in nodes] == [0, 1, 2]
    for node in nodes:
        assert (out / node["files"]["folded stacks"]).read_text().strip(), node
        assert node["top_symbols"], node
    assert not list(out.glob("trials/*/*.ctl")) and not list(out.glob("trials/*/*.ack"))


@pytest.mark.usefixtures("no_strays")
def test_compare_profile_leaves_every_profiled_row_out_of_the_verdicts(tmp_path: Path) -> None:
    server = require_binary("valkey-server")
    write_config(tmp_path, SET, "set.json")
    done = run_kvperf("compare", "--server-bin", server, "--server-bin", server, "--profile",
                      "--runs", "2", "--config", "set.json", "--results-dir", "res",
                      "--label", "ab", "--no-db", "--seed", "3", cwd=tmp_path, env=QUICK)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "excluded from timing statistics and verdicts" in done.stdout
    assert "no timing verdicts" in done.stdout and "p (adj.)" not in done.stdout  # no empty table
    a = json.loads((tmp_path / "res" / "ab" / "A" / "metrics.json").read_text())
    b = json.loads((tmp_path / "res" / "ab" / "B" / "metrics.json").read_text())
    assert len(a) == len(b) == 2 and all(r["profile"] for r in a + b)
    assert compare_paired(a, b, "all") == []
    assert (tmp_path / "res" / "ab" / "profile.md").is_file()


@pytest.mark.parametrize(("argv", "message"), [
    (["--mode", "client"], "cannot be used with --mode client"),
    (["--measure", "instructions"], "cannot be combined with --measure instructions"),
    (["--profile-frequency", "0"], "--profile-frequency must be 1-100000"),
])
def test_profile_refuses_what_it_cannot_profile(tmp_path: Path, argv: list[str],
                                                message: str) -> None:
    done = run_kvperf("run", "--profile", *argv, "--results-dir", tmp_path, "--no-db")
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_profile_without_perf_exits_2(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # PATH with kvperf's tools and python but no perf
    bin_dir.mkdir()
    for tool in ("valkey-server", "kvload", "kvflame"):
        os.symlink(require_binary(tool), bin_dir / tool)
    assert shutil.which("perf", path=str(bin_dir)) is None
    done = run_kvperf("run", "--profile", "--results-dir", tmp_path, "--no-db",
                      env={"PATH": str(bin_dir)})
    assert done.returncode == 2 and "perf is not installed" in done.stderr, done.stderr


def _delta(svg: Path, function: str) -> float:
    """The differential change of a function's frame: its title ends '; +1.23%)'."""
    root = ET.parse(svg).getroot()
    titles = [t.text for t in root.iter(f"{SVG}title")
              if t.text and t.text.startswith(f"{function} (")]
    assert titles, f"no {function} frame in {svg}"
    return max(float(t.rsplit("; ", 1)[1].rstrip("%)")) for t in titles)


@pytest.mark.usefixtures("no_strays")
@pytest.mark.timeout(2400)
def test_compare_profile_marks_set_command_grown_in_set_slow(valkey_repo: Path,
                                                             build_cache: Path,
                                                             tmp_path: Path) -> None:
    """The fixture's set-slow spins inside setCommand: B's differential flamegraph (per
    request, every node and run of the series) marks setCommand's frame grown (red: its
    self CPU per request grew). Pipelined, so that the server's user-space work, not the
    kernel's per-read cost, dominates each request."""
    write_config(tmp_path, [{"duration": 1, "commands": ["SET"], "pipelines": 16,
                             "keyspacelen": 1000, "clients": 10}], "set.json")
    done = run_kvperf("compare", "base", "set-slow", "--repo", valkey_repo, "--profile",
                      "--runs", "2", "--config", "set.json", "--results-dir", "res",
                      "--label", "slow", "--no-db", "--seed", "5", cwd=tmp_path, timeout=1800,
                      env={**QUICK, "KVPERF_BUILD_CACHE": str(build_cache)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "differential flamegraph" in done.stdout
    [svg] = (tmp_path / "res" / "slow" / "flamediff").glob("*.svg")
    assert _delta(svg, "setCommand") > 0
    assert "Differential flamegraphs" in (tmp_path / "res" / "slow" / "profile.md").read_text()


@pytest.mark.usefixtures("no_strays")
def test_run_definitions_profile_profiles_each_test(tmp_path: Path) -> None:
    """`run --definitions … --profile`: every definition's test gets its profile, kept out of
    statistics like a config trial's."""
    shutil.copytree(ROOT / "configs" / "definitions", tmp_path / "defs")
    done = run_kvperf("run", "--definitions", "defs", "--override-test-time", "1",
                      "--topologies", "oss-standalone", "--profile", "--results-dir", "res",
                      "--no-db", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    [out] = (tmp_path / "res").iterdir()
    rows = json.loads((out / "metrics.json").read_text())
    assert rows and all(r["definition"] and r["profile"] for r in rows)
    for row in rows:
        [node] = row["profile"]["nodes"]
        assert (out / node["files"]["flamegraph"]).is_file()
    assert group_rows(rows) == {}
    assert "profile artifacts" in done.stdout


@pytest.mark.usefixtures("no_strays")
def test_instruction_mode_writes_a_flamegraph_of_the_call_graph(tmp_path: Path) -> None:
    """--measure instructions: callgrind's call graph folded into stacks and rendered; the
    SET trial's graph has setCommand under processCommand."""
    require_binary("valgrind")
    write_config(tmp_path, [{**SET[0], "requests": 5000, "clients": 1}], "ins.json")
    done = run_kvperf("run", "--measure", "instructions", "--config", "ins.json",
                      "--results-dir", "res", "--label", "ins", "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "res" / "ins"
    [row] = json.loads((out / "metrics.json").read_text())
    svg = out / row["instructions"]["flamegraph"]
    assert {"processCommand", "setCommand"} <= _frames(svg)
    folded = (svg.parent / "callgrind.folded").read_text()
    assert any(line.split(" ")[0].endswith(";processCommand;call;setCommand")
               for line in folded.splitlines())
    assert row["profile"] is None and row["status"] == "ok"


@pytest.mark.usefixtures("no_strays")
@pytest.mark.timeout(2400)
def test_compare_instructions_differential_marks_set_command_grown(valkey_repo: Path,
                                                                  build_cache: Path,
                                                                  tmp_path: Path) -> None:
    """compare --measure instructions: the differential of callgrind's call graphs (per
    request) marks set-slow's setCommand grown — deterministically, one SET client."""
    write_config(tmp_path, [{**SET[0], "requests": 5000, "clients": 1}], "ins.json")
    done = run_kvperf("compare", "base", "set-slow", "--repo", valkey_repo, "--measure",
                      "instructions", "--runs", "2", "--config", "ins.json", "--results-dir",
                      "res", "--label", "ins", "--no-db", "--seed", "3", cwd=tmp_path,
                      timeout=1800, env={**QUICK, "KVPERF_BUILD_CACHE": str(build_cache)})
    assert done.returncode == 0, done.stdout + done.stderr
    [svg] = (tmp_path / "res" / "ins" / "flamediff").glob("*.svg")
    assert _delta(svg, "setCommand") > 5
    assert "callgrind Ir" in done.stdout


def _main_thread_seconds(folded: str) -> float:
    """Wall time of the server's main thread in a wall-time folded file (µs → s)."""
    return sum(int(line.rsplit(" ", 1)[1]) for line in folded.splitlines()
               if line.split(";", 1)[0] == "valkey-server") / 1e6


@pytest.mark.usefixtures("no_strays")
@pytest.mark.alone  # the 1 s window's on- and off-CPU time, bounded (1.1006 s seen in the
# parallel lane)
def test_profiling_sets_wall_time_in_a_window_beside_a_timed_trial(tmp_path: Path) -> None:
    """The seed's profiling_sets: one unprofiled set (timed) and one wall-time set sampling
    1 s from 0.5 s into a 2 s measure stage; the main thread's wall time is that window."""
    require_binary("kvflame")
    sets = [{"enabled": False},
            {"enabled": True, "mode": "wall-time",
             "delays": {"measure": {"delay": 0.5, "duration": 1}}}]
    write_config(tmp_path, [{"duration": 2, "commands": ["SET"], "pipelines": 1,
                             "clients": 8, "keyspacelen": 1000, "profiling_sets": sets}],
                 "sets.json")
    done = run_kvperf("run", "--config", "sets.json", "--label", "ps", "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "profiled wall-time: not timed" in done.stdout, done.stdout
    out = tmp_path / "results" / "ps"
    rows = json.loads((out / "metrics.json").read_text())
    [timed] = [r for r in rows if not r["profile"]]
    [profiled] = [r for r in rows if r["profile"]]
    assert [len(g) for g in group_rows(rows).values()] == [1]  # only the timed row counts
    assert timed["trial_id"] != profiled["trial_id"]
    profile = profiled["profile"]
    assert profile["mode"] == "wall-time" and profile["window"] == {"delay": 0.5,
                                                                    "duration": 1.0}
    [node] = profile["nodes"]
    wall = node["wall_time"]
    assert wall["on_cpu_ms"] > 0 and wall["off_cpu_ms"] > 0
    # the idle server waits in epoll_wait; on a busy machine a preempted write can rank
    # above it, so it is one of the first few off-CPU frames, not always the first
    off_cpu = [entry["name"] for entry in wall["top_off_cpu"][:3]]
    assert "epoll_wait (off-CPU)" in off_cpu, wall["top_off_cpu"]
    assert {"[off-cpu]", "epoll_wait", "setCommand"} <= _frames(out / node["files"]["flamegraph"])
    main = _main_thread_seconds((out / node["files"]["folded stacks"]).read_text())
    assert 0.8 < main < 1.1, main  # the 1 s window, less the intervals cut at its edges


@pytest.mark.usefixtures("no_strays")
def test_a_window_opening_after_the_measure_stage_says_nothing_was_sampled(
        tmp_path: Path) -> None:
    write_config(tmp_path, [{"duration": 1, "commands": ["SET"], "clients": 4,
                             "keyspacelen": 1000}], "one.json")
    done = run_kvperf("run", "--config", "one.json", "--profile", "--profile-delay", "30",
                      "--label", "late", "--no-db", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    [row] = json.loads((tmp_path / "results" / "late" / "metrics.json").read_text())
    assert "ended before the profiling window opened" in row["profile"]["note"]
    assert "ended before the profiling window opened" in done.stdout


MODULE_PROFILED = {
    "profiling_sets": [{"enabled": False},
                       {"enabled": True, "sampling_freq": 499,
                        "delays": {"read": {"delay": 0.2, "duration": 0.5}}}],
    "test_groups": [{"group": 1, "scenarios": [
        {"id": "w", "type": "write", "command": "SET __key__ __data__", "requests": 20000,
         "clients": 4, "keyspacelen": 1000},
        {"id": "r", "type": "read", "command": "GET __key__", "duration": 2, "clients": 4,
         "keyspacelen": 1000, "profiling": {"delays": {"read": {"delay": 0.5}}}}]}],
}


@pytest.mark.usefixtures("no_strays")
def test_module_config_profiling_sets_with_a_scenario_override(tmp_path: Path) -> None:
    """The seed's module format: every scenario once per profiling set (off, then on); the
    read scenario's own ``profiling`` moves its window's delay, the set's duration stays."""
    (tmp_path / "tests.json").write_text(json.dumps(MODULE_PROFILED))
    dry = run_kvperf("run", "--module-config", "tests.json", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0 and "cpu 499 Hz from 0.5 s for 0.5 s" in dry.stdout, dry.stdout
    done = run_kvperf("run", "--module-config", "tests.json", "--results-dir", "res",
                      "--label", "m", "--no-db", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "res" / "m"
    rows = json.loads((out / "metrics.json").read_text())
    assert [(r["command"], bool(r["profile"])) for r in rows] == [
        ("w", False), ("r", False), ("w", True), ("r", True)]
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows]
    w, r = rows[2]["profile"], rows[3]["profile"]
    assert w["window"] == {"delay": 0.0, "duration": None} and w["frequency"] == 499
    assert r["window"] == {"delay": 0.5, "duration": 0.5}
    for profile in (w, r):
        [node] = profile["nodes"]
        assert all((out / f).is_file() for f in node["files"].values())
    assert w["nodes"][0]["files"]["perf.data"] != r["nodes"][0]["files"]["perf.data"]
    assert "processCommand" in _frames(out / r["nodes"][0]["files"]["flamegraph"])
    assert rows[0]["trial_id"] != rows[2]["trial_id"]
    assert "profile artifacts" in done.stdout and "ok (profiled)" in done.stdout
    refused = run_kvperf("run", "--module-config", "tests.json", "--profile", cwd=tmp_path)
    assert refused.returncode == 2 and "profiling_sets" in refused.stderr, refused.stderr
