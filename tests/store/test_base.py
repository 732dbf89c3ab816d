"""The connection, schema versions and migrations, lock errors and the store's path."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from rredcot_viz.errors import RredcotError
from rredcot_viz.store import SCHEMA_VERSION, Store, StoreLockedError, default_store_path
from rredcot_viz.store.base import MIGRATIONS


def test_schema_is_created_and_versioned(store, tmp_path):
    assert store.schema_version() == SCHEMA_VERSION == len(MIGRATIONS)
    expected = {"traces", "token_stats", "scores", "rollouts", "results", "runs", "contexts", "train_metrics"}
    assert expected | {"train_rollouts", "jobs"} <= set(store.tables())
    store.close()
    again = Store(tmp_path / "store.duckdb")  # reopening runs no migration twice
    assert again.schema_version() == SCHEMA_VERSION
    with again.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    again.close()


def test_an_old_file_is_migrated_to_the_current_version(tmp_path):
    import duckdb

    path = tmp_path / "v1.duckdb"
    old = duckdb.connect(str(path))  # a file written by the first release: version 1, no train or job tables
    old.execute("CREATE TABLE schema_version (version INTEGER)")
    for statement in MIGRATIONS[0]:
        old.execute(statement)
    old.execute("INSERT INTO schema_version VALUES (1)")
    old.close()
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    assert {"train_metrics", "train_rollouts", "jobs"} <= set(store.tables())
    store.close()


def test_a_file_newer_than_the_code_is_refused(tmp_path):
    path = tmp_path / "new.duckdb"
    store = Store(path)
    with store.cursor() as cur:
        cur.execute("INSERT INTO schema_version VALUES (?)", [SCHEMA_VERSION + 1])
    store.close()
    with pytest.raises(RredcotError, match=f"schema version {SCHEMA_VERSION + 1}, newer than this code"):
        Store(path)


def test_another_process_holding_the_file_is_named(tmp_path):
    path = tmp_path / "held.duckdb"
    holder = Store(path)
    code = f"from rredcot_viz.store import Store; Store({str(path)!r})"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    holder.close()
    assert result.returncode != 0
    assert "StoreLockedError" in result.stderr and "is open in process" in result.stderr
    assert "RREDCOT_STORE" in result.stderr


def test_lock_error_type_in_process(tmp_path, monkeypatch):
    import duckdb

    def refuse(path):
        raise duckdb.IOException(
            'IO Error: Could not set lock on file "x": Conflicting lock is held in /usr/bin/python3 (PID 4242).'
        )

    monkeypatch.setattr(duckdb, "connect", refuse)
    with pytest.raises(StoreLockedError, match=r"open in process 4242 \(/usr/bin/python3\)"):
        Store(tmp_path / "x.duckdb")


def test_the_path_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RREDCOT_STORE", str(tmp_path / "elsewhere" / "other.duckdb"))
    assert default_store_path() == tmp_path / "elsewhere" / "other.duckdb"
    store = Store()  # the parent folder is created
    assert store.path == tmp_path / "elsewhere" / "other.duckdb" and store.path.exists()
    store.close()


def test_raw_queries_are_private(store):
    """SQL stays in the store: there is no public ``query``; the private one serves the named queries."""
    assert not hasattr(store, "query")
    frame = store._query("SELECT 1 + ? AS two", [1])
    assert isinstance(frame, pd.DataFrame) and frame["two"].tolist() == [2]
