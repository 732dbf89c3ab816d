"""The connection, schema versions and migrations, lock errors and the store's path."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from rredcot_viz.errors import RredcotError
from rredcot_viz.store import SCHEMA_VERSION, Store, StoreLockedError, default_store_path
from rredcot_viz.store.base import MIGRATIONS, StoreDamagedError
from rredcot_viz.traces.io import sample_traces


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


def damaged_copies(tmp_path) -> list:
    """A store with 2 MB of traces, cut to half its size, and with a third of it overwritten by zeros."""
    path = tmp_path / "whole.duckdb"
    store = Store(path)
    with store.cursor() as cur:
        cur.execute(
            "INSERT INTO traces SELECT md5(i::VARCHAR), 't' || i, 'test', repeat('question ', 40) || i, 1, 900, "
            "json_object('cot', repeat('step ' || i || '. ', 90)), 'big', 0 FROM range(3000) AS r(i)"
        )
    store.close()
    size = path.stat().st_size
    cut, zeroed = tmp_path / "cut.duckdb", tmp_path / "zeroed.duckdb"
    cut.write_bytes(path.read_bytes()[: size // 2])
    data = path.read_bytes()
    zeroed.write_bytes(data[: size // 3] + bytes(size // 3) + data[2 * (size // 3) :])
    return [cut, zeroed]


def test_a_damaged_file_is_a_message(tmp_path):
    """A store cut to half its size raised DuckDB's IOException (a traceback in every command)."""
    for path in damaged_copies(tmp_path):
        with pytest.raises(StoreDamagedError, match=f"the store {path} is damaged .*restore it from a backup"):
            Store(path).traces("big")


def test_a_file_with_tables_but_no_schema_version_is_refused(tmp_path):
    """The first migration's CREATE TABLE traces collided with the file's own table: a CatalogException."""
    import duckdb

    for table in ("traces", "measurements"):
        path = tmp_path / f"{table}.duckdb"
        other = duckdb.connect(str(path))
        other.execute(f"CREATE TABLE {table} (a INTEGER)")
        other.close()
        with pytest.raises(StoreDamagedError, match=rf"has tables \({table}\) but no schema version, so it was not"):
            Store(path)
        other = duckdb.connect(str(path))
        assert [row[0] for row in other.execute("SHOW TABLES").fetchall()] == [table]  # nothing added to it
        other.close()


