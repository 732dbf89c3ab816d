"""Background jobs with progress, cost and cancellation, for work that outlives one page render
(Monte Carlo rollouts, dataset analysis, training). Library-level: the app polls ``Job`` objects.

A job's function receives the ``Job`` and reports through ``job.progress(done, total)``, which raises
``Cancelled`` once cancellation was requested, so every long loop is cancellable at its next report. Model
calls inside a job also report each decode step (``model.meter.heartbeat``): the job shows its rollouts and
tokens while one long sampling call runs, and a cancellation lands within one step, not at the next report.

A job names what it computes (``key``): asking for a job whose key is already queued or running joins that
job instead of starting a second, identical one. A job waiting for another says which (``queued behind``),
and one asked to stop says ``cancelling`` until its thread has left it.

Jobs are recorded in the store (when the manager has one), not in a browser session: every tab lists the
same jobs, and a job that was running when the process died shows as ``interrupted`` after a restart.
Workers are daemon threads and the manager cancels its jobs at interpreter exit, so SIGTERM / Ctrl-C stop
the app within a few seconds instead of waiting for a job to finish.

Each job's cost is its own: model calls are credited to the thread that makes them (``model.meter.measure``), so
two jobs, or a job and a page, sharing one model never see each other's tokens.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rredcot_viz.errors import RredcotError
from rredcot_viz.model.meter import CostScope, listen, measure

if TYPE_CHECKING:
    from rredcot_viz.store import Store

LOGGER = logging.getLogger(__name__)
ACTIVE = ("queued", "running", "cancelling")
PERSIST_EVERY_S = 0.5  # progress reports reach the store at most this often (status changes always do)


class Cancelled(RredcotError):
    """The job was cancelled by the user (or the app is stopping)."""


@dataclass
class Job:
    label: str
    kind: str = "job"  # mc, dataset, train, ...: what the jobs list groups and names
    key: str | None = None  # what the job computes, so any tab can find the job for its settings
    unit: str = "steps"  # what done/total count
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    status: str = "queued"  # queued | running | cancelling | done | failed | cancelled | interrupted
    done: int = 0
    total: int = 0
    message: str = ""
    behind: str = ""  # the label of the job this one waits for while queued
    requests: int = 1  # how many asked for it (a second identical request joins this job)
    result: Any = None
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    stored_cost: dict[str, float] = field(default_factory=dict)  # a job read back from the store
    _scope: CostScope | None = field(default=None, repr=False)
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _settled: threading.Event = field(default_factory=threading.Event, repr=False)  # its thread is out of it
    _on_change: Callable[[Job, bool], None] | None = field(default=None, repr=False)

    @property
    def fraction(self) -> float:
        """Units done, plus the running sampling call's share of the next one (rollouts drawn of a state)."""
        finished, asked = self.rows
        partial = finished / asked if asked and self.done < max(self.total, 1) else 0.0
        return min((self.done + partial) / self.total, 1.0) if self.total else partial

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def elapsed(self) -> float:
        if self.started is None:
            return 0.0
        return (self.finished or time.time()) - self.started

    @property
    def cost(self) -> dict[str, float]:
        """This job's own model cost so far (calls, tokens, seconds), the running call up to its last step."""
        return self._scope.so_far.as_dict() if self._scope is not None else dict(self.stored_cost)

    @property
    def rows(self) -> tuple[int, int]:
        """(finished, asked) rows of the sampling call running now (rollouts, answers); (0, 0) between calls."""
        scope = self._scope
        return scope.rows if scope is not None and scope.running is not None else (0, 0)

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    def progress(self, done: int, total: int, message: str | None = None) -> None:
        self._check_cancelled()
        self.done, self.total = done, total
        if message is not None:
            self.message = message
        self._changed(force=False)

    def note(self, message: str) -> None:
        """Say what the job does now (e.g. "evaluating held-out") without moving its count."""
        self._check_cancelled()
        self.message = message
        self._changed(force=False)

    def cancel(self) -> None:
        self._cancel.set()
        if self.status == "queued":
            self.status, self.finished = "cancelled", time.time()
        elif self.status == "running":
            self.status = "cancelling"
        self._changed(force=True)

    def _check_cancelled(self) -> None:
        if self._cancel.is_set():
            raise Cancelled(f"{self.label} was cancelled")

    def _heartbeat(self) -> None:
        """A model call of this job took a step: stop it if cancelled, else let the watchers see its tokens."""
        self._check_cancelled()
        self._changed(force=False)

    def _changed(self, force: bool) -> None:
        if self._on_change is not None:
            self._on_change(self, force)


