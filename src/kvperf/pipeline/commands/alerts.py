"""`kvperf alerts`: the stored alerts (store/alerts.py) listed, shown, moved along their
lifecycle (ack, assign, resolve), and reported ready to file.

``resolve --as fixed`` is checked (analysis/alerts.py ``fix_check``): every series of the
alert must be back, over the newest commits measured after the change, within its metric's
minimum effect of the value before it; else it is refused with the numbers (exit 2) unless
``--force``, which records them in the note. ``report`` writes the alert's markdown (or HTML)
with report/alerts.py and, with ``--open-issue``, files it with ``gh issue create`` when gh
is on PATH and ``gh auth status`` succeeds (kvperf never holds a token: gh's own login is
used), else says why and leaves the file.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from kvperf.analysis.alerts import FixCheck, Step, fix_check, regimes, step
from kvperf.analysis.bisect_log import BisectLog, from_json
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure
from kvperf.core.proc import probe, run
from kvperf.pipeline.commands.checks import store_request
from kvperf.pipeline.commands.compare import Compared, CompareHooks, compare, compare_request
from kvperf.pipeline.request.alerts import (
    AlertChangeRequest,
    AlertReportRequest,
    AlertsListRequest,
)
from kvperf.pipeline.request.bisect import BisectRequest
from kvperf.pipeline.request.common import BuildFlags, StoreFlags
from kvperf.pipeline.request.sides import CompareFlags
from kvperf.pipeline.world import World
from kvperf.report.alerts import AlertReport, report_html, report_markdown, report_title
from kvperf.store import alerts as stored
from kvperf.store.alerts import FIXED, RESOLUTIONS, STATES, Alert, AlertSummary
from kvperf.store.db import Database
from kvperf.store.files import write_json_atomic, write_text_atomic
from kvperf.store.series import History, histories

__all__ = ["RESOLUTIONS", "STATES", "AlertChanged", "AlertReported", "AlertsListed",
           "alert_change", "alert_change_request", "alert_report", "alert_report_request",
           "alerts_list", "alerts_list_request"]

ACTIONS = ("show", "ack", "assign", *RESOLUTIONS)


def alerts_list_request(*, states: tuple[str, ...], json: bool,
                        store: StoreFlags) -> AlertsListRequest:
    for state in states:
        if state not in STATES:
            raise UsageError(f"--state {state!r}: one of {', '.join(STATES)}")
    return AlertsListRequest(store_request(store), states, json)


def alert_change_request(*, alert: int, action: str, owner: str | None, note: str | None,
                         force: bool, json: bool, store: StoreFlags) -> AlertChangeRequest:
    if alert < 1:
        raise UsageError(f"alert id must be a positive number, got {alert}")
    if action not in ACTIONS:
        raise UsageError(f"{action!r}: one of {', '.join(ACTIONS)}")
    if action == "assign" and not owner:
        raise UsageError("assign needs an owner (kvperf alerts assign ID OWNER)")
    if force and action != FIXED:
        raise UsageError("--force applies only to resolve --as fixed")
    return AlertChangeRequest(store_request(store), alert, action, owner, note, force, json)


def alert_report_request(*, alert: int, output: Path | None, html: bool, open_issue: bool,
                         repo: str | None, store: StoreFlags) -> AlertReportRequest:
    if alert < 1:
        raise UsageError(f"alert id must be a positive number, got {alert}")
    if html and open_issue:
        raise UsageError("--open-issue files markdown; leave out --html")
    path = output or Path(f"alert-{alert}.{'html' if html else 'md'}")
    return AlertReportRequest(store_request(store), alert, path, html, open_issue, repo)


@dataclass(frozen=True)
class AlertsListed:
    database: str
    summaries: list[AlertSummary]


def alerts_list(request: AlertsListRequest, world: World) -> AlertsListed:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        return AlertsListed(request.store.name, stored.summaries(engine, request.states))


@dataclass(frozen=True)
class AlertChanged:
    """The summary after the change (``show``: as stored), the fix checks made (resolve
    --as fixed) and the exit code."""

    database: str
    summary: AlertSummary
    checks: list[FixCheck]
    exit_code: int = 0


def _history(engine: Database, alert: Alert) -> History | None:
    return next((h for h in histories(engine, [alert.metric])
                 if h.series_key == alert.series_key), None)


def _fix_checks(engine: Database, summary: AlertSummary) -> list[FixCheck]:
    """Each alert's series after the change (module doc)."""
    checks = []
    for alert in summary.alerts:
        history = _history(engine, alert)
        revisions = [] if history is None else list(history.revisions)
        later = ([] if history is None or summary.first_after_sha not in revisions else
                 list(history.means[revisions.index(summary.first_after_sha) + 1:]))
        checks.append(fix_check(alert.metric, alert.before_mean, later))
    return checks


