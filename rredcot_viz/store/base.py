"""The store's connection and schema: the DuckDB file is held only while it is used, so processes share it.

DuckDB lets one process at a time open a file for writing. A process therefore opens the file for a burst of
work (a cursor per call, shared by its threads), keeps it open ``linger`` seconds after the last call (a page
rerun's queries share one open, which costs about 20 ms of CPU), and then closes it, so that another process
(the app while ``train`` runs in a terminal, ``export`` beside them) gets its turn. A process that finds the file
taken retries with backoff for up to ``wait`` seconds (``$RREDCOT_STORE_WAIT``, default 60) before it gives up
with a message naming the holder; while it waits it leaves a mark beside the file, and a holder that sees the
mark closes the file at its next idle moment (within ``WATCH_S``, not after ``linger``) and waits ``YIELD_S``
before opening it again, so a process that calls the store constantly (a job writing score chunks, a page
polling) cannot starve the other. ``hold()`` keeps the file for a block of calls that belong together. A
waiting process names the command it waits for (from ``/proc``), not just a process id.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import shlex
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rredcot_viz.errors import RredcotError
from rredcot_viz.paths import data_dir

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

SCHEMA_VERSION = 6

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
    ["ALTER TABLE contexts ADD COLUMN quantization VARCHAR"],  # none, 8bit, 4bit-nf4, ...; NULL: not recorded
    # A trace is stored once per content but belongs to every collection it was put in, under the id it had
    # there; traces.collection stays as the collection it was first stored in.
    [
        """CREATE TABLE memberships (
            trace_hash VARCHAR, collection VARCHAR, trace_id VARCHAR, created_at DOUBLE,
            PRIMARY KEY (trace_hash, collection))""",
        """INSERT INTO memberships SELECT trace_hash, collection, trace_id, created_at FROM traces
            WHERE collection IS NOT NULL""",
    ],
    # The process that runs a run, so a run whose process died (kill -9, a power cut) is closed as interrupted.
    ["ALTER TABLE runs ADD COLUMN pid INTEGER"],
]


class StoreLockedError(RredcotError):
    """Another process held the DuckDB file for longer than this one would wait."""


class StoreDamagedError(RredcotError):
    """The DuckDB file cannot be read (cut short, overwritten) or is not a store of this project."""


def default_store_path() -> Path:
    """``$RREDCOT_STORE`` if set, else the data dir's file."""
    return Path(os.environ.get("RREDCOT_STORE", data_dir() / "rredcot.duckdb"))


def default_wait() -> float:
    """Seconds to wait for a store another process holds (``$RREDCOT_STORE_WAIT``, default 60)."""
    return float(os.environ.get("RREDCOT_STORE_WAIT", "60"))


LINGER_S = 1.0
"""How long an idle process keeps the file open when nobody else waits for it: a page that reruns every second
and a job writing a chunk of scores every second or so then open it once, not once per call (an open costs
about 20 ms of CPU). A process that waits is let in within ``WATCH_S`` of the holder's last call."""
WATCH_S = 0.05
"""How often an idle holder looks for a waiting process."""
YIELD_S = 0.1
"""How long a process that just let the file go to a waiting one waits before taking it again (the waiter
retries at least four times in that time)."""
WAITING = ".waiting-"
"""A process waiting for the file touches ``<store file>.waiting-<pid>`` beside it while it waits."""
_OPEN_STORES: weakref.WeakSet[StoreBase] = weakref.WeakSet()
TELL_AFTER_S = 2.0
"""A process that has waited this long for the file says which command it waits for."""
COMMAND_CHARS = 300


@atexit.register
def close_open_stores() -> None:
    """Close every idle connection before the interpreter tears threads down (registered before any job manager,
    so it runs after their shutdown)."""
    for store in list(_OPEN_STORES):
        store.close()


