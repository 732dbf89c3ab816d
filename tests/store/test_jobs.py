"""Job rows: written whole, listed newest first, and interrupted when their process is gone."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from rredcot_viz.store.jobs import JOB_COLUMNS


def _row(job_id: str, **fields: Any) -> dict[str, Any]:
    row = dict.fromkeys(JOB_COLUMNS)
    row.update(job_id=job_id, kind="mc", job_key="mc:abc", label=job_id, status="done", done=4, total=4)
    row.update(unit="states", cost={"seconds": 1.5}, pid=100, created_at=1.0)
    row.update(fields)
    return row


def test_a_job_row_round_trips(store):
    row = _row("j1", result="ok", started_at=1.5, finished_at=2.0)
    store.put_job(row)
    assert store.job("j1") == row
    store.put_job({**row, "done": 2, "status": "running"})  # the whole row is rewritten
    assert store.job("j1")["done"] == 2 and store.job("j1")["status"] == "running"
    assert store.job("nothing") is None


def test_jobs_are_listed_newest_first_by_key(store):
    store.put_job(_row("old", created_at=1.0))
    store.put_job(_row("new", created_at=3.0))
    store.put_job(_row("other", created_at=2.0, job_key="mc:other", cost=None))
    assert [j["job_id"] for j in store.jobs()] == ["new", "other", "old"]
    assert [j["job_id"] for j in store.jobs("mc:abc")] == ["new", "old"]
    assert [j["job_id"] for j in store.jobs(limit=1)] == ["new"] and store.jobs()[1]["cost"] is None


def test_jobs_of_a_dead_process_are_interrupted(store):
    """Several processes share the store: a job of a process that is gone is interrupted, one of another process
    that still runs (a second app) is left running."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    dead = ended.pid  # that process is gone (its id is not reused this soon)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        store.put_job(_row("mine", status="running", pid=100))
        store.put_job(_row("dead-running", status="running", pid=dead))
        store.put_job(_row("dead-queued", status="queued", pid=dead))
        store.put_job(_row("dead-done", status="done", pid=dead, finished_at=5.0))
        store.put_job(_row("other-app", status="running", pid=alive.pid))
        assert store.interrupt_jobs(alive_pid=100) == 2
    finally:
        alive.kill()
        alive.wait()
    statuses = {j["job_id"]: j["status"] for j in store.jobs()}
    assert statuses == {
        "mine": "running",
        "dead-running": "interrupted",
        "dead-queued": "interrupted",
        "dead-done": "done",
        "other-app": "running",
    }
    interrupted = store.job("dead-running")
    assert interrupted["message"] == "the app stopped while this job ran" and interrupted["finished_at"] is not None
    assert store.job("dead-done")["finished_at"] == 5.0
    assert store.interrupt_jobs(alive_pid=100) == 1  # the other app's process has ended since
