"""End to end in a real headless Chromium (Debian's, driven by playwright): start the server, open Inspect,
pick a sample trace, move the K slider, hover a segment, check that hostile markup renders as text, and
use two browser contexts at once; then what a newcomer met in the first hour: two traces with one question
keep apart, a Monte Carlo job shows its tokens and cancels within seconds, Enter does not submit a form and a
second identical request joins the first, a finished evaluation appears without a reload, and a reloaded Train
page keeps its Stop button. Screenshots go to test-output/."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from hostile import HOSTILE
from planted import STEP_RECORDS

from rredcot_viz.paths import PROJECT_ROOT
from rredcot_viz.store import Store
from rredcot_viz.traces.trace import Trace

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


WALK = [
    Trace(question="Anna has 3 apples and buys 4 more. How many apples?", cot="3 + 4 = 7.\nThe answer is 7.",
          reference_answer="7", trace_id="apples"),
    Trace(question="Ben has 5 pears and eats 2. How many pears are left?", cot="5 - 2 = 3.\nThe answer is 3.",
          reference_answer="3", trace_id="pears"),
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: the test command installs Debian's chromium (scripts/dev test)")
    folder = tmp_path_factory.mktemp("e2e")
    store_path = folder / "store.duckdb"
    (folder / "processbench").mkdir()
    (folder / "processbench" / "tiny_split.json").write_text(json.dumps(STEP_RECORDS))
    store = Store(store_path)
    store.put_traces([HOSTILE], "user")
    store.put_traces(WALK, "walk")
    store.close()
    port = free_port()
    env = {**os.environ, "RREDCOT_STORE": str(store_path), "HF_HUB_OFFLINE": "1", "RREDCOT_SHARED_DATA": str(folder)}
    env["RREDCOT_DATA_DIR"] = str(folder / "data")  # checkpoints of the Train test
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
    assert page.get_by_text("Checked against Monte Carlo on 16 of this model's own GSM8K traces").count() == 1
    recorded = segments(page)
    page.get_by_text("Re-score live with the loaded model", exact=True).click()
    page.wait_for_selector("text=does not order segments as Monte Carlo does", timeout=120000)
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
        page.wait_for_selector("text=does not order segments as Monte Carlo does", timeout=120000)
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


# ---------------------------------------------------------------------------------- the first hour, round 2
def body_text(page) -> str:
    return page.locator("body").inner_text()


def wait_text(page, pattern: str, timeout: float = 300) -> re.Match:
    """Until the page's text matches ``pattern`` (a regex); the match."""
    deadline, text = time.time() + timeout, ""
    while time.time() < deadline:
        text = body_text(page)
        found = re.search(pattern, text)
        if found:
            return found
        time.sleep(0.25)
    page.screenshot(path=str(OUTPUT / "failed.png"), full_page=True)
    raise AssertionError(f"no text matching {pattern!r} within {timeout} s; the page said: {text[:3000]}")


def wait_quiet(page, timeout: float = 300) -> None:
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout * 1000)
    time.sleep(0.5)


def open_page(browser, server: str, path: str):
    """A new tab on ``path``, after the app's entry page has run once in this server (the navigation that knows
    the page's URL is built by the entry script's first run)."""
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    page.goto(server)
    page.wait_for_selector("h1", timeout=300_000)
    page.goto(f"{server}/{path}")
    return page


def number(page, label: str, value: int) -> None:
    box = page.get_by_label(label, exact=True).first
    box.fill(str(value))
    box.press("Tab")
    wait_quiet(page)


def test_two_traces_with_one_question_stay_apart(server, browser):
    """Streamlit sends the chosen label back; equal labels made the page switch to another trace by itself."""
    question = "A shelf holds 4 rows of 6 books. How many books?"
    records = [
        {"question": question, "cot": "4 rows of 6 make 4 * 6 = 24.\nThe answer is \\boxed{24}.",
         "reference_answer": "24"},
        {"question": question, "cot": "Add the rows: 6 + 6 + 6 + 6 = 24.\nThe answer is \\boxed{24}.",
         "reference_answer": "24"},
    ]  # fmt: skip
    upload = OUTPUT / "one_question.jsonl"
    OUTPUT.mkdir(exist_ok=True)
    upload.write_text("".join(json.dumps(r) + "\n" for r in records))
    page = browser.new_page(viewport={"width": 1400, "height": 1800})
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Upload", exact=True).click()
    page.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(str(upload))
    wait_text(page, r"one_question.jsonl: 2 traces")
    wait_idle(page, live=True)
    first = page.locator(".rc-trace").first.inner_text()
    wanted, other = ("6 + 6 + 6 + 6", "4 * 6 = 24") if "4 * 6 = 24" in first else ("4 * 6 = 24", "6 + 6 + 6 + 6")
    page.get_by_label("Trace", exact=True).click()
    labels = page.get_by_role("option").all_inner_texts()
    assert len(labels) == len(set(labels)) == 2 and all(" · #" in label for label in labels)
    chosen = page.get_by_role("option", selected=True).inner_text()
    page.get_by_role("option").nth(next(i for i, label in enumerate(labels) if label != chosen)).click()
    page.wait_for_function(
        f"() => (document.querySelector('.rc-trace') || {{innerText: ''}}).innerText.includes({wanted!r})",
        timeout=300_000,
    )
    wait_idle(page, live=True)
    for _ in range(3):  # reruns (a view switch) never bring the other trace back
        page.get_by_text("Rendered (LaTeX)", exact=True).click()
        wait_quiet(page)
        assert wanted in body_text(page) and other not in body_text(page)
        page.get_by_text("Heatmap", exact=True).click()
        wait_idle(page)
        shown = page.locator(".rc-trace").first.inner_text()
        assert wanted in shown and other not in shown
    page.close()


