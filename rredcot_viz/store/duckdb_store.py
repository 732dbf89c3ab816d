"""The DuckDB store: traces, token stats, scores, rollouts, attribution results and run metadata.

Everything expensive is looked up by content key before it is computed (the store is the persistent
backend of the engine's cache), so revisiting a trace or a setting is instant, across restarts.

DuckDB allows one writer process per file: a process holds one connection and hands out cursors (one per
thread); if another process holds the file, opening it fails with a message naming that process.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from rredcot_viz.errors import RredcotError
from rredcot_viz.paths import data_dir
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import Rollout, TokenStats

SCHEMA_VERSION = 3

# Each migration brings the schema from version i to i + 1; append, never edit a released one.
MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE traces (
            trace_hash VARCHAR PRIMARY KEY, trace_id VARCHAR, source VARCHAR, question VARCHAR,
            outcome DOUBLE, n_chars INTEGER, data JSON, collection VARCHAR, created_at DOUBLE)""",
        """CREATE TABLE contexts (
            context_key VARCHAR PRIMARY KEY, trace_hash VARCHAR, model_name VARCHAR, model_fingerprint VARCHAR,
            prompt_text VARCHAR, created_at DOUBLE)""",
        """CREATE TABLE token_stats (
            context_key VARCHAR PRIMARY KEY, logprobs DOUBLE[], entropies DOUBLE[], created_at DOUBLE)""",
        """CREATE TABLE scores (
            context_key VARCHAR, series_key VARCHAR, prefix INTEGER, logprobs DOUBLE[], created_at DOUBLE,
            PRIMARY KEY (context_key, series_key, prefix))""",
        """CREATE TABLE rollouts (
            context_key VARCHAR, sampling_key VARCHAR, prefix INTEGER, idx INTEGER, seed BIGINT, text VARCHAR,
            answer VARCHAR, correct BOOLEAN, finish_reason VARCHAR, tokens INTEGER, created_at DOUBLE,
            PRIMARY KEY (context_key, sampling_key, prefix, idx))""",
        """CREATE TABLE results (
            result_key VARCHAR PRIMARY KEY, context_key VARCHAR, kind VARCHAR, method VARCHAR, settings JSON,
            payload JSON, cost JSON, created_at DOUBLE)""",
        """CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY, kind VARCHAR, model_name VARCHAR, model_fingerprint VARCHAR,
            quantization VARCHAR, dtype VARCHAR, settings JSON, seed BIGINT, status VARCHAR, summary JSON,
            cost JSON, created_at DOUBLE, finished_at DOUBLE)""",
    ],
    [
        """CREATE TABLE train_metrics (
            run_id VARCHAR, step INTEGER, metrics JSON, created_at DOUBLE, PRIMARY KEY (run_id, step))""",
        """CREATE TABLE train_rollouts (
            run_id VARCHAR, step INTEGER, idx INTEGER, payload JSON, PRIMARY KEY (run_id, step, idx))""",
    ],
    [
        """CREATE TABLE jobs (
            job_id VARCHAR PRIMARY KEY, kind VARCHAR, job_key VARCHAR, label VARCHAR, status VARCHAR, done BIGINT,
            total BIGINT, unit VARCHAR, message VARCHAR, error VARCHAR, result VARCHAR, cost JSON, pid INTEGER,
            created_at DOUBLE, started_at DOUBLE, finished_at DOUBLE, updated_at DOUBLE)""",
    ],
]
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
EXPORT_FORMATS = ("parquet", "csv", "jsonl")


class StoreLockedError(RredcotError):
    """Another process holds the DuckDB file."""


def default_store_path() -> Path:
    import os

    return Path(os.environ.get("RREDCOT_STORE", data_dir() / "rredcot.duckdb"))