def _fix_text(summary: AlertSummary, check: FixCheck) -> str:
    if check.commits == 0:
        return (f"{check.metric}: no commit measured after {summary.first_after_sha[:12]} "
                "(run the commits after the fix first)")
    return (f"{check.metric}: the newest {check.commits} commit(s) after the change average "
            f"{check.latest_mean:.6g}, {check.change:+.1%} from {check.before_mean:.6g} "
            f"before it (margin ±{check.margin:.0%})")


def _resolve_fixed(engine: Database, request: AlertChangeRequest,
                   summary: AlertSummary) -> tuple[list[FixCheck], str | None]:
    """The checks and the note to record; refused (exit 2) when a series is not back."""
    stored.next_state(summary.id, summary.state, FIXED)  # refused before any reading
    checks = _fix_checks(engine, summary)
    off = [_fix_text(summary, c) for c in checks if not c.back]
    if off and not request.force:
        raise UsageError(f"alert {summary.id} is not back within the noise: "
                         + "; ".join(off) + " (--force resolves it anyway)")
    if not off:
        return checks, request.note
    return checks, "; ".join(filter(None, [request.note, "forced: " + "; ".join(off)]))


def alert_change(request: AlertChangeRequest, world: World) -> AlertChanged:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        summary = stored.summary(engine, request.alert)
        if request.action == "show":
            return AlertChanged(request.store.name, summary, [])
        checks, note = ((_resolve_fixed(engine, request, summary)) if request.action == FIXED
                        else ([], request.note))
        owner = {"owner": request.owner} if request.owner else {}
        changed = stored.change(engine, request.alert, request.action, by=request.owner,
                                note=note, **owner)
        return AlertChanged(request.store.name, changed, checks)


def _steps(engine: Database, summary: AlertSummary) -> dict[int, Step]:
    """Each alert's step with its CI, from the stored history around the range."""
    out = {}
    for alert in summary.alerts:
        history = _history(engine, alert)
        revisions = [] if history is None else list(history.revisions)
        if history is None or summary.first_after_sha not in revisions:
            continue
        before, after = regimes(list(history.means),
                                revisions.index(summary.first_after_sha),
                                alert.before_mean, alert.after_mean)
        out[alert.id] = step(before, after, alert.metric)
    return out


def _bisect_log(summary: AlertSummary) -> BisectLog | None:
    if summary.bisect_log is None or not Path(summary.bisect_log).is_file():
        return None
    return from_json(json.loads(Path(summary.bisect_log).read_text()), summary.bisect_log)


DIFF_DIR = "culprit-vs-parent"  # beside the bisection's log: the culprit's diffs
DIFF_REQUESTS = 2000  # requests per command of the culprit's instruction compare


def _differentials(summary: AlertSummary) -> list[Path]:
    """The instruction diff and differential flamegraphs of the culprit's compare, beside
    the bisection's log (``alerts report`` links them)."""
    if summary.bisect_log is None:
        return []
    directory = Path(summary.bisect_log).parent / DIFF_DIR
    return sorted([*directory.glob("instructions.md"), *directory.glob("**/flamediff/*.svg")])