def test_monte_carlo_shows_its_tokens_joins_a_second_request_and_cancels_within_seconds(server, browser):
    page = open_page(browser, server, "compare")
    wait_text(page, r"Monte Carlo rollouts")
    wait_quiet(page)
    methods = page.get_by_role("combobox", name="Methods")
    methods.click()
    methods.type("mc")
    methods.press("Enter")
    methods.press("Escape")
    wait_quiet(page)
    number(page, "Rollouts", 2)
    number(page, "Max new tokens", 300)  # long enough to still run when cancelled
    page.get_by_role("button", name="Run Monte Carlo").click()
    wait_text(page, r"Monte Carlo on “")
    page.get_by_role("button", name="Run Monte Carlo").click()  # the same settings again: joins the job
    wait_text(page, r"The same job was already running")
    tokens = wait_text(page, r"sampling rollouts \d+/\d+ · \d+ s · ([\d,]+) tokens", timeout=600)
    assert int(tokens.group(1).replace(",", "")) > 0  # tokens show while the first state's call runs
    wait_text(page, r"Jobs \(1 running\)")  # the sidebar counts it (and only once)
    page.screenshot(path=str(OUTPUT / "mc-running.png"), full_page=True)
    page.get_by_role("button", name="Cancel").first.click()
    asked = time.time()
    wait_text(page, r"Cancelled; the rollouts drawn so far are kept\.", timeout=60)
    assert time.time() - asked < 15  # lands within a decode step, shown at the next 1 s redraw
    wait_text(page, r"Jobs \(0 running\)", timeout=30)
    page.close()


def test_a_finished_monte_carlo_run_says_how_far_to_trust_the_comparison(server, browser):
    """Each method's agreement with MC on this trace beside MC's agreement with itself, in words."""
    page = open_page(browser, server, "compare")
    wait_text(page, r"Monte Carlo rollouts")
    wait_quiet(page)
    methods = page.get_by_role("combobox", name="Methods")
    methods.click()
    methods.type("mc")
    methods.press("Enter")
    methods.press("Escape")
    wait_quiet(page)
    number(page, "Rollouts", 4)
    number(page, "Max new tokens", 24)
    page.get_by_role("button", name="Run Monte Carlo").click()
    wait_text(page, r"How far to trust this comparison", timeout=600)
    # 4 rollouts of 24 tokens mostly reach no answer, so MC may rank no two segments apart: the panel says so
    method_line = wait_text(
        page,
        r"rredcot orders (\d+(?:\.5)?) of (\d+) segment pairs as Monte Carlo does"
        r"|rredcot: Monte Carlo ranks no two segments apart on this trace, so nothing to check",
    )
    if method_line.group(1) is not None:
        assert float(method_line.group(1)) <= int(method_line.group(2))
    wait_text(page, r"Monte Carlo agrees with itself on \d+% of segment pairs|agreement with itself is unknown")
    page.screenshot(path=str(OUTPUT / "compare-trust.png"), full_page=True)
    page.close()


def test_enter_does_not_submit_and_a_finished_evaluation_appears_without_a_reload(server, browser):
    page = open_page(browser, server, "diagnose")
    wait_text(page, r"Reset and resample", timeout=600)
    for name in ("loo", "step_verifier"):  # the cheap detectors are enough here
        page.get_by_role("button", name=f"Remove {name}").first.click()
        wait_quiet(page, timeout=600)
    wait_text(page, r"ProcessBench evaluation", timeout=600)
    assert "No evaluation stored yet" in body_text(page)
    page.get_by_text("Start an evaluation", exact=True).click()
    for name in ("value_drop", "step_verifier"):
        page.get_by_role("button", name=f"Remove {name}").last.click()
        wait_quiet(page)
    sample = page.get_by_label("Sample", exact=True)
    sample.fill("2")
    sample.press("Enter")  # Enter in a form field must not start a job
    time.sleep(2)
    wait_quiet(page)
    assert "Capability check" not in body_text(page) and "Evaluation of" not in body_text(page)
    submit = page.get_by_role("button", name="Evaluate in the background")
    submit.click()
    wait_text(page, r"Capability check")
    wait_quiet(page)
    submit.click()  # asked twice: one job
    wait_text(page, r"The same job was already running")
    wait_text(page, r"Evaluation stored\.", timeout=600)
    wait_text(page, r"F1 is n/a when the sample", timeout=60)  # the run list learnt it, with no reload
    assert "No evaluation stored yet" not in body_text(page)
    assert "tiny_split (balanced 2, seed 0)" in page.content()  # the new run is the one shown
    page.close()


