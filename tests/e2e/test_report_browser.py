"""The shared report in a real headless Chromium with the network blocked: it renders from the file alone (the
heatmap, a hover value, both Plotly figures), asks for nothing beyond itself, and the hostile trace renders as
text (no script runs, no dialog opens). Screenshot in test-output/."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import HOSTILE

from rredcot_viz.engine import Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.figures.report import analysis_report
from rredcot_viz.paths import PROJECT_ROOT
from rredcot_viz.segmenters import segmenters
from rredcot_viz.workflows.report import write_report

pytestmark = pytest.mark.browser
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def test_the_report_opens_offline_and_escapes_the_trace(tiny, tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: the test command installs Debian's chromium (scripts/dev test)")
    from playwright.sync_api import sync_playwright

    result = Analyzer(tiny).analyze(HOSTILE, segmenters.get("line")(), estimators.get("rredcot")())
    report = write_report(analysis_report(result, tiny.info(), {"segmenter": "line"}), tmp_path / "report.html")
    requests, dialogs, errors = [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(offline=True, viewport={"width": 1300, "height": 1600})

        def block(route):  # only the file itself may load; anything else is recorded and refused
            requests.append(route.request.url)
            route.continue_() if route.request.url == report.as_uri() else route.abort()

        context.route("**/*", block)
        page = context.new_page()
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(report.as_uri())
        page.wait_for_selector(".rc-plot .main-svg", timeout=60_000)
        assert page.locator(".rc-plot .js-plotly-plot").count() == 2  # value curves and credit bars, drawn
        segments = page.locator(".rc-trace .rc-seg")
        assert segments.count() == result.k
        segments.nth(1).hover()
        tip = segments.nth(1).locator(".rc-tip")
        assert tip.is_visible() and f"sigma = {result.sigma[1]:+.4f}" in tip.inner_text()
        trace = page.locator(".rc-trace")
        assert (
            '<script>alert("x")</script>' in trace.inner_text() and "<img src=x onerror=alert(1)>" in trace.inner_text()
        )
        assert trace.locator("script, img, a").count() == 0
        assert page.locator("h2", has_text="Model").count() == 1 and tiny.fingerprint in page.content()
        (PROJECT_ROOT / "test-output").mkdir(exist_ok=True)
        page.screenshot(path=str(PROJECT_ROOT / "test-output" / "report.png"), full_page=True)
        browser.close()
    assert requests == [report.as_uri()] and dialogs == [] and errors == []
