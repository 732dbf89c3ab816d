"""The store's connection and schema: one DuckDB connection per process, a cursor per call, versioned migrations.

DuckDB allows one writer process per file: a process holds one connection and hands out cursors (one per
thread); if another process holds the file, opening it fails with a message naming that process.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rredcot_viz.errors import RredcotError
from rredcot_viz.paths import data_dir

if TYPE_CHECKING:
    import pandas as pd

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


class StoreLockedError(RredcotError):
    """Another process holds the DuckDB file."""


def default_store_path() -> Path:
    """``$RREDCOT_STORE`` if set (a second app or CLI run needs a file of its own), else the data dir's file."""
    return Path(os.environ.get("RREDCOT_STORE", data_dir() / "rredcot.duckdb"))


class StoreBase:
    """One DuckDB connection for the process; every call uses a cursor of its own (thread-safe)."""

    def __init__(self, path: str | Path | None = None) -> None:
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
        self._write_lock = threading.Lock()
        self.migrate()

    @contextmanager
    def cursor(self) -> Iterator[Any]:
        """A cursor of the shared connection, closed on exit (DuckDB connections are not thread-safe, cursors are)."""
        cursor = self._connection.cursor()
        try:
            yield cursor
        finally:
            cursor.close()

    @contextmanager
    def writing(self) -> Iterator[Any]:
        """A cursor for a write that two threads may make at once (a job and the page that watches it): DuckDB
        fails the second of two concurrent inserts of one key even with OR IGNORE / OR REPLACE, so they take turns."""
        with self._write_lock, self.cursor() as cursor:
            yield cursor

    def close(self) -> None:
        self._connection.close()

    def schema_version(self) -> int:
        """The version the file is at (0 for a new file)."""
        with self.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
            row = cur.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def migrate(self) -> None:
        """Apply the migrations the file lacks, each in one transaction; refuse a file newer than this code."""
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

    def _query(self, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
        """A pandas DataFrame of a read query; private so that SQL stays in the store's named queries."""
        with self.cursor() as cur:
            return cur.execute(sql, params or []).df()