class JobManager:
    """Runs jobs on daemon worker threads (one by default: a CPU has no room for two model jobs), recording
    them in ``store`` when given one."""

    def __init__(self, workers: int = 1, store: Store | None = None, stop_timeout: float = 3.0):
        self.store = store
        self.stop_timeout = stop_timeout
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._queue: queue.Queue[tuple[Job, Callable[[Job], Any]] | None] = queue.Queue()
        self._persisted: dict[str, float] = {}
        self._write_lock = threading.Lock()  # DuckDB reports a conflict when two threads replace one row at once
        self._stopping = False
        if store is not None:
            store.interrupt_jobs(os.getpid())  # a job recorded as running by a dead process never ends
        self._workers = [
            threading.Thread(target=self._work, name=f"rredcot-job-{i}", daemon=True) for i in range(workers)
        ]
        for worker in self._workers:
            worker.start()
        atexit.register(self.shutdown)

    # ------------------------------------------------------------------ submitting and running
    def submit(
        self,
        label: str,
        function: Callable[[Job], Any],
        *,
        kind: str = "job",
        key: str | None = None,
        unit: str = "steps",
        total: int = 0,
    ) -> Job:
        """Queue ``function(job)``, or join the queued or running job of this process with the same ``key`` (an
        identical request: its ``requests`` count goes up); ``total`` (when known) makes the progress count real
        units from the start."""
        if self._stopping:
            raise RredcotError("the app is stopping; start the job again after a restart")
        with self._lock:
            same = [j for j in self._jobs.values() if key is not None and j.key == key and j.active]
            if same:
                joined = max(same, key=lambda j: j.created)
                joined.requests += 1
                return joined
            ahead = [j for j in self._jobs.values() if j.active]
            job = Job(label, kind=kind, key=key, unit=unit, total=total, _on_change=self._persist)
            if ahead:
                job.behind = max(ahead, key=lambda j: j.created).label
            self._jobs[job.id] = job
        self._persist(job, force=True)
        self._queue.put((job, function))
        return job

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            self._run(*item)

    def _run(self, job: Job, function: Callable[[Job], Any]) -> None:
        if job.status != "queued":
            job._settled.set()
            return
        job.status, job.started, job.behind = "running", time.time(), ""
        self._persist(job, force=True)
        try:
            with measure() as job._scope, listen(job._heartbeat):
                job.result = function(job)
            job.status = "done"
        except Cancelled:
            job.status = "cancelled"
            if self._stopping:
                job.message = "cancelled because the app stopped"
        except RredcotError as error:
            job.status, job.error = "failed", str(error)
        except Exception as error:  # a background thread must never die silently; the log has the traceback
            LOGGER.exception("job %s (%s) failed", job.id, job.label)
            job.status, job.error = "failed", f"{job.label} failed unexpectedly: {type(error).__name__}: {error}"
        finally:
            job.finished = time.time()
            self._persist(job, force=True)
            job._settled.set()

    def _persist(self, job: Job, force: bool) -> None:
        if self.store is None:
            return
        now = time.time()
        if not force and now - self._persisted.get(job.id, 0.0) < PERSIST_EVERY_S:
            return
        self._persisted[job.id] = now
        try:
            with self._write_lock:
                self.store.put_job(job_row(job))
        except Exception:  # a store hiccup must not kill the job; the next report retries
            LOGGER.exception("could not record job %s in the store", job.id)

    # ------------------------------------------------------------------ looking jobs up
    def get(self, job_id: str) -> Job | None:
        """A job of this process, or one recorded in the store by an earlier one."""
        if job_id in self._jobs:
            return self._jobs[job_id]
        if self.store is not None and job_id:
            row = self.store.job(job_id)
            return job_from_row(row) if row else None
        return None

    def latest(self, key: str) -> Job | None:
        """The newest job computing ``key`` (so a new tab finds the job another tab started)."""
        with self._lock:
            mine = [job for job in self._jobs.values() if job.key == key]
        if mine:
            return max(mine, key=lambda job: job.created)
        rows = self.store.jobs(key=key, limit=1) if self.store is not None else []
        return job_from_row(rows[0]) if rows else None

    def active(self, kind: str) -> Job | None:
        """The newest queued or running job of ``kind`` (this process's or one the store lists as active), so a
        page reloaded mid-run finds its job again."""
        found = [job for job in self.jobs(limit=50) if job.kind == kind and job.active]
        return found[0] if found else None

    def running_count(self) -> int:
        """Jobs queued or running now (this process's and those the store lists as active)."""
        return sum(job.active for job in self.jobs(limit=50))

    def jobs(self, limit: int = 50) -> list[Job]:
        """Jobs newest first: this process's live objects, then what the store recorded before."""
        with self._lock:
            live = dict(self._jobs)
        stored = [job_from_row(row) for row in self.store.jobs(limit=limit)] if self.store is not None else []
        merged = {**{job.id: job for job in stored}, **live}
        return sorted(merged.values(), key=lambda job: job.created, reverse=True)[:limit]

    def cancel(self, job_id: str) -> bool:
        """Cancel a job of this process; False if it is not running here (ended, or from another process)."""
        job = self._jobs.get(job_id)
        if job is None or not job.active:
            return False
        job.cancel()
        return True

    def wait(self, job: Job, timeout: float = 60.0) -> Job:
        """Until ``job`` has ended and its end is recorded in the store (or ``timeout`` s have passed). A job of
        this process is settled only after its final store write; one abandoned at shutdown never settles."""
        mine = job.id in self._jobs
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not job.active and (not mine or job._settled.is_set() or self._stopping):
                break
            time.sleep(0.02)
        return job

    # ------------------------------------------------------------------ stopping
    def shutdown(self, timeout: float | None = None) -> None:
        """Cancel every job and wait up to ``timeout`` s for them to stop at their next progress report; a job
        still inside a long model call after that is recorded as cancelled and abandoned (daemon thread)."""
        if self._stopping:
            return
        self._stopping = True
        timeout = self.stop_timeout if timeout is None else timeout
        with self._lock:
            active = [job for job in self._jobs.values() if job.active]
        for job in active:
            job.cancel()
        # Wait for each running job's thread to leave it, final store write included: a daemon thread still
        # inside DuckDB (GIL released) when the interpreter finalizes aborts the process.
        running = [job for job in active if job.started is not None or job.status == "running"]
        deadline = time.time() + timeout
        for job in running:
            job._settled.wait(max(0.0, deadline - time.time()))
        for job in active:
            if job.active:
                job.status, job.finished = "cancelled", time.time()
                job.message = "cancelled because the app stopped (inside a model call)"
                self._persist(job, force=True)
        for _ in self._workers:
            self._queue.put(None)


