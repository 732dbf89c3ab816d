"""A newcomer's first hour, driven in a real headless Chromium: open the app, look at the default sample,
paste a trace without a reference solution, upload a file with natural field names, then open every sample
once with live scoring (cold cache: a fresh store); then the jobs: a Monte Carlo run asked for twice, watched
and cancelled, and a ProcessBench evaluation whose result must appear on the page without a reload.

    .venv/bin/python bench/first_hour.py          # embedded SmolLM2-135M, 2 CPU cores, about 10 minutes
    .venv/bin/python bench/first_hour.py --samples 3   # only 3 samples live (a loaded machine), then the jobs
    .venv/bin/python bench/first_hour.py --samples 1 --no-jobs   # the smoke test's path: no job flows

Last line: ``tracebacks= errors_on_defaults= recorded_scores= paste_without_solution_ok= natural_fields_ok=
worst_first_heatmap_s= worst_trace= median_first_heatmap_s= worst_full_analysis_s= first_looks= samples=
absolute_legend= duplicate_job_joined= cancel_latency_s= refresh_after_finish= paste_without_reference_ok=
report_distinct_colours= failed_job_reported= stale_run_view=``. The first heatmap on a cold
trace is the R-hat first look; the full analysis (R-hat + v-hat) replaces it. ``absolute_legend``: the default
heatmap's legend states the absolute scale; ``duplicate_job_joined``: a second identical Monte Carlo request
joined the first (one job running); ``cancel_latency_s``: from the Cancel click, while the job samples, to the
page saying it was cancelled (its redraw runs every second); ``refresh_after_finish``: the finished evaluation
is listed on the page that started it, with no reload. Round 3: ``paste_without_reference_ok``: a pasted trace
with neither a reference answer nor a label gets a heatmap of credit toward its own answer, with no error;
``report_distinct_colours``: the report downloaded from Inspect draws its series in distinct colours (not the
placeholder #000001, #000002, ...); ``failed_job_reported``: scoring an imported RL run with an estimator that
cannot run on it is refused before any job, saying what the rollouts lack, its button disabled; ``stale_run_view``:
how many of two imports in one tab left the run view on the previous run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

from rredcot_viz.paths import PROJECT_ROOT

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
PREVIEWS: list[bool] = []  # whether each first heatmap was the R-hat first look
NATURAL = {
    "question": "A shelf holds 4 rows of 6 books. How many books are on the shelf?",
    "response": "There are 4 rows.\nEach row has 6 books, so 4 * 6 = 24.\nThe answer is 24.",
    "answer": "24",
    "solution": "4 rows of 6 books make 4 * 6 = 24 books.",
}


STEP_LABELLED = [  # a two-record ProcessBench-style split: one first error at step 1, one correct
    {"id": "r1", "problem": "What is 2 + 2?", "steps": ["2 + 2 = 5.", "So 5."], "final_answer_correct": False,
     "label": 0},
    {"id": "r2", "problem": "What is 3 + 3?", "steps": ["3 + 3 = 6.", "So 6."], "final_answer_correct": True,
     "label": -1},
]  # fmt: skip


def start_server(store: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    shared = store.parent / "shared"
    (shared / "processbench").mkdir(parents=True, exist_ok=True)
    (shared / "processbench" / "tiny_split.json").write_text(json.dumps(STEP_LABELLED))
    env = {**os.environ, "RREDCOT_STORE": str(store), "HF_HUB_OFFLINE": "1", "RREDCOT_SHARED_DATA": str(shared)}
    command = [sys.executable, "-m", "streamlit", "run", str(PROJECT_ROOT / "app.py"), "--server.port", str(port)]
    command += ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
    process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(180):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return process, url
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise SystemExit("the Streamlit server did not start within 90 s")


def wait_idle(page, timeout_s: float = 600) -> None:
    """Until the rerun has finished (no running indicator) and a heatmap is on the page."""
    page.wait_for_selector(".rc-trace .rc-seg", timeout=timeout_s * 1000)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_s * 1000
    )
    time.sleep(0.3)


def rerun(page, action) -> tuple[float, float]:
    """Seconds from ``action`` until a new heatmap replaces the current one (the R-hat first look, on a cold
    trace), and until the rerun has finished (the full analysis)."""
    page.evaluate("() => document.querySelectorAll('.rc-trace').forEach(e => e.dataset.stale = '1')")
    started = time.perf_counter()
    action()
    page.wait_for_selector(".rc-trace:not([data-stale]) .rc-seg", timeout=600_000)
    first = time.perf_counter() - started
    PREVIEWS.append(page.get_by_text("First look: R̂ alone").count() > 0)
    page.wait_for_function(  # the full analysis has replaced the first look and its caption is written
        "() => !document.body.innerText.includes('First look: R̂ alone') && /K = \\d+ segments ·/.test("
        "document.body.innerText)",
        timeout=600_000,
    )
    wait_idle(page)
    return first, time.perf_counter() - started


def count(page, selector: str) -> int:
    return page.locator(selector).count()


def tracebacks(page) -> int:
    return count(page, "[data-testid='stException']")


def errors(page) -> int:
    return count(page, "[data-testid='stAlertContentError']")


def only(page, label: str):
    """The one menu labelled ``label``, once a rerun has replaced any stale copy (Streamlit shows the previous
    run's elements until the new run has drawn them, so under load two can be on the page for a moment)."""
    page.wait_for_function(
        f"() => document.querySelectorAll('input[aria-label={json.dumps(label)}]').length === 1", timeout=60000
    )
    return page.get_by_label(label, exact=True)


def choose(page, label: str, option: str) -> None:
    only(page, label).click()
    page.get_by_role("option", name=option, exact=True).first.click()


def sample_labels(page) -> tuple[list[str], str]:
    """Every option of the Trace menu, and the one now selected."""
    only(page, "Trace").click()
    labels = page.get_by_role("option").all_inner_texts()
    selected = page.get_by_role("option", selected=True).first.inner_text()
    page.keyboard.press("Escape")
    return labels, selected


def body(page) -> str:
    return page.locator("body").inner_text()


def wait_text(page, pattern: str, timeout_s: float = 600) -> re.Match | None:
    """Until the page's text matches ``pattern``; None when it never does."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        found = re.search(pattern, body(page))
        if found:
            return found
        time.sleep(0.1)
    return None


def quiet(page, timeout_s: float = 600) -> None:
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_s * 1000
    )
    time.sleep(0.3)


def monte_carlo(page, url: str) -> tuple[int, float]:
    """Ask for Monte Carlo twice on Compare, watch its tokens, cancel it: (joined 1/0, cancel latency s)."""
    page.goto(f"{url}/compare")
    wait_text(page, r"Monte Carlo rollouts")
    quiet(page)
    methods = page.get_by_role("combobox", name="Methods")
    methods.click()
    methods.type("mc")
    methods.press("Enter")
    methods.press("Escape")
    quiet(page)
    for label, value in (("Rollouts", 4), ("Max new tokens", 400)):
        box = page.get_by_label(label, exact=True).first
        box.fill(str(value))
        box.press("Tab")
        quiet(page)
    run = page.get_by_role("button", name="Run Monte Carlo")
    run.click()
    wait_text(page, r"Monte Carlo on “")
    run.click()
    joined = wait_text(page, r"The same job was already running", 60) is not None
    joined = joined and wait_text(page, r"Jobs \(1 running\)", 60) is not None
    wait_text(page, r"sampling rollouts \d+/\d+ · \d+ s · [1-9][\d,]* tokens")
    page.get_by_role("button", name="Cancel").first.click()
    asked = time.perf_counter()
    wait_text(page, r"Cancelled; the rollouts drawn so far are kept\.", 120)
    return int(joined), time.perf_counter() - asked


def evaluation_appears(page, url: str) -> int:
    """Start a ProcessBench evaluation on Diagnose; 1 if its run is listed once it is stored, with no reload."""
    page.goto(f"{url}/diagnose")
    wait_text(page, r"Reset and resample", 900)
    for name in ("loo", "step_verifier"):
        page.get_by_role("button", name=f"Remove {name}").first.click()
        quiet(page)
    wait_text(page, r"No evaluation stored yet")
    page.get_by_text("Start an evaluation", exact=True).click()
    for name in ("value_drop", "step_verifier"):
        page.get_by_role("button", name=f"Remove {name}").last.click()
        quiet(page)
    page.get_by_role("button", name="Evaluate in the background").click()
    if wait_text(page, r"Evaluation stored\.", 900) is None:
        return 0
    listed = wait_text(page, r"F1 is n/a when the sample", 30) is not None and "tiny_split (" in page.content()
    return int(listed and "No evaluation stored yet" not in body(page))


EXCEPTION_NAMES = re.compile(r"\b(AttributeError|KeyError|TypeError|ValueError|IndexError|Traceback)\b")


def paste_and_report(browser, url: str) -> tuple[int, int]:
    """Paste a trace with no reference answer and no label: (1 if it gets a heatmap and no error, 1 if the report
    downloaded from Inspect draws its series in two or more real colours)."""
    page = browser.new_page(viewport={"width": 1400, "height": 2200}, accept_downloads=True)
    page.goto(url)
    wait_idle(page)
    page.get_by_text("Paste", exact=True).click()
    quiet(page)
    if not page.get_by_label("Question", exact=True).is_visible():  # folded once a trace was pasted
        page.get_by_text("Paste a trace", exact=True).click()
    page.get_by_label("Question", exact=True).fill("Tom has 3 boxes of 4 pens and gives away 1. How many pens?")
    page.get_by_label("Reasoning and final answer", exact=True).fill(
        "3 boxes of 4 pens make 12 pens.\nHe gives away 1, so 12 - 1 = 11.\nThe answer is 11."
    )
    page.get_by_label(re.compile(r"^Reference answer")).fill("")
    page.get_by_role("button", name="Add trace").click()
    shown = wait_text(page, r"credit toward its own final answer", 600) is not None
    wait_idle(page)
    ok = int(shown and errors(page) == 0 and tracebacks(page) == 0 and not EXCEPTION_NAMES.search(body(page)))
    with page.expect_download(timeout=300_000) as download:
        page.get_by_role("button", name="Download a shareable report (HTML)").click()
    report = Path(download.value.path()).read_text()
    colours = {c.lower() for c in re.findall(r'"color":\s*"(#[0-9a-fA-F]{6})"', report)}
    page.close()
    return ok, int(len(colours) >= 2 and not any(c.startswith("#00000") for c in colours))


def rl_runs(browser, url: str, tmp: Path) -> tuple[int, int]:
    """Import two verl runs in one tab, then ask to score the second with an estimator it cannot feed: (how many
    imports left the run view on the previous run, 1 if the refusal is shown before any job)."""
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    page.goto(f"{url}/dataset")
    wait_text(page, r"Import a dataset")
    quiet(page)
    stale = 0
    for name, answer in (("first_run", "4"), ("second_run", "6")):
        folder = tmp / name
        folder.mkdir()
        lines = [{"input": f"user\nWhat is {answer} + 0?\nassistant\n", "output": f"{answer} + 0 = {answer}. "
                  f"The answer is {answer}.", "score": float(i % 2), "step": 1} for i in range(2)]  # fmt: skip
        (folder / "1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        box = page.get_by_label("or a file or folder on this machine", exact=True)
        if not box.is_visible():
            page.get_by_text("Import a dataset", exact=True).click()
        box.fill(str(folder))
        box.press("Tab")
        quiet(page)
        page.get_by_role("button", name="Import").click()
        wait_text(page, rf"{name}: 2 traces imported")
        quiet(page)
        stale += not page.get_by_role("combobox", name="Run").first.input_value().startswith(name)
    page.get_by_text("Score rollouts with RREDCoT", exact=True).click()
    popover = page.locator("[data-testid='stExpander']").filter(has_text="Score rollouts with RREDCoT")
    for _ in range(3):  # a rerun that lands on the click closes the menu again: open it until it shows
        quiet(page)
        popover.get_by_role("combobox", name="Estimator").click()
        option = page.get_by_role("option", name="rredcot", exact=True).first
        try:
            option.wait_for(timeout=10_000)
            break
        except Exception:  # playwright's TimeoutError
            page.keyboard.press("Escape")
    option.click()
    quiet(page)
    if not popover.get_by_role("combobox", name="Estimator").is_visible():  # a rerun folded it
        page.get_by_text("Score rollouts with RREDCoT", exact=True).click()
    refused = wait_text(page, r"estimator 'rredcot' cannot run on any of the 2 traces", 60) is not None
    disabled = popover.get_by_role("button", name=re.compile(r"^Score \d+ distinct rollouts")).is_disabled()
    page.close()
    return stale, int(refused and disabled)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=0, help="open only this many samples live (0 = all)")
    parser.add_argument("--no-jobs", action="store_true", help="leave out the Monte Carlo and ProcessBench jobs "
                        "(their keys print 'skipped'): the smoke test's short path")  # fmt: skip
    args = parser.parse_args(argv)
    wanted = args.samples
    tmp = Path(tempfile.mkdtemp(prefix="first_hour_"))
    process, url = start_server(tmp / "store.duckdb")
    found: dict[str, float] = {}
    timings: dict[str, float] = {}
    full: dict[str, float] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            page.goto(url)
            wait_idle(page)
            found["errors_on_defaults"] = errors(page)
            found["absolute_legend"] = int(
                count(page, ".rc-legend[data-scale='absolute']") > 0 and "Absolute scale: σ" in body(page)
            )
            found["recorded_scores"] = int(page.get_by_text("recorded with Qwen2.5-Coder-1.5B").count() > 0)
            found["tracebacks"] = tracebacks(page)

            page.get_by_text("Paste", exact=True).click()
            page.get_by_label("Question", exact=True).fill("Tom has 3 bags of 5 apples. How many apples?")
            page.get_by_label("Reasoning and final answer", exact=True).fill(
                "Each bag has 5 apples.\nSo 3 * 5 = 15.\nThe answer is 15."
            )
            page.get_by_label(re.compile(r"^Reference answer")).fill("15")
            page.get_by_role("button", name="Add trace").click()
            page.wait_for_selector("text=Added and selected.", timeout=60000)
            wait_idle(page)
            found["paste_without_solution_ok"] = int(errors(page) == 0 and tracebacks(page) == 0)
            found["tracebacks"] += tracebacks(page)

            upload = tmp / "my_eval_outputs.jsonl"
            upload.write_text(json.dumps(NATURAL) + "\n", encoding="utf-8")
            page.get_by_text("Upload", exact=True).click()
            page.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(str(upload))
            page.wait_for_selector("text=my_eval_outputs.jsonl: 1 traces (plain)", timeout=60000)
            wait_idle(page)
            found["natural_fields_ok"] = int(errors(page) == 0 and tracebacks(page) == 0)
            found["tracebacks"] += tracebacks(page)

            page.get_by_text("Samples", exact=True).click()
            page.wait_for_function(  # the upload's Trace menu is gone once the rerun has replaced it
                "() => document.querySelectorAll('input[aria-label=\"Trace\"]').length === 1", timeout=60000
            )
            wait_idle(page)
            labels, current = sample_labels(page)
            live = page.get_by_text("Re-score live with the loaded model", exact=True)
            timings[current], full[current] = rerun(page, live.click)
            found["tracebacks"] += tracebacks(page)
            others = [label for label in labels if label != current]
            for label in others[: wanted - 1] if wanted else others:
                timings[label], full[label] = rerun(page, lambda label=label: choose(page, "Trace", label))
                found["tracebacks"] += tracebacks(page)
                print(f"{label[:60]:60s} first heatmap {timings[label]:6.2f} s · full {full[label]:6.2f} s", flush=True)
            if args.no_jobs:
                found |= dict.fromkeys(("duplicate_job_joined", "cancel_latency_s", "refresh_after_finish"), "skipped")
            else:
                joined, cancel = monte_carlo(page, url)
                found["duplicate_job_joined"], found["cancel_latency_s"] = joined, f"{cancel:.2f}"
                found["tracebacks"] += tracebacks(page)
                print(f"Monte Carlo: joined={joined} cancel {cancel:.2f} s")
                found["refresh_after_finish"] = evaluation_appears(page, url)
                found["tracebacks"] += tracebacks(page)
            found["paste_without_reference_ok"], found["report_distinct_colours"] = paste_and_report(browser, url)
            found["stale_run_view"], found["failed_job_reported"] = rl_runs(browser, url, tmp)
            browser.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    worst = max(timings, key=timings.get)
    print(
        f"tracebacks={found['tracebacks']} errors_on_defaults={found['errors_on_defaults']} "
        f"recorded_scores={found['recorded_scores']} paste_without_solution_ok={found['paste_without_solution_ok']} "
        f"natural_fields_ok={found['natural_fields_ok']} worst_first_heatmap_s={timings[worst]:.2f} "
        f"worst_trace={worst.split(' · ')[0].replace(' ', '_')} "
        f"median_first_heatmap_s={statistics.median(timings.values()):.2f} "
        f"worst_full_analysis_s={max(full.values()):.2f} first_looks={sum(PREVIEWS)} samples={len(timings)} "
        f"absolute_legend={found['absolute_legend']} duplicate_job_joined={found['duplicate_job_joined']} "
        f"cancel_latency_s={found['cancel_latency_s']} refresh_after_finish={found['refresh_after_finish']} "
        f"paste_without_reference_ok={found['paste_without_reference_ok']} "
        f"report_distinct_colours={found['report_distinct_colours']} "
        f"failed_job_reported={found['failed_job_reported']} stale_run_view={found['stale_run_view']}"
    )


if __name__ == "__main__":
    main()
