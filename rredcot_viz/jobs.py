"""Background jobs with progress, cost and cancellation, for work that outlives one page render
(Monte Carlo rollouts, dataset analysis, training). Library-level: the app polls ``Job`` objects.

A job's function receives the ``Job`` and reports through ``job.progress(done, total)``, which raises
``Cancelled`` once cancellation was requested, so every long loop is cancellable at its next report.
"""

from __future__ import annotations

import threading
import time
import traceback
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from rredcot_viz.errors import RredcotError


class Cancelled(RredcotError):
    """The job was cancelled by the user."""


@dataclass
class Job:
    label: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    status: str = "queued"  # queued | running | done | failed | cancelled
    done: int = 0
    total: int = 0
    message: str = ""
    cost: dict[str, float] = field(default_factory=dict)
    result: Any = None
    error: str | None = None
    started: float | None = None
    finished: float | None = None
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

    @property
    def active(self) -> bool:
        return self.status in ("queued", "running")

    @property
    def elapsed(self) -> float:
        if self.started is None:
            return 0.0
        return (self.finished or time.time()) - self.started

    def progress(self, done: int, total: int, message: str | None = None) -> None:
        if self._cancel.is_set():
            raise Cancelled(f"{self.label} was cancelled")
        self.done, self.total = done, total
        if message is not None:
            self.message = message

    def cancel(self) -> None:
        self._cancel.set()
        if self.status == "queued":
            self.status = "cancelled"


class JobManager:
    """Runs jobs on a small thread pool (one worker by default: a CPU has no room for two model jobs)."""

    def __init__(self, workers: int = 1):
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rredcot-job")
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def submit(self, label: str, function: Callable[[Job], Any]) -> Job:
        job = Job(label)
        with self._lock:
            self._jobs[job.id] = job
        self._pool.submit(self._run, job, function)
        return job

    def _run(self, job: Job, function: Callable[[Job], Any]) -> None:
        if job.status == "cancelled":
            return
        job.status, job.started = "running", time.time()
        try:
            job.result = function(job)
            job.status = "done"
        except Cancelled:
            job.status = "cancelled"
        except RredcotError as error:
            job.status, job.error = "failed", str(error)
        except Exception as error:  # a background thread must never die silently
            job.status = "failed"
            job.error = f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=3)}"
        finally:
            job.finished = time.time()

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def jobs(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def wait(self, job: Job, timeout: float = 60.0) -> Job:
        deadline = time.time() + timeout
        while job.active and time.time() < deadline:
            time.sleep(0.02)
        return job