def test_a_reloaded_train_page_keeps_its_stop_button_and_progress(server, browser):
    page = open_page(browser, server, "train")
    wait_text(page, r"Start run", timeout=300)
    wait_quiet(page)
    for label, value in (("Steps", 3), ("Prompts per step", 1), ("Group size", 2), ("Max new tokens", 24)):
        page.get_by_label(label, exact=True).first.fill(str(value))
    page.get_by_label("Eval every", exact=True).first.fill("0")
    page.get_by_role("button", name="Start run").click()
    wait_text(page, r"run train-\S+: ", timeout=120)
    page.reload()
    line = wait_text(page, r"(rredcot|grpo) run (train-\S+): [^\n]*· \d+ s", timeout=120)
    stop = page.get_by_role("button", name="Stop")
    stop.wait_for(timeout=30_000)  # the page found its running job again
    page.screenshot(path=str(OUTPUT / "train-reloaded.png"), full_page=True)
    stop.click()
    wait_text(page, r"Stopped (after step \d+; resume it from that checkpoint below|before its first step finished: "
              r"resuming it below starts again from step 0)", timeout=300)  # fmt: skip
    wait_text(page, r"Resume a stopped run from its last checkpoint", timeout=60)  # a stopped run keeps its state
    assert line.group(2) in page.content()
    page.close()


def sidebar_choices(page) -> dict[str, str]:
    """What the sidebar shows: each select box's value and the chosen trace source."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('[data-testid=stSidebar] input')]
            .filter(e => e.getAttribute('role') === 'combobox' || (e.type === 'radio' && e.checked))
            .map(e => e.type === 'radio' ? ['source', e.closest('label').innerText.trim()]
                                         : [e.getAttribute('aria-label'), e.value]))"""
    )


def test_a_stored_trace_stays_chosen_across_pages(server, browser):
    """Inspect -> Stored -> a collection -> its second trace, then Compare and back: the sidebar, the question
    shown and the URL all name that trace (the sidebar went back to a sample while the URL still named it)."""
    pears = WALK[1]
    page = browser.new_page(viewport={"width": 1400, "height": 1800})
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Stored", exact=True).click()
    wait_quiet(page)
    choose(page, "Collection", "walk (2)")
    wait_quiet(page)
    choose(page, "Trace", "pears · correct")
    wait_text(page, "How many pears are left")
    wait_quiet(page)
    for title in ("Compare", "Inspect", "Compare"):
        page.get_by_role("link", name=title).click()
        wait_text(page, f"(?m)^{title}$")
        wait_quiet(page)
        time.sleep(2)  # a second run (the one that reset the sidebar) would have started by now
        wait_quiet(page)
        shown = sidebar_choices(page)
        assert shown["source"] == "Stored" and shown["Collection"] == "walk (2)", (title, shown)
        assert shown["Trace"] == "pears · correct", (title, shown)
        assert "How many pears are left" in body_text(page) and "How many apples" not in body_text(page)
        query = dict(p.split("=", 1) for p in page.url.partition("?")[2].split("&") if "=" in p)
        assert pears.content_hash.startswith(query["trace"]), (title, page.url)
        assert query["source"] == "stored" and query["collection"] == "walk", (title, page.url)
    page.close()


# ---------------------------------------------------------------------------------- the first hour, round 3
EXCEPTION_NAMES = re.compile(r"\b(AttributeError|KeyError|TypeError|ValueError|IndexError|Traceback)\b")