def _counted_config(config: str, directory: Path) -> Path | None:
    """The bisection's config with requests instead of a duration (callgrind counts a
    fixed number of requests); None for the built-in one (already counted)."""
    if config == "built-in":
        return None
    objects = json.loads(Path(config).read_text())
    counted = [{**{k: v for k, v in o.items() if k != "duration"},
                "requests": DIFF_REQUESTS} for o in (objects if isinstance(objects, list)
                                                     else [objects])]
    path = directory / "config.json"
    write_json_atomic(path, counted)
    return path


def culprit_diffs(bisect: BisectRequest, log: BisectLog, culprit: str, parent: str,
                  world: World, hooks: CompareHooks, directory: Path) -> Compared:
    """`compare PARENT CULPRIT --measure instructions` (one round, the bisection's builds
    and config, ``DIFF_REQUESTS`` requests): the instruction diff (``instructions.md``) and
    the differential instruction flamegraphs, in ``directory`` (no database rows)."""
    directory.mkdir(parents=True, exist_ok=True)
    build = bisect.build
    flags = CompareFlags(
        refs=(parent, culprit), config=_counted_config(log.config, directory), runs=1,
        measure=Measure.INSTRUCTIONS, label="culprit-vs-parent",
        output=directory / "instructions.md",
        build=BuildFlags(repo=build.repo, make_args=" ".join(build.make_args),
                         jobs=build.jobs, cache=build.cache) if build else BuildFlags(),
        store=StoreFlags(results_dir=directory, no_db=True))
    return compare(compare_request(flags), world, hooks)


def _report(engine: Database, request: AlertReportRequest) -> AlertReport:
    summary = stored.summary(engine, request.alert)
    culprit = summary.culprit_sha or summary.first_after_sha
    parent = summary.parent_sha or summary.last_before_sha
    shas = [parent, culprit, summary.last_before_sha, summary.first_after_sha]
    envs = {sha: stored.environment(engine, sha) for sha in dict.fromkeys(shas)}
    diffs = _differentials(summary)
    table = next((p.read_text() for p in diffs if p.name == "instructions.md"), None)
    return AlertReport(summary, _steps(engine, summary), stored.commit_subjects(engine, shas),
                       envs, _bisect_log(summary), [p for p in diffs if p.suffix == ".svg"],
                       request.store.name, table)


@dataclass(frozen=True)
class AlertReported:
    """Where the report was written; the issue's address when gh filed it, else why not."""

    path: Path
    title: str
    issue: str | None = None
    not_filed: str | None = None


def gh_ready() -> str | None:
    """None when gh is on PATH and logged in; else why it cannot file."""
    if shutil.which("gh") is None:
        return "gh is not installed (not on PATH)"
    code, output = probe(["gh", "auth", "status"])
    if code != 0:
        return f"gh is not authenticated (gh auth status: {output.strip()[-200:]})"
    return None


def file_issue(title: str, body: Path, repo: str | None) -> str:
    """``gh issue create``; the issue's address gh prints (CommandError when it fails)."""
    argv = ["gh", "issue", "create", "--title", title, "--body-file", str(body)]
    done = run([*argv, *(["--repo", repo] if repo else [])], timeout=120).check()
    return done.stdout.strip()


def alert_report(request: AlertReportRequest, world: World) -> AlertReported:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        report = _report(engine, request)
    text = report_html(report) if request.html else report_markdown(report)
    write_text_atomic(request.output, text)
    title = report_title(report.summary)
    if not request.open_issue:
        return AlertReported(request.output, title)
    why_not = gh_ready()
    if why_not is not None:
        return AlertReported(request.output, title, not_filed=why_not)
    return AlertReported(request.output, title, file_issue(title, request.output,
                                                           request.repo))
