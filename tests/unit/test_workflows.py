"""The GitHub Actions workflows parse, have the expected structure, and only call kvperf
subcommands and flags that kvperf's own parser defines."""

from __future__ import annotations

import argparse
import re
from typing import Any

import pytest
import yaml

from kvperf.cli.main import build_parser
from tests.helpers import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
# Flags a workflow uses that arrive with another issue's work (the build stage gives
# `compare` its git refs and --repo); anything else missing from the parser fails the test.
STOP = {"&&", "||", ";", "|", "then", "fi"}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    if True in data:  # YAML 1.1 reads the key `on` as the boolean true
        data["on"] = data.pop(True)
    return data


def scripts(workflow: dict[str, Any]) -> list[str]:
    return [step["run"] for job in workflow["jobs"].values() for step in job["steps"]
            if "run" in step]


def invocations(script: str) -> list[list[str]]:
    """Every ``kvperf …`` command line of a shell script, as tokens up to the next operator."""
    found = []
    for line in script.replace("\\\n", " ").splitlines():
        tokens = line.split()
        for i, tok in enumerate(tokens):
            if re.fullmatch(r"(\S*/)?kvperf", tok):
                rest = []
                for t in tokens[i + 1:]:
                    if t in STOP:
                        break
                    rest.append(t)
                found.append(rest)
    return found


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings}


@pytest.mark.parametrize("name", ["continuous.yml", "pr-compare.yml", "module-pr-benchmark.yml"])
def test_structure(name: str) -> None:
    wf = load(name)
    assert wf["name"] and wf["on"] and wf["jobs"]
    for job_name, job in wf["jobs"].items():
        assert job.get("runs-on"), f"{name}: job {job_name} has no runs-on"
        assert job["steps"], f"{name}: job {job_name} has no steps"
        for step in job["steps"]:
            assert ("run" in step) != ("uses" in step), f"{name}: {step}"


@pytest.mark.parametrize("name", ["continuous.yml", "pr-compare.yml", "module-pr-benchmark.yml"])
def test_kvperf_commands_exist_in_the_parser(name: str) -> None:
    commands = subparsers(build_parser())
    calls = [c for s in scripts(load(name)) for c in invocations(s)]
    assert calls, f"{name} never calls kvperf"
    for call in calls:
        sub = commands.get(call[0])
        assert sub is not None, f"{name}: kvperf {call[0]} is not a subcommand"
        path = call[0]
        actions = subparsers(sub)
        if actions:
            sub = actions.get(call[1])  # type: ignore[assignment]
            assert sub is not None, f"{name}: kvperf {call[0]} {call[1]} does not exist"
            path = f"{call[0]} {call[1]}"
        for flag in (t.split("=")[0] for t in call if re.fullmatch(r"--[a-z][\w-]*(=.*)?", t)):
            assert flag in options(sub), f"{name}: kvperf {path} has no option {flag}"


def test_continuous_runs_the_fleet_loop_in_order() -> None:
    wf = load("continuous.yml")
    crons = [s["cron"] for s in wf["on"]["schedule"]]
    assert crons and all(len(c.split()) == 5 for c in crons)
    assert wf["jobs"]["bench"]["needs"] == "determine"
    order = [" ".join(c[:2]) for s in scripts(wf) for c in invocations(s)]
    steps = ["track determine", "track claim", "run --repo", "db push", "track mark"]
    positions = [next(i for i, o in enumerate(order) if o.startswith(x)) for x in steps]
    assert positions == sorted(positions), order
    loop = next(s for s in scripts(wf) if "track claim" in s)
    assert "complete" in loop and "failed" in loop and '"null"' in loop
    # a module job (track determine --module-repo) runs its module's commit on one server
    (module,) = [c for c in invocations(loop) if "--module-repo" in c]
    assert module[0] == "run" and "--server-bin" in module and "--module-config" in module
    assert "jq -r .kind" in loop
    # the definition corpus: enqueued per (commit, shard), drained by `track run --wait`,
    # reported for the newest commit against its parent
    calls = [c for s in scripts(wf) for c in invocations(s)]
    (corpus,) = [c for c in calls if c[:2] == ["track", "determine"] and "--definitions" in c]
    assert "--corpus" in corpus
    (runner,) = [c for c in calls if c[:2] == ["track", "run"]]
    assert "--wait" in runner and "--corpus" in runner
    assert wf["jobs"]["report"]["needs"] == "bench"
    (report,) = [c for c in calls if c[0] == "report"]
    assert "--definitions" in report and "--baseline" in report


def test_pr_compare_runs_on_the_label_and_posts_the_report() -> None:
    wf = load("pr-compare.yml")
    assert "labeled" in wf["on"]["pull_request"]["types"]
    job = wf["jobs"]["compare"]
    assert "benchmark" in job["if"]
    calls = [c for s in scripts(wf) for c in invocations(s)]
    (compare,) = [c for c in calls if c[0] == "compare"]
    assert "--output" in compare and "report.md" in compare
    posts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/github-script")]
    assert any("createComment" in s["with"]["script"] and "report.md" in s["with"]["script"]
               for s in posts)
    assert wf["permissions"]["pull-requests"] == "write"


def test_module_template_compares_two_module_commits_and_keeps_flamegraphs() -> None:
    """kvperf builds the module at base and head itself (--module-repo) on one server: no
    shell wrapper around valkey-server per side."""
    wf = load("module-pr-benchmark.yml")
    job = wf["jobs"]["compare"]
    assert "run-benchmark" in job["if"]
    (compare,) = [c for s in scripts(wf) for c in invocations(s) if c[0] == "compare"]
    assert compare[1:3] == ['"$BASE_SHA"', '"$HEAD_SHA"']
    assert compare[compare.index("--module-repo") + 1] == "."
    assert "--module-config" in compare and "--output" in compare
    assert compare.count("--server-bin") == 1
    assert not any("loadmodule" in s for s in scripts(wf))
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and "results/module-pr" in uploads[0]["with"]["path"]


def test_continuous_files_each_new_alert_once() -> None:
    """After the fleet: change points recorded as alerts and bisected, then each alert nobody
    owns filed (gh with the workflow's token, never stored by kvperf) and assigned."""
    wf = load("continuous.yml")
    job = wf["jobs"]["alerts"]
    assert job["needs"] == "bench" and job["permissions"]["issues"] == "write"
    assert job["env"]["GH_TOKEN"] == "${{ github.token }}"
    calls = [c for s in scripts({"jobs": {"alerts": job}}) for c in invocations(s)]
    order = [" ".join(c[:2]) for c in calls]
    assert order == ["regressions --store", "alerts list", "alerts report", "alerts assign"]
    assert "--bisect" in calls[0] and "--open-issue" in calls[2]
    assert "select(.owner == null)" in next(s for s in scripts(wf) if "alerts list" in s)
