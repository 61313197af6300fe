"""`kvperf alerts list|show|ack|assign|resolve|report`: the change points `kvperf regressions
--store` recorded, one alert per commit range, moved along their lifecycle
(pipeline/commands/alerts.py) and reported ready to file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kvperf.cli._common import Cli
from kvperf.cli._paths import local_path
from kvperf.cli._store import add_store_options, store_flags
from kvperf.pipeline.commands.alerts import (
    RESOLUTIONS,
    STATES,
    AlertChanged,
    alert_change,
    alert_change_request,
    alert_report,
    alert_report_request,
    alerts_list,
    alerts_list_request,
)
from kvperf.report.alerts import alerts_table, summaries_table, summary_json, summary_lines

LIFECYCLE = ("Lifecycle: new → acknowledged → culprit (a bisection over the range named the "
             "commit) → fixed / invalid / expected.")


def _sub(sub: Any, name: str, help: str, handler: Any, alert: bool = True
         ) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help)
    if alert:
        p.add_argument("alert", type=int, metavar="ID", help="the alert (kvperf alerts list)")
    add_store_options(p)
    p.set_defaults(handler=handler, action_name=name, owner=None, note=None, force=False,
                   json=False)
    return p


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "alerts", help="change points with a lifecycle: list, triage, resolve, report",
        description="Each change point `kvperf regressions --store` finds becomes an alert; "
                    "the alerts of one commit range are one summary, the ID these commands "
                    "take. " + LIFECYCLE)
    sub = p.add_subparsers(dest="alerts_command", metavar="SUBCOMMAND", required=True)
    ls = _sub(sub, "list", "the alerts, newest first", handle_list, alert=False)
    ls.add_argument("--state", action="append", default=[], choices=STATES,
                    help="only alerts in this state (repeatable)")
    ls.add_argument("--json", action="store_true", help="print them as JSON")
    show = _sub(sub, "show", "one alert: its state, notes and the series that moved",
                handle_change)
    show.add_argument("--json", action="store_true", help="print it as JSON")
    ack = _sub(sub, "ack", "acknowledge a new alert", handle_change)
    ack.add_argument("--owner", help="who looks into it")
    assign = _sub(sub, "assign", "set an open alert's owner", handle_change)
    assign.add_argument("owner", metavar="OWNER", help="who looks into it")
    resolve = _sub(sub, "resolve", "close an open alert as fixed, invalid or expected "
                                   "(fixed: the commits after the change must be back "
                                   "within the metric's minimum effect)", handle_change)
    resolve.add_argument("--as", dest="resolution", required=True, choices=RESOLUTIONS,
                         help="how it ends")
    resolve.add_argument("--force", action="store_true",
                         help="--as fixed though the later commits are not back (the "
                              "numbers are kept in the note)")
    for q in (ack, assign, resolve):
        q.add_argument("--note", help="a note kept with the alert, stamped with the time")
    _add_report(sub)


def _add_report(sub: Any) -> None:
    rep = _sub(sub, "report", "write the alert's ready-to-file report (markdown)",
               handle_report)
    rep.add_argument("--html", action="store_true", help="HTML instead of markdown")
    rep.add_argument("--output", type=local_path, metavar="PATH",
                     help="where to write it (default: alert-ID.md or .html)")
    rep.add_argument("--open-issue", action="store_true",
                     help="file it with `gh issue create` when gh is installed and logged "
                          "in (kvperf stores no token), else only write the file")
    rep.add_argument("--issue-repo", metavar="OWNER/NAME",
                     help="the repository gh files it in (default: gh's own choice)")


def handle_list(args: argparse.Namespace, cli: Cli) -> int:
    found = alerts_list(alerts_list_request(states=tuple(args.state), json=args.json,
                                            store=store_flags(args)), cli.world)
    if args.json:
        sys.stdout.write(json.dumps([summary_json(s) for s in found.summaries],
                                    indent=2) + "\n")
        return 0
    cli.out.print(summaries_table(found.summaries) if found.summaries
                  else f"no alerts in {found.database}", highlight=False)
    return 0


def _shown(cli: Cli, done: AlertChanged, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(summary_json(done.summary), indent=2) + "\n")
        return
    for line in summary_lines(done.summary):
        cli.out.print(line, highlight=False, markup=False, soft_wrap=True)
    cli.out.print(alerts_table(done.summary))
    for check in done.checks:
        cli.out.print(f"fixed: {check.metric} back: the newest {check.commits} commit(s) "
                      f"{check.change:+.1%} from before the change (margin "
                      f"±{check.margin:.0%})", highlight=False)


def handle_change(args: argparse.Namespace, cli: Cli) -> int:
    action = args.resolution if args.action_name == "resolve" else args.action_name
    asked = alert_change_request(
        alert=args.alert, action=action, owner=args.owner, note=args.note, force=args.force,
        json=args.json, store=store_flags(args))
    done = alert_change(asked, cli.world)
    _shown(cli, done, asked.json)
    return done.exit_code


def handle_report(args: argparse.Namespace, cli: Cli) -> int:
    asked = alert_report_request(alert=args.alert, output=args.output, html=args.html,
                                 open_issue=args.open_issue, repo=args.issue_repo,
                                 store=store_flags(args))
    done = alert_report(asked, cli.world)
    cli.out.print(f"report: {done.path}", highlight=False)
    if done.issue is not None:
        cli.out.print(f"filed: {done.issue}", highlight=False)
    elif done.not_filed is not None:
        cli.err.print(f"not filed: {done.not_filed}; the report is in {done.path}",
                      highlight=False)
    return 0