class Store:
    """One DuckDB connection for the process; every call uses a cursor of its own (thread-safe)."""

    def __init__(self, path: str | Path | None = None):
        import duckdb

        self.path = Path(path) if path is not None else default_store_path()
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._connection = duckdb.connect(str(self.path))
        except duckdb.IOException as error:
            holder = re.search(r"held in (\S+) \(PID (\d+)\)", str(error))
            who = f"process {holder.group(2)} ({holder.group(1)})" if holder else "another process"
            raise StoreLockedError(
                f"the store {self.path} is open in {who}; DuckDB allows one writer per file. Stop that process "
                "(e.g. another app or CLI run), or use another store file with RREDCOT_STORE=/path/other.duckdb"
            ) from None
        self._lock = threading.Lock()
        self.migrate()

    @contextmanager
    def cursor(self) -> Iterator[Any]:
        cursor = self._connection.cursor()
        try:
            yield cursor
        finally:
            cursor.close()

    def close(self) -> None:
        self._connection.close()

    # ------------------------------------------------------------------ schema
    def schema_version(self) -> int:
        with self.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
            row = cur.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def migrate(self) -> None:
        with self._lock:
            current = self.schema_version()
            if current > SCHEMA_VERSION:
                raise RredcotError(
                    f"the store {self.path} has schema version {current}, newer than this code ({SCHEMA_VERSION}); "
                    "update rredcot_viz or open another store"
                )
            with self.cursor() as cur:
                for version in range(current, SCHEMA_VERSION):
                    cur.execute("BEGIN")
                    for statement in MIGRATIONS[version]:
                        cur.execute(statement)
                    cur.execute("INSERT INTO schema_version VALUES (?)", [version + 1])
                    cur.execute("COMMIT")

    def tables(self) -> list[str]:
        with self.cursor() as cur:
            return [row[0] for row in cur.execute("SELECT table_name FROM information_schema.tables").fetchall()]

    # ------------------------------------------------------------------ traces
    def put_traces(self, traces: list[Trace], collection: str = "user") -> int:
        rows = [
            (
                t.content_hash,
                t.trace_id,
                t.source,
                t.question,
                t.outcome,
                len(t.cot),
                json.dumps(t.to_dict()),
                collection,
                time.time(),
            )
            for t in traces
        ]
        with self.cursor() as cur:
            cur.executemany("INSERT OR IGNORE INTO traces VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        return len(rows)

    def trace(self, trace_hash: str) -> Trace | None:
        with self.cursor() as cur:
            row = cur.execute("SELECT data FROM traces WHERE trace_hash = ?", [trace_hash]).fetchone()
        return Trace.from_dict(json.loads(row[0])) if row else None

    def traces(self, collection: str | None = None, limit: int | None = None) -> list[Trace]:
        query = "SELECT data FROM traces" + (" WHERE collection = ?" if collection else "") + " ORDER BY created_at"
        query += f" LIMIT {int(limit)}" if limit else ""
        with self.cursor() as cur:
            rows = cur.execute(query, [collection] if collection else []).fetchall()
        return [Trace.from_dict(json.loads(r[0])) for r in rows]

    def collections(self) -> dict[str, int]:
        with self.cursor() as cur:
            rows = cur.execute("SELECT collection, count(*) FROM traces GROUP BY collection ORDER BY 1").fetchall()
        return {name: int(count) for name, count in rows}

    def put_context(self, context_key: str, trace_hash: str, model_name: str, fingerprint: str, prompt: str) -> None:
        with self.cursor() as cur:
            cur.execute(
                "INSERT OR IGNORE INTO contexts VALUES (?, ?, ?, ?, ?, ?)",
                [context_key, trace_hash, model_name, fingerprint, prompt, time.time()],
            )

    # ------------------------------------------------------------------ cache backend (scoring.cache.CacheBackend)
    def load_stats(self, context_key: str) -> TokenStats | None:
        with self.cursor() as cur:
            row = cur.execute(
                "SELECT logprobs, entropies FROM token_stats WHERE context_key = ?", [context_key]
            ).fetchone()
        return TokenStats(np.array(row[0]), np.array(row[1])) if row else None

    def save_stats(self, context_key: str, stats: TokenStats) -> None:
        with self.cursor() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO token_stats VALUES (?, ?, ?, ?)",
                [context_key, stats.logprobs.tolist(), stats.entropies.tolist(), time.time()],
            )

    def load_scores(self, context_key: str, series_key: str) -> dict[int, np.ndarray]:
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT prefix, logprobs FROM scores WHERE context_key = ? AND series_key = ?",
                [context_key, series_key],
            ).fetchall()
        return {int(prefix): np.array(logprobs) for prefix, logprobs in rows}

    def save_scores(self, context_key: str, series_key: str, scores: dict[int, np.ndarray]) -> None:
        now = time.time()
        rows = [(context_key, series_key, int(p), lp.tolist(), now) for p, lp in scores.items()]
        with self.cursor() as cur:
            cur.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?)", rows)

    def load_rollouts(self, context_key: str, sampling_key: str, prefix: int) -> list[Rollout]:
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT prefix, idx, seed, text, answer, correct, finish_reason, tokens FROM rollouts "
                "WHERE context_key = ? AND sampling_key = ? AND prefix = ? ORDER BY idx",
                [context_key, sampling_key, prefix],
            ).fetchall()
        return [Rollout(*row) for row in rows]

    def save_rollouts(self, context_key: str, sampling_key: str, rollouts: list[Rollout]) -> None:
        now = time.time()
        rows = [
            (
                context_key,
                sampling_key,
                r.prefix,
                r.index,
                r.seed,
                r.text,
                r.answer,
                r.correct,
                r.finish_reason,
                r.tokens,
                now,
            )
            for r in rollouts
        ]
        with self.cursor() as cur:
            cur.executemany("INSERT OR REPLACE INTO rollouts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    # ------------------------------------------------------------------ results and runs
    def put_result(
        self, result_key: str, context_key: str, kind: str, method: str, settings: dict, payload: dict, cost: dict
    ) -> None:
        with self.cursor() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    result_key,
                    context_key,
                    kind,
                    method,
                    json.dumps(settings, default=str),
                    json.dumps(payload),
                    json.dumps(cost),
                    time.time(),
                ],
            )

    def result(self, result_key: str) -> dict[str, Any] | None:
        with self.cursor() as cur:
            row = cur.execute("SELECT payload FROM results WHERE result_key = ?", [result_key]).fetchone()
        return json.loads(row[0]) if row else None

    def put_run(
        self,
        run_id: str,
        kind: str,
        model: dict[str, Any],
        settings: dict[str, Any],
        seed: int | None,
        status: str = "running",
    ) -> None:
        with self.cursor() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, NULL)",
                [
                    run_id,
                    kind,
                    model.get("name"),
                    model.get("fingerprint"),
                    model.get("quantization"),
                    model.get("dtype"),
                    json.dumps(settings, default=str),
                    seed,
                    status,
                    time.time(),
                ],
            )

    def finish_run(self, run_id: str, status: str, summary: dict[str, Any], cost: dict[str, Any]) -> None:
        with self.cursor() as cur:
            cur.execute(
                "UPDATE runs SET status = ?, summary = ?, cost = ?, finished_at = ? WHERE run_id = ?",
                [status, json.dumps(summary, default=str), json.dumps(cost), time.time(), run_id],
            )

    # ------------------------------------------------------------------ training runs
    def put_train_metrics(self, run_id: str, step: int, metrics: dict[str, Any]) -> None:
        with self.cursor() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO train_metrics VALUES (?, ?, ?, ?)",
                [run_id, step, json.dumps(metrics, default=float), time.time()],
            )

    def train_metrics(self, run_ids: list[str]):
        """One row per (run, step) with the metrics as columns."""
        import pandas as pd

        if not run_ids:
            return pd.DataFrame()
        marks = ", ".join("?" for _ in run_ids)
        with self.cursor() as cur:
            rows = cur.execute(
                f"SELECT run_id, step, metrics FROM train_metrics WHERE run_id IN ({marks}) ORDER BY run_id, step",
                run_ids,
            ).fetchall()
        return pd.DataFrame([{"run_id": r, **json.loads(m), "step": s} for r, s, m in rows])

    def put_train_rollouts(self, run_id: str, step: int, records: list[dict[str, Any]]) -> None:
        rows = [(run_id, step, i, json.dumps(record, default=float)) for i, record in enumerate(records)]
        with self.cursor() as cur:
            cur.executemany("INSERT OR REPLACE INTO train_rollouts VALUES (?, ?, ?, ?)", rows)

    def train_rollouts(self, run_id: str, step: int) -> list[dict[str, Any]]:
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT payload FROM train_rollouts WHERE run_id = ? AND step = ? ORDER BY idx", [run_id, step]
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def train_rollout_steps(self, run_id: str) -> list[int]:
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT DISTINCT step FROM train_rollouts WHERE run_id = ? ORDER BY step", [run_id]
            ).fetchall()
        return [int(r[0]) for r in rows]

    # ------------------------------------------------------------------ background jobs (rredcot_viz.jobs)
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
        """Mark jobs left queued or running by another (dead) process as interrupted; returns how many.
        DuckDB admits one process per file, so a job recorded by another pid cannot still be running."""
        with self.cursor() as cur:
            stale = cur.execute(
                "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running') AND pid <> ?", [alive_pid]
            ).fetchone()[0]
            cur.execute(
                "UPDATE jobs SET status = 'interrupted', message = 'the app stopped while this job ran', "
                "finished_at = coalesce(finished_at, updated_at) WHERE status IN ('queued', 'running') AND pid <> ?",
                [alive_pid],
            )
        return int(stale)

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

    # ------------------------------------------------------------------ queries and exports
    def query(self, sql: str, params: list[Any] | None = None):
        """A pandas DataFrame of a read query."""
        with self.cursor() as cur:
            return cur.execute(sql, params or []).df()

    def export(self, source: str, path: str | Path, fmt: str | None = None) -> Path:
        """Write a table name or a SELECT query to parquet, CSV or JSONL (format from the suffix)."""
        path = Path(path)
        fmt = fmt or path.suffix.lstrip(".")
        if fmt not in EXPORT_FORMATS:
            raise RredcotError(f"export format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
        if source in self.tables():
            relation = f"SELECT * FROM {source}"
        elif source.lstrip().lower().startswith("select"):
            relation = source
        else:
            raise RredcotError(f"{source!r} is neither a table ({', '.join(self.tables())}) nor a SELECT query")
        options = {"parquet": "FORMAT parquet", "csv": "FORMAT csv, HEADER", "jsonl": "FORMAT json"}[fmt]
        with self.cursor() as cur:
            cur.execute(f"COPY ({relation}) TO '{str(path).replace(chr(39), chr(39) * 2)}' ({options})")
        return path