def test_processes_take_turns_with_the_file(tmp_path):
    """An idle process lets the file go, so another one reads and writes it while the first still runs."""
    path = tmp_path / "shared.duckdb"
    mine = Store(path, linger=0.05)
    mine.put_traces(sample_traces()[:1], "mine")
    code = (
        "import sys; from rredcot_viz.store import Store; from rredcot_viz.traces.io import sample_traces\n"
        f"other = Store({str(path)!r}); other.put_traces(sample_traces()[1:3], 'theirs'); print(other.collections())"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "{'mine': 1, 'theirs': 2}"
    assert mine.collections() == {"mine": 1, "theirs": 2}  # and this process sees the other's write
    mine.close()


def test_a_process_holding_the_file_is_waited_for_then_named(tmp_path):
    path = tmp_path / "held.duckdb"
    holder = Store(path)
    code = f"from rredcot_viz.store import Store; Store({str(path)!r}).collections(); print('opened')"
    env = {**os.environ, "RREDCOT_STORE_WAIT": "0.5"}
    with holder.hold():
        refused = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert refused.returncode != 0
    assert "StoreLockedError" in refused.stderr and f"was held by process {os.getpid()} (" in refused.stderr
    assert "for more than 0.5 s" in refused.stderr and "RREDCOT_STORE=" in refused.stderr

    env["RREDCOT_STORE_WAIT"] = "60"  # a holder that lets go in time is waited for
    release = threading.Event()

    def hold_a_while() -> None:
        with holder.hold():
            release.wait(30)
            time.sleep(1.0)

    thread = threading.Thread(target=hold_a_while)
    thread.start()
    waiter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    release.set()
    assert waiter.wait(timeout=120) == 0 and waiter.stdout.read().strip() == "opened"
    thread.join()
    holder.close()


def test_a_process_calling_constantly_lets_a_waiting_one_in(tmp_path):
    """Calls closer together than ``linger`` would keep the file for good; a waiting process's mark makes the busy
    one let go at its next idle moment (without it, the waiter below timed out)."""
    path = tmp_path / "busy.duckdb"
    busy = Store(path)
    stop = threading.Event()

    def poll() -> None:  # a page polling a job, a job writing score chunks
        while not stop.is_set():
            busy.collections()
            time.sleep(0.05)

    thread = threading.Thread(target=poll)
    thread.start()
    code = f"from rredcot_viz.store import Store; Store({str(path)!r}).put_traces([], 'none'); print('in')"
    env = {**os.environ, "RREDCOT_STORE_WAIT": "20"}
    try:
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    finally:
        stop.set()
        thread.join()
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "in" and not list(tmp_path.glob("busy.duckdb.waiting-*"))  # its mark is gone
    busy.close()


def test_lock_error_type_in_process(tmp_path, monkeypatch):
    import duckdb

    store = Store(tmp_path / "x.duckdb", wait=0.2)
    store.close()

    def refuse(path):
        raise duckdb.IOException(
            'IO Error: Could not set lock on file "x": Conflicting lock is held in /usr/bin/python3 (PID 4242).'
        )

    monkeypatch.setattr(duckdb, "connect", refuse)
    with pytest.raises(StoreLockedError, match=r"held by process 4242 \(/usr/bin/python3\) for more than 0.2 s"):
        store.collections()

    def broken(path):
        raise duckdb.IOException("IO Error: Cannot open file: Permission denied")

    monkeypatch.setattr(duckdb, "connect", broken)
    with pytest.raises(RredcotError, match="cannot be opened: IO Error: Cannot open file: Permission denied"):
        store.collections()


def test_the_file_is_shared_by_a_burst_of_calls_and_let_go_after_it(tmp_path):
    store = Store(tmp_path / "s.duckdb", linger=0.2)
    store.close()  # let go of the open the migration made
    opened = store.opened
    for _ in range(5):  # a page rerun's queries: one open between them
        store.collections()
    assert store.opened == opened + 1 and store._connection is not None
    deadline = time.time() + 10
    while store._connection is not None and time.time() < deadline:
        time.sleep(0.05)
    assert store._connection is None  # let go once idle
    with store.hold():  # a held block keeps one open across its calls
        store.collections()
        time.sleep(0.4)
        store.tables()
    assert store.opened == opened + 2
    store.close()


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


def test_a_process_waiting_for_the_store_names_the_command_that_holds_it(tmp_path, monkeypatch, caplog):
    """While an import held the store, another command failed with "held by process N (python3) ... another tool
    or an older version": the process was this project's own import, which the message did not say."""
    from rredcot_viz.store import base

    path = tmp_path / "busy.duckdb"
    Store(path).close()
    holder = tmp_path / "import_big.py"
    holder.write_text(
        "import sys\nfrom rredcot_viz.store import Store\nstore = Store(sys.argv[1])\n"
        "with store.hold():\n    print('held', flush=True)\n    sys.stdin.read()\n"
    )
    child = subprocess.Popen(
        [sys.executable, str(holder), str(path), "--collection", "B"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout.readline().strip() == "held"
        monkeypatch.setattr(base, "TELL_AFTER_S", 0.2)
        with pytest.raises(StoreLockedError) as refused:
            Store(path, wait=0.6)
    finally:
        child.communicate("", timeout=60)
    command = f"running `{Path(sys.executable).name} {holder} {path} --collection B`"
    message = str(refused.value)
    assert re.search(rf"held by process {child.pid} \(\S+\) {re.escape(command)} for more than 0.6 s", message)
    assert "at a stretch: let it finish" in message
    assert "another tool" not in message and f"process {os.getpid()}" not in message
    assert f"{command} is using..." in caplog.text  # said while it waited