def job_row(job: Job) -> dict[str, Any]:
    """The store's record of a job (its result only when it is a plain value such as a run id). Its message is
    what a watcher in another tab or process reads, so it carries the live detail (rows, queued behind)."""
    plain = job.result if isinstance(job.result, str | int | float) else None
    return {
        "job_id": job.id,
        "kind": job.kind,
        "job_key": job.key,
        "label": job.label,
        "status": job.status,
        "done": job.done,
        "total": job.total,
        "unit": job.unit,
        "message": live_message(job),
        "error": job.error,
        "result": None if plain is None else str(plain),
        "cost": job.cost,
        "pid": os.getpid(),
        "created_at": job.created,
        "started_at": job.started,
        "finished_at": job.finished,
    }


def live_message(job: Job) -> str:
    """The job's message with what its running call has done so far, or what it waits for."""
    if job.status == "queued" and job.behind:
        return f"queued behind {job.behind}"
    done, asked = job.rows
    return f"{job.message} {done}/{asked}".strip() if asked else job.message


def job_from_row(row: dict[str, Any]) -> Job:
    """A read-only ``Job`` from the store (cancelling it does nothing: it runs in no thread here)."""
    return Job(
        row["label"],
        kind=row["kind"],
        key=row["job_key"],
        unit=row["unit"],
        id=row["job_id"],
        status=row["status"],
        done=int(row["done"]),
        total=int(row["total"]),
        message=row["message"] or "",
        result=row["result"],
        error=row["error"],
        created=float(row["created_at"]),
        started=row["started_at"],
        finished=row["finished_at"],
        stored_cost=dict(row["cost"] or {}),
    )
