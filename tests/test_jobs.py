"""Background jobs: progress, results, failures with a message, cancellation at the next report."""

from __future__ import annotations

import threading

from rredcot_viz.errors import MissingReferenceError
from rredcot_viz.jobs import JobManager


def test_progress_result_and_errors():
    jobs = JobManager()

    def work(job):
        for i in range(3):
            job.progress(i + 1, 3, f"step {i + 1}")
        return 42

    done = jobs.wait(jobs.submit("count", work))
    assert (done.status, done.result, done.fraction, done.message) == ("done", 42, 1.0, "step 3")

    def fails(job):
        raise MissingReferenceError("the trace has no reference answer")

    failed = jobs.wait(jobs.submit("fails", fails))
    assert failed.status == "failed" and failed.error == "the trace has no reference answer"
    crashed = jobs.wait(jobs.submit("crash", lambda job: 1 / 0))
    assert crashed.status == "failed" and crashed.error.startswith("ZeroDivisionError")
    assert [j.label for j in jobs.jobs()] == ["count", "fails", "crash"]


def test_cancel_stops_at_the_next_progress_report():
    jobs = JobManager()
    started, release = threading.Event(), threading.Event()
    reports = []

    def slow(job):
        started.set()
        release.wait(5)
        for i in range(100):
            job.progress(i, 100)
            reports.append(i)

    job = jobs.submit("slow", slow)
    started.wait(5)
    job.cancel()
    release.set()
    jobs.wait(job)
    assert job.status == "cancelled" and reports == []
