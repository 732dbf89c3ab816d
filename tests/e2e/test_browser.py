"""End to end in a real headless Chromium (Debian's, driven by playwright): start the server, open Inspect,
pick a sample trace, move the K slider, hover a segment, check that hostile markup renders as text, and
use two browser contexts at once. Screenshots go to test-output/."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from hostile import HOSTILE

from rredcot_viz.paths import PROJECT_ROOT
from rredcot_viz.store import Store

pytestmark = [pytest.mark.integration, pytest.mark.browser]
CHROMIUM = "/usr/bin/chromium"
OUTPUT = PROJECT_ROOT / "test-output"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: the test command installs Debian's chromium (scripts/dev test)")
    store_path = tmp_path_factory.mktemp("e2e") / "store.duckdb"
    store = Store(store_path)
    store.put_traces([HOSTILE], "user")
    store.close()
    port = free_port()
    env = {**os.environ, "RREDCOT_STORE": str(store_path), "HF_HUB_OFFLINE": "1"}
    log_path = tmp_path_factory.mktemp("log") / "streamlit.log"
    log = log_path.open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(PROJECT_ROOT / "app.py"),
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("the Streamlit server did not start within 90 s")
    yield url
    process.terminate()
    process.wait(timeout=20)
    log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield instance
        instance.close()


def segments(page) -> int:
    return page.locator(".rc-trace").first.locator(".rc-seg").count()  # the main heatmap, not a later one


def wait_idle(page, timeout: float = 180, live: bool = False) -> None:
    """Wait until the app has finished its rerun (no running indicator) and the heatmap is there; ``live``: the
    live analysis's own result (its caption names its cost; a first look or the recording's caption does not)."""
    if live:
        page.wait_for_selector(
            "text=/K = \\d+ segments · (\\d+ model call|no model calls \\(from)/", timeout=timeout * 1000
        )
    page.wait_for_selector(".rc-trace .rc-seg", timeout=timeout * 1000)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout * 1000)
    time.sleep(0.5)


def choose(page, label: str, option: str) -> None:
    page.get_by_label(label, exact=True).click()
    page.get_by_role("option", name=option).first.click()


def test_inspect_in_a_real_browser(server, browser):
    OUTPUT.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1800})
    page.goto(server)
    wait_idle(page)
    assert page.locator("h1", has_text="Inspect").count() == 1
    choose(page, "Trace", "Filling a tank with a drain open · correct")
    page.wait_for_selector("text=A water tank", timeout=120000)
    wait_idle(page)
    assert page.get_by_text("These scores were recorded with Qwen2.5-Coder-1.5B").count() == 1
    recorded = segments(page)
    page.get_by_text("Re-score live with the loaded model", exact=True).click()
    page.wait_for_selector("text=cannot do arithmetic", timeout=120000)
    wait_idle(page, live=True)
    before = segments(page)
    assert recorded >= 2 and before >= 2
    slider = page.get_by_role("slider").first
    slider.focus()
    slider.press("Home")  # K = 2
    page.wait_for_function(
        "() => document.querySelectorAll('.rc-trace')[0]?.querySelectorAll('.rc-seg').length === 2", timeout=60000
    )
    assert before > 2 == segments(page)
    first = page.locator(".rc-trace .rc-seg").first
    first.hover()
    tip = first.locator(".rc-tip")
    assert tip.is_visible() and "sigma =" in tip.inner_text() and "R_hat =" in tip.inner_text()
    page.screenshot(path=str(OUTPUT / "inspect.png"), full_page=True)

    page.get_by_text("Stored", exact=True).click()
    wait_idle(page)
    choose(page, "Collection", "user (1)")
    page.wait_for_function(
        "() => (document.querySelector('.rc-trace') || {innerText: ''}).innerText.includes('onerror')", timeout=120000
    )
    trace = page.locator(".rc-trace").first
    text = trace.inner_text()
    assert '<script>alert("x")</script>' in text and "<img src=x onerror=alert(1)>" in text
    assert trace.locator("script").count() == 0 and trace.locator("img").count() == 0
    assert trace.locator("a[href^='javascript']").count() == 0
    page.screenshot(path=str(OUTPUT / "inspect-hostile.png"), full_page=True)
    page.close()


def test_two_browser_contexts_at_once(server, browser):
    pages = [browser.new_context().new_page() for _ in range(2)]
    for page in pages:
        page.goto(server)
    for page in pages:  # both analyse live at once (the recorded view has no K slider)
        wait_idle(page)
        page.get_by_text("Re-score live with the loaded model", exact=True).click()
    for page in pages:
        page.wait_for_selector("text=cannot do arithmetic", timeout=120000)
        wait_idle(page, live=True)
        slider = page.get_by_role("slider").first
        slider.focus()
        slider.press("End")
    for index, page in enumerate(pages):
        wait_idle(page, live=True)
        assert page.locator("[data-testid='stException']").count() == 0
        assert "lock" not in page.locator("[data-testid='stAlert']").all_inner_texts().__str__().lower()
        page.screenshot(path=str(OUTPUT / f"context-{index}.png"))
        page.context.close()
