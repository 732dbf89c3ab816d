"""Background jobs' rows (``rredcot_viz.jobs``), so that the app lists them again after a restart."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from rredcot_viz.store.base import StoreBase

LIVE = "('queued', 'running', 'cancelling')"  # statuses of a job whose process may still work on it
JOB_COLUMNS = (
    "job_id",
    "kind",
    "job_key",
    "label",
    "status",
    "done",
    "total",
    "unit",
    "message",
    "error",
    "result",
    "cost",
    "pid",
    "created_at",
    "started_at",
    "finished_at",
)


class JobStore(StoreBase):
    """The ``jobs`` table: one row per job, rewritten whole on every update."""

    def put_job(self, row: dict[str, Any]) -> None:
        """Record a job's state (the whole row: a job's thread is its only writer)."""
        values = [json.dumps(row["cost"]) if name == "cost" else row[name] for name in JOB_COLUMNS]
        marks = ", ".join("?" for _ in range(len(JOB_COLUMNS) + 1))
        with self.cursor() as cur:
            cur.execute(
                f"INSERT OR REPLACE INTO jobs ({', '.join(JOB_COLUMNS)}, updated_at) VALUES ({marks})",
                [*values, time.time()],
            )

    def job(self, job_id: str) -> dict[str, Any] | None:
        rows = self._job_rows("WHERE job_id = ?", [job_id])
        return rows[0] if rows else None

    def jobs(self, key: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Recorded jobs, newest first (only those computing ``key`` when given)."""
        where, params = ("WHERE job_key = ?", [key]) if key is not None else ("", [])
        return self._job_rows(f"{where} ORDER BY created_at DESC LIMIT {int(limit)}", params)

    def interrupt_jobs(self, alive_pid: int) -> int:
        """Mark jobs left queued or running by a process that is gone as interrupted; returns how many. Several
        processes share the store, so a job of another process still alive (another app) is left alone."""
        with self.writing() as cur:
            return interrupt_dead(
                cur,
                "jobs",
                f"status IN {LIVE}",
                "status = 'interrupted', message = 'the app stopped while this job ran', "
                "finished_at = coalesce(finished_at, updated_at)",
                [],
                alive_pid,
            )

    def _job_rows(self, clause: str, params: list[Any]) -> list[dict[str, Any]]:
        with self.cursor() as cur:
            rows = cur.execute(f"SELECT {', '.join(JOB_COLUMNS)} FROM jobs {clause}", params).fetchall()
        return [
            {
                name: (json.loads(value) if name == "cost" and value else value)
                for name, value in zip(JOB_COLUMNS, row, strict=True)
            }
            for row in rows
        ]


def interrupt_dead(cur: Any, table: str, live: str, update: str, update_params: list[Any], alive_pid: int) -> int:
    """Set ``update`` on the rows of ``table`` that are ``live`` (a SQL condition) but whose process is gone (a
    killed process never closes its rows); ``alive_pid`` (this process) is left alone. Returns how many."""
    pids = [pid for (pid,) in cur.execute(f"SELECT DISTINCT pid FROM {table} WHERE {live} AND pid <> ?",
                                          [alive_pid]).fetchall()]  # fmt: skip
    gone = [pid for pid in pids if not process_alive(pid)]
    if not gone:
        return 0
    marks = ", ".join("?" for _ in gone)
    where = f"{live} AND pid IN ({marks})"
    stale = cur.execute(f"SELECT count(*) FROM {table} WHERE {where}", gone).fetchone()[0]
    cur.execute(f"UPDATE {table} SET {update} WHERE {where}", [*update_params, *gone])
    return int(stale)


def process_alive(pid: int | None) -> bool:
    """Whether a process with this id runs on this machine (a job's process that is gone never ends its job)."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True