class StoreBase:
    """The store's file, opened on demand and shared by this process's threads; every call uses a cursor of its
    own (thread-safe), and the file is closed ``linger`` seconds after the last one."""

    def __init__(self, path: str | Path | None = None, wait: float | None = None, linger: float = LINGER_S) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self.wait = default_wait() if wait is None else wait
        self.linger = linger
        self._memory = str(self.path) == ":memory:"  # an in-memory database lives as long as its connection
        if not self._memory:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._connection: Any = None
        self._users = 0  # cursors (and holds) open now
        self._idle_since = 0.0
        self._closer: threading.Thread | None = None
        self._state = threading.Lock()  # guards the four fields above
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.opened = 0  # how many times the file was opened (a bench reads it)
        _OPEN_STORES.add(self)
        self.migrate()

    # ------------------------------------------------------------------ the file, held while used
    def _open(self) -> Any:
        """A connection to the file, waiting while another process holds it: a waiting process leaves a mark
        beside the file (``_others_waiting``), so a busy holder lets go at its next idle moment."""
        import duckdb

        if not self._memory and self._others_waiting():
            time.sleep(YIELD_S)  # another process waits: let it in before taking the file again
        started = time.monotonic()
        delay, told = 0.005, False
        try:
            while True:
                try:
                    connection = duckdb.connect(str(self.path))
                    self.opened += 1
                    return connection
                except duckdb.IOException as error:
                    holder = _holder(str(error))
                    if holder is None:
                        raise self.damage(error) or RredcotError(
                            f"the store {self.path} cannot be opened: {error}"
                        ) from None
                    pid, name = holder
                    command = _command_of(pid)
                    who = f"process {pid} ({name})" if pid else "another process"
                    who += f" running `{command}`" if command else ""
                    waited = time.monotonic() - started
                    if waited >= self.wait:
                        raise StoreLockedError(self._locked_message(who, command is not None)) from None
                    if not told and waited > TELL_AFTER_S:
                        log.warning("waiting for the store %s, which %s is using...", self.path, who)
                        told = True
                    self._mark_waiting()
                    time.sleep(min(delay, self.wait - waited))
                    delay = min(delay * 2, YIELD_S / 4)
        finally:
            self._waiting_mark.unlink(missing_ok=True)

    def _locked_message(self, who: str, known: bool) -> str:
        """Why the file could not be had, and what to do. rredcot_viz processes take turns with the file (a long
        write lets others in between its chunks), so a holder whose command is ``known`` is in one long step;
        one the system does not name is likely another tool or an older version."""
        fixes = "wait longer (RREDCOT_STORE_WAIT=600), or use another store file (RREDCOT_STORE=/path/other.duckdb)"
        if known:
            return (
                f"the store {self.path} was held by {who} for more than {self.wait:g} s at a stretch: let it "
                f"finish or stop it, {fixes}"
            )
        return (
            f"the store {self.path} was held by {who} for more than {self.wait:g} s. rredcot_viz processes take "
            "turns with the file, so a process that keeps it this long is another tool (e.g. a duckdb shell) or an "
            f"older version: stop it, {fixes}"
        )

    @property
    def _waiting_mark(self) -> Path:
        return self.path.with_name(f"{self.path.name}{WAITING}{os.getpid()}")

    def _mark_waiting(self) -> None:
        with contextlib.suppress(OSError):  # a folder it cannot write: the holder's linger still lets it in
            self._waiting_mark.touch()

    def _others_waiting(self) -> bool:
        """Whether another process is waiting for the file (its mark was touched in the last seconds)."""
        prefix, mine, now = f"{self.path.name}{WAITING}", self._waiting_mark.name, time.time()
        try:
            with os.scandir(self.path.parent) as entries:
                return any(
                    entry.name.startswith(prefix) and entry.name != mine and now - entry.stat().st_mtime < 3
                    for entry in entries
                )
        except OSError:
            return False

    def _acquire(self) -> Any:
        with self._state:
            if self._connection is None:
                self._connection = self._open()
            self._users += 1
            return self._connection

    def _release(self) -> None:
        with self._state:
            self._users -= 1
            if self._users or self._memory:
                return
            self._idle_since = time.monotonic()
            if self.linger <= 0 or self._others_waiting():
                self._close_now()
            elif self._closer is None:
                self._closer = threading.Thread(target=self._close_when_idle, name="rredcot-store", daemon=True)
                self._closer.start()

    def _close_when_idle(self) -> None:
        """Close the file once it has been idle ``linger`` seconds, or at once when another process waits for it
        (one such thread while the file is open, looking every ``WATCH_S``)."""
        while True:
            with self._state:
                if self._connection is None:
                    self._closer = None
                    return
                idle = time.monotonic() - self._idle_since
                if self._users == 0 and (idle >= self.linger or self._others_waiting()):
                    self._close_now()
                    self._closer = None
                    return
            time.sleep(WATCH_S)

    def _close_now(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Keep the file open for the block (calls that belong together, or a reader that must not wait)."""
        self._acquire()
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def cursor(self) -> Iterator[Any]:
        """A cursor of this process's connection, closed on exit (connections are not thread-safe, cursors are)."""
        import duckdb

        connection = self._acquire()
        try:
            cursor = connection.cursor()
            try:
                yield cursor
            except duckdb.Error as error:
                damage = self.damage(error)
                if damage is None:
                    raise
                raise damage from None
            finally:
                cursor.close()
        finally:
            self._release()

    def damage(self, error: Exception) -> StoreDamagedError | None:
        """What to tell the user when DuckDB's ``error`` says the store's own file is damaged, else None."""
        text = str(error)
        if str(self.path) not in text and "corrupt" not in text.lower():
            return None
        return StoreDamagedError(
            f"the store {self.path} is damaged ({text.splitlines()[0]}): restore it from a backup, or use "
            "another store file (--store /path/other.duckdb or RREDCOT_STORE)"
        )

    @contextmanager
    def writing(self) -> Iterator[Any]:
        """A cursor for a write that two threads may make at once (a job and the page that watches it): DuckDB
        fails the second of two concurrent inserts of one key even with OR IGNORE / OR REPLACE, so they take turns."""
        with self._write_lock, self.cursor() as cursor:
            yield cursor

    def close(self) -> None:
        """Let the file go now (it reopens on the next call); a call in flight keeps it until it ends."""
        with self._state:
            if self._users == 0:
                self._close_now()

    # ------------------------------------------------------------------ schema
    def schema_version(self) -> int:
        """The version the file is at (0 for a new file)."""
        if "schema_version" not in self.tables():
            return 0
        with self.cursor() as cur:
            row = cur.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def migrate(self) -> None:
        """Apply the migrations the file lacks, each in one transaction; refuse a file newer than this code, and
        one with tables but no version (another program's, which the first migration would collide with)."""
        with self._lock, self.hold():
            current = self.schema_version()
            if current > SCHEMA_VERSION:
                raise RredcotError(
                    f"the store {self.path} has schema version {current}, newer than this code ({SCHEMA_VERSION}); "
                    "update rredcot_viz or open another store"
                )
            foreign = sorted(set(self.tables()) - {"schema_version"}) if current == 0 else []
            if foreign:
                raise StoreDamagedError(
                    f"the store {self.path} has tables ({', '.join(foreign[:5])}) but no schema version, so it was "
                    "not made by rredcot_viz: give another store file (--store /path/new.duckdb or RREDCOT_STORE)"
                )
            with self.cursor() as cur:
                cur.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
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


def _holder(message: str) -> tuple[int | None, str] | None:
    """(process id, executable) of who holds the file, from DuckDB's lock error ("held in /usr/bin/python3 (PID
    4242)"), (None, "") when it names none; None when the error is not a lock conflict."""
    if "lock" not in message.lower():
        return None
    found = re.search(r"held in (\S+) \(PID (\d+)\)", message)
    return (int(found.group(2)), found.group(1)) if found else (None, "")


def _command_of(pid: int | None) -> str | None:
    """The command line of process ``pid`` (``python -m rredcot_viz import data.parquet``), None where the system
    does not say (no ``/proc``, the process gone)."""
    if pid is None:
        return None
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return None
    if not words:
        return None
    return shlex.join([Path(words[0]).name, *words[1:]])[:COMMAND_CHARS]
