"""Background jobs in the app: one way to start a job (``start_job``: an identical running job is joined, and
the whole app reruns so every view of jobs sees it), one way to show a job (progress, cancel, outcome), used by
a page's own job (``job_progress``) and by the sidebar list of every job (``jobs_panel``); and a progress bar
for calls that run while the page waits (``StreamlitProgress``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from rredcot_viz.jobs import Job, live_message
from rredcot_viz.ui import resources


@dataclass(frozen=True)
class JobTexts:
    """What a page says about its job: the cancel button, and the outcome once it has ended."""

    cancel: str = "Cancel"
    cancel_note: str | None = None  # shown after the cancel button is pressed
    cancelled: str | None = None  # default: "Cancelled after N s."
    done: str | None = None


def job_line(job: Job) -> str:
    """A job's state in words: what it waits for, or its count of units and what its running call has done, the
    seconds and the tokens it spent."""
    cost = job.cost
    tokens = int(cost.get("tokens_processed", 0) + cost.get("tokens_generated", 0))
    spent = f"{job.elapsed:.0f} s · {tokens:,} tokens"
    if job.status == "queued":  # "queued behind X" while another job runs, else the worker is about to take it
        return f"{job.label}: {live_message(job) or 'queued, starting…'}"
    if job.status == "cancelling":
        return f"{job.label}: cancelling… (stops at its next sampling step) · {spent}"
    count = f"{job.done}/{job.total} {job.unit}" if job.total else ""
    if not job.active:  # what it reached, not what it was doing last
        return " · ".join(part for part in (f"{job.label}: {job.status}", count, spent) if part)
    detail = live_message(job) or ("" if job.total else "starting")
    return f"{job.label}: {' · '.join(part for part in (count, detail) if part)} · {spent}"


def shown_fraction(job: Job) -> float:
    """The bar's fill: never full while the job runs (after its last unit's count, that unit's own work, R-hat
    after the last chunk, can take a while yet)."""
    return min(job.fraction, 0.99) if job.active else job.fraction


def show_job(job: Job, key: str, texts: JobTexts | None = None, compact: bool = False) -> bool:
    """A job's progress bar and cancel button while it runs, its outcome once it has ended (a caption when
    ``compact``, as in the sidebar). Returns True on the one render where ``key`` first sees it ended (to rerun
    for its results)."""
    texts = texts or JobTexts()
    if job.active:
        if compact:  # the sidebar is narrow: the bar, then the button under it, never a clipped column
            bar, place = st.empty(), st
        else:
            left, place = st.columns([5, 1])
            bar = left.empty()
        cancelling = job.status == "cancelling"
        label = "Cancelling…" if cancelling else texts.cancel
        if place.button(label, key=f"{key}_cancel_{job.id}", disabled=cancelling):
            if not resources.jobs().cancel(job.id):
                st.info("That job does not run in this app process.")
            elif texts.cancel_note:
                st.info(texts.cancel_note)
        bar.progress(shown_fraction(job), text=job_line(job))  # drawn after the button: a cancel shows at once
        return False
    if compact:
        st.caption(job_line(job))
        return False
    if job.status == "failed":
        st.error(job.error)
    elif job.status == "cancelled":
        st.warning(texts.cancelled or f"Cancelled after {job.elapsed:.0f} s.")
    elif job.status == "interrupted":
        st.warning(f"{job.label} was interrupted: the app stopped while it ran. Start it again to continue.")
    elif texts.done:
        st.success(texts.done)
    first_seen = st.session_state.get(f"{key}_seen") != job.id
    st.session_state[f"{key}_seen"] = job.id
    return first_seen


def start_job(
    session_key: str, label: str, function: Callable[[Job], Any], *, rerun: bool = True, **options: Any
) -> Job:
    """Submit ``function`` as a background job (or join the identical one already running: same ``key``),
    remember it as this page's job under ``session_key`` and rerun the app, so the page and the sidebar follow
    it from the next render."""
    job = resources.jobs().submit(label, function, **options)
    st.session_state[session_key] = job.id
    st.session_state[f"{session_key}_joined"] = job.requests > 1
    if rerun:
        st.rerun()
    return job


def job_progress(
    session_key: str,
    texts: JobTexts | None = None,
    *,
    on_end: Callable[[Job], None] | None = None,
    idle: str | None = None,
    body: Callable[[Job | None], None] | None = None,
    every: float = 1.0,
    find: Callable[[], Job | None] | None = None,
) -> None:
    """The job whose id ``st.session_state[session_key]`` holds, redrawn every ``every`` s while it runs (a
    fragment: only this part reruns). ``find()`` finds the page's running job when the session knows none (after
    a reload), so its progress and cancel button come back. ``on_end(job)`` runs on the first render that sees
    it ended (e.g. open its result and ``st.rerun(scope="app")``); ``idle`` is shown when there is no job;
    ``body`` draws whatever the page redraws with it (live curves)."""
    manager = resources.jobs()
    running = manager.get(st.session_state.get(session_key, ""))
    if (running is None or not running.active) and find is not None:
        found = find()
        if found is not None:
            st.session_state[session_key] = found.id
            running = found
    if st.session_state.pop(f"{session_key}_joined", False):
        st.info("The same job was already running: this page follows it instead of starting a second one.")

    @st.fragment(run_every=every if running is not None and running.active else None)
    def progress() -> None:
        job = manager.get(st.session_state.get(session_key, ""))
        if job is None and idle:
            st.caption(idle)
        if job is not None and show_job(job, session_key, texts) and on_end is not None:
            on_end(job)
        if body is not None:
            body(job)

    progress()


PANEL_SLOT = "jobs_panel_slot"


def jobs_panel(limit: int = 8, again: bool = False) -> None:
    """Every tab's view of the store's jobs in the sidebar: running ones with progress and a cancel button, then
    the finished ones; the count is taken on every redraw. The app draws it first, into a slot of the sidebar; a
    page that has just started a job calls it ``again``, which redraws that slot (it said "Jobs (0 running)"
    while the page's own job ran, until the next full rerun). The second drawing's widgets take keys of their own:
    the first drawing's keys are still taken in that run, though its elements are replaced."""
    manager = resources.jobs()
    keys = "jobs_again" if again else "jobs"
    if again:
        slot = st.session_state.get(PANEL_SLOT)
        if slot is None:
            return
    else:
        slot = st.session_state[PANEL_SLOT] = st.sidebar.empty()  # this run's slot
    if not manager.jobs(limit=limit):
        return

    @st.fragment(run_every=2.0 if manager.running_count() else None)
    def panel() -> None:
        listed = manager.jobs(limit=limit)
        running = sum(job.active for job in listed)
        with st.expander(f"Jobs ({running} running)", expanded=bool(running)):
            for job in listed:
                show_job(job, keys, compact=True)
        if not running and st.session_state.get("jobs_panel_polling"):
            st.session_state["jobs_panel_polling"] = False
            st.rerun(scope="app")  # stop polling: the last job ended
        st.session_state["jobs_panel_polling"] = bool(running)

    with slot.container():
        panel()


class StreamlitProgress:
    """A progress bar for a library call reporting ``progress(done, total)`` while the page waits."""

    def __init__(self, label: str):
        self.bar = st.progress(0.0, text=label)
        self.label = label

    def __call__(self, done: int, total: int) -> None:
        self.bar.progress(min(done / max(total, 1), 1.0), text=f"{self.label} ({done}/{total})")

    def close(self) -> None:
        self.bar.empty()
