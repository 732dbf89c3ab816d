"""Background jobs in the app: one way to show a job (progress, cancel, outcome), used by a page's own job
(``job_progress``) and by the sidebar list of every job (``jobs_panel``); and a progress bar for calls that
run while the page waits (``StreamlitProgress``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from rredcot_viz.jobs import Job
from rredcot_viz.ui import resources


@dataclass(frozen=True)
class JobTexts:
    """What a page says about its job: the cancel button, and the outcome once it has ended."""

    cancel: str = "Cancel"
    cancel_note: str | None = None  # shown after the cancel button is pressed
    cancelled: str | None = None  # default: "Cancelled after N s."
    done: str | None = None


def job_line(job: Job) -> str:
    """A job's progress in words: its count of units (or its message), seconds, and the tokens it spent."""
    cost = job.cost
    tokens = int(cost.get("tokens_processed", 0) + cost.get("tokens_generated", 0))
    count = f"{job.done}/{job.total} {job.unit}" if job.total else job.message or "starting"
    message = f" ({job.message})" if job.total and job.message else ""
    return f"{job.label}: {count}{message}, {job.elapsed:.0f} s · {tokens} tokens"


def show_job(job: Job, key: str, texts: JobTexts | None = None, compact: bool = False) -> bool:
    """A job's progress bar and cancel button while it runs, its outcome once it has ended (a caption when
    ``compact``). Returns True on the one render where ``key`` first sees it ended (to rerun for its results)."""
    texts = texts or JobTexts()
    if job.active:
        left, right = st.columns([4, 1])
        left.progress(job.fraction, text=job_line(job))
        if right.button(texts.cancel, key=f"{key}_cancel_{job.id}"):
            if not resources.jobs().cancel(job.id):
                st.info("That job does not run in this app process.")
            elif texts.cancel_note:
                st.info(texts.cancel_note)
        return False
    if compact:
        st.caption(f"{job_line(job)} · {job.status}")
        return False
    if job.status == "failed":
        st.error(job.error)
    elif job.status == "cancelled":
        st.warning(texts.cancelled or f"Cancelled after {job.elapsed:.0f} s.")
    elif texts.done:
        st.success(texts.done)
    first_seen = st.session_state.get(f"{key}_seen") != job.id
    st.session_state[f"{key}_seen"] = job.id
    return first_seen


def job_progress(
    session_key: str,
    texts: JobTexts | None = None,
    *,
    on_end: Callable[[Job], None] | None = None,
    idle: str | None = None,
    body: Callable[[Job | None], None] | None = None,
    every: float = 1.0,
) -> None:
    """The job whose id ``st.session_state[session_key]`` holds, redrawn every ``every`` s while it runs (a
    fragment: only this part reruns). ``on_end(job)`` runs on the first render that sees it ended (e.g. open its
    result and ``st.rerun(scope="app")``); ``idle`` is shown when there is no job; ``body`` draws whatever the
    page redraws with it (live curves)."""
    manager = resources.jobs()
    running = manager.get(st.session_state.get(session_key, ""))

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


def jobs_panel(limit: int = 8) -> None:
    """Every tab's view of the store's jobs in the sidebar: running ones with progress and a cancel button, then
    the finished ones."""
    manager = resources.jobs()
    listed = manager.jobs(limit=limit)
    if not listed:
        return
    running = [job for job in listed if job.active]

    @st.fragment(run_every=2.0 if running else None)
    def panel() -> None:
        with st.sidebar.expander(f"Jobs ({len(running)} running)", expanded=bool(running)):
            for job in manager.jobs(limit=limit):
                show_job(job, "jobs", compact=True)

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