def test_a_pasted_trace_without_a_reference_gets_a_heatmap_and_its_report_keeps_its_colours(server, browser):
    """Paste with the reference empty stopped at "AttributeError: 'NoneType' object has no attribute 'strip'";
    the report downloaded from the app drew every chart black (colours #000001, #000002, ...)."""
    page = browser.new_page(viewport={"width": 1400, "height": 2200}, accept_downloads=True)
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Paste", exact=True).click()
    wait_quiet(page)
    if not page.get_by_label("Question", exact=True).is_visible():  # folded once the store has a pasted trace
        page.get_by_text("Paste a trace", exact=True).click()
    page.get_by_label("Question", exact=True).fill("Tom has 3 boxes of 4 pens and gives away 1 pen. How many pens?")
    page.get_by_label("Reasoning and final answer", exact=True).fill(
        "3 boxes of 4 pens make 12 pens.\nHe gives away 1, so 12 - 1 = 11.\nThe answer is 11."
    )
    page.get_by_role("button", name="Add trace").click()
    wait_text(page, r"credit toward its own final answer", timeout=300)
    wait_idle(page, live=True)
    assert segments(page) >= 2 and not EXCEPTION_NAMES.search(body_text(page))
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name="Download a shareable report (HTML)").click()
    report = Path(download.value.path()).read_text()
    colours = set(re.findall(r'"(?:color|line_color|marker_color)"\s*:\s*"(#[0-9a-fA-F]{6})"', report))
    colours |= set(re.findall(r'"color":\s*"(#[0-9a-fA-F]{6})"', report))
    assert not any(c.lower().startswith("#00000") for c in colours), colours
    assert len(colours) >= 2, colours  # the sigma and GRPO bars, the curves: told apart
    page.close()


def test_an_rl_run_import_opens_on_it_and_scoring_it_says_what_cannot_run(server, browser, tmp_path):
    """A second import in the same tab kept showing the first run; scoring an imported run with an estimator
    that cannot run on it "succeeded" with every row an error."""
    runs = []
    for name, answer in (("first_run", "4"), ("second_run", "6")):
        folder = tmp_path / name
        folder.mkdir()
        lines = [{"input": f"user\nWhat is {answer} + 0?\nassistant\n", "output": f"{answer} + 0 = {answer}. "
                  f"The answer is {answer}.", "score": float(i % 2), "step": 1} for i in range(2)]  # fmt: skip
        (folder / "1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        runs.append(folder)
    page, urls = open_page(browser, server, "dataset"), []
    wait_text(page, r"Import a dataset", timeout=300)
    wait_quiet(page)
    for folder in runs:
        box = page.get_by_label("or a file or folder on this machine", exact=True)
        if not box.is_visible():  # folded once the store has collections
            page.get_by_text("Import a dataset", exact=True).click()
        box.fill(str(folder))
        box.press("Tab")
        wait_quiet(page)
        page.get_by_role("button", name="Import").click()
        wait_text(page, rf"{folder.name}: 2 traces imported as format verl_rollouts")
        wait_quiet(page)
        shown = page.get_by_role("combobox", name="Run").first.input_value()
        assert shown.startswith(folder.name), (folder.name, shown)
        page.wait_for_function("() => location.search.includes('run=')", timeout=30_000)
        urls.append(page.url)
    assert urls[0] != urls[1]  # the link names the run shown (it stayed on the first)
    page.get_by_text("Score rollouts with RREDCoT", exact=True).click()
    popover = page.locator("[data-testid='stExpander']").filter(has_text="Score rollouts with RREDCoT")
    popover.get_by_text("Capability check:").wait_for(timeout=60_000)
    line = popover.inner_text()  # it opens on an estimator that runs on the run's rollouts (answer_only ran on 0)
    assert re.search(r"Capability check: \w+: runs on 2 of 2 records", line), line
    for _ in range(3):  # a rerun that lands on the click closes the menu again: open it until it shows
        wait_quiet(page)
        popover.get_by_role("combobox", name="Estimator").click()
        option = page.get_by_role("option", name="rredcot", exact=True).first
        try:
            option.wait_for(timeout=10_000)
            break
        except Exception:  # playwright's TimeoutError
            page.keyboard.press("Escape")
    option.click()
    wait_quiet(page)
    if not popover.get_by_role("combobox", name="Estimator").is_visible():  # a rerun folded it
        page.get_by_text("Score rollouts with RREDCoT", exact=True).click()
    popover.get_by_text("cannot run on any of the").wait_for(timeout=60_000)
    assert re.search(r"estimator 'rredcot' cannot run on any of the 2 traces: [^\n]*lack", popover.inner_text())
    assert popover.get_by_role("button", name=re.compile(r"^Score \d+ distinct rollouts")).is_disabled()
    assert not EXCEPTION_NAMES.search(body_text(page))
    page.close()


def test_the_train_estimate_follows_the_settings_before_start(server, browser):
    """The estimate under the form showed the defaults until Start was pressed."""
    page = open_page(browser, server, "train")
    before = wait_text(page, r"Time here: [^\n]*", timeout=300).group(0)
    assert "37 steps" not in before
    number(page, "Steps", 37)
    after = wait_text(page, r"Time here: [^\n]*37 steps × [^\n]*", timeout=60).group(0)
    assert after != before and not EXCEPTION_NAMES.search(body_text(page))
    assert page.get_by_role("button", name="Stop").count() == 0  # nothing started
    page.close()
