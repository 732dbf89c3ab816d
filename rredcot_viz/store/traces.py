"""Traces by content hash, and the collections they belong to (samples, uploads, dataset imports, runs).

A trace is stored once per content (``traces``); which collections hold it, and under which id, is a row per
collection in ``memberships``, so importing the same traces into a second collection puts them there too and
keeps the id they had in each. Traces are written in chunks, each an Arrow table inserted in one transaction
(row by row, 200k traces took over 15 minutes), and the file is let go between chunks for any process waiting.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rredcot_viz.store.base import StoreBase
from rredcot_viz.traces.trace import Trace

if TYPE_CHECKING:
    import pyarrow as pa

CHUNK_ROWS = 10_000
"""Traces per write transaction: large enough that a chunk's fixed cost is small (about 0.3 s for 10k rows
here), small enough that a waiting process gets the file within a second and memory stays flat."""


@dataclass(frozen=True)
class StoredTraces:
    """What ``put_traces`` did: how many distinct traces the collection got, how many of them the store did not
    hold before, and how many it held in this collection already."""

    collection: str
    given: int  # traces given, a repeated content counted each time
    distinct: int  # distinct contents among them: all are in the collection now
    new: int  # contents the store did not hold before
    already_in: int  # contents the collection held before

    def __str__(self) -> str:
        known = self.distinct - self.new
        text = f"{self.distinct} traces in collection {self.collection}: {self.new} new, {known} already stored"
        if known:
            text += f" ({known - self.already_in} added to this collection, {self.already_in} already in it)"
        if self.given > self.distinct:
            text += f"; {self.given - self.distinct} repeated a trace above"
        return text


class TraceStore(StoreBase):
    """``traces`` (one row per content) and ``memberships`` (one row per trace and collection)."""

    def put_traces(
        self,
        traces: list[Trace],
        collection: str = "user",
        progress: Callable[[int, int], None] | None = None,
    ) -> StoredTraces:
        """Store the traces not stored yet and put every one in ``collection`` (re-adding is a no-op), a chunk of
        ``CHUNK_ROWS`` per transaction; ``progress(done, total)`` after each chunk. A trace already in the
        collection keeps its id there, or takes the given one if it had none."""
        seen: set[str] = set()
        distinct = new = already_in = 0
        for start in range(0, len(traces), CHUNK_ROWS):
            chunk = []
            for trace in traces[start : start + CHUNK_ROWS]:
                trace_hash = trace.content_hash
                if trace_hash not in seen:
                    seen.add(trace_hash)
                    chunk.append((trace_hash, trace))
            stored, added = self._put_chunk(chunk, collection)
            distinct += len(chunk)
            new += stored
            already_in += len(chunk) - added
            if progress is not None:
                progress(min(start + CHUNK_ROWS, len(traces)), len(traces))
        return StoredTraces(collection, len(traces), distinct, new, already_in)

    def _put_chunk(self, chunk: list[tuple[str, Trace]], collection: str) -> tuple[int, int]:
        """The rows of the traces the store lacks, built outside any transaction (an outcome costs about 0.1 ms, so
        a chunk's rows take about a second, which a waiting process need not wait for), then one transaction: the
        rows, and each trace's membership in ``collection``. Returns (traces stored, memberships added)."""
        import pyarrow as pa

        members = pa.table(
            {
                "pos": list(range(len(chunk))),
                "trace_hash": [trace_hash for trace_hash, _ in chunk],
                "trace_id": [trace.trace_id for _, trace in chunk],
            }
        )
        with self.cursor() as cur:
            cur.register("members", members)
            known = {
                row[0]
                for row in cur.execute("SELECT trace_hash FROM traces SEMI JOIN members USING (trace_hash)").fetchall()
            }
        now = time.time()
        rows = _rows([(h, t) for h, t in chunk if h not in known], collection, now)
        with self.writing() as cur:
            cur.execute("BEGIN")
            try:
                cur.register("members", members)
                cur.register("new_rows", rows)
                stored = cur.execute(
                    "INSERT INTO traces SELECT r.* EXCLUDE (pos) FROM new_rows r ANTI JOIN traces USING (trace_hash) "
                    "ORDER BY r.pos"
                ).fetchone()[0]  # a trace another thread stored meanwhile is not stored twice
                added = cur.execute(
                    "INSERT INTO memberships SELECT m.trace_hash, ?, m.trace_id, ? FROM members m "
                    "ANTI JOIN (SELECT trace_hash FROM memberships WHERE collection = ?) USING (trace_hash) "
                    "ORDER BY m.pos",
                    [collection, now, collection],
                ).fetchone()[0]
                cur.execute(
                    "UPDATE memberships SET trace_id = m.trace_id FROM members m WHERE memberships.trace_hash = "
                    "m.trace_hash AND memberships.collection = ? AND memberships.trace_id IS NULL "
                    "AND m.trace_id IS NOT NULL",
                    [collection],
                )
            except BaseException:
                cur.execute("ROLLBACK")  # a chunk is stored whole or not at all
                raise
            cur.execute("COMMIT")
        return stored, added

    def trace(self, trace_hash: str) -> Trace | None:
        with self.cursor() as cur:
            row = cur.execute("SELECT data FROM traces WHERE trace_hash = ?", [trace_hash]).fetchone()
        return Trace.from_dict(json.loads(row[0])) if row else None

    def traces_by_hash(self, trace_hashes: list[str]) -> dict[str, Trace]:
        """The stored traces among ``trace_hashes``, by hash (one query; a hash not stored is absent)."""
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT trace_hash, data FROM traces WHERE list_contains(?, trace_hash)", [list(trace_hashes)]
            ).fetchall()
        return {trace_hash: Trace.from_dict(json.loads(data)) for trace_hash, data in rows}

    def traces(self, collection: str | None = None, limit: int | None = None) -> list[Trace]:
        """Traces in the order they were stored: of one collection (in the order it got them, each under the id
        it had there) when given, else every trace once."""
        if collection:
            query = (
                "SELECT t.data, m.trace_id FROM memberships m JOIN traces t USING (trace_hash) "
                "WHERE m.collection = ? ORDER BY m.created_at, m.rowid"
            )
        else:
            query = "SELECT data, NULL FROM traces ORDER BY created_at, rowid"
        query += f" LIMIT {int(limit)}" if limit else ""
        with self.cursor() as cur:
            rows = cur.execute(query, [collection] if collection else []).fetchall()
        return [_with_id(Trace.from_dict(json.loads(data)), trace_id) for data, trace_id in rows]

    def traces_named(self, trace_id: str) -> list[Trace]:
        """The traces stored under ``trace_id`` in any collection (each once, under that id)."""
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT data FROM traces WHERE trace_hash IN (SELECT trace_hash FROM memberships WHERE trace_id = ? "
                "UNION SELECT trace_hash FROM traces WHERE trace_id = ?) ORDER BY created_at, rowid",
                [trace_id, trace_id],
            ).fetchall()
        return [_with_id(Trace.from_dict(json.loads(row[0])), trace_id) for row in rows]

    def collections(self) -> dict[str, int]:
        """Trace counts by collection, by name."""
        with self.cursor() as cur:
            rows = cur.execute("SELECT collection, count(*) FROM memberships GROUP BY collection ORDER BY 1").fetchall()
        return {name: int(count) for name, count in rows}


_COLUMNS = {
    "trace_hash": "string",
    "trace_id": "string",
    "source": "string",
    "question": "string",
    "outcome": "float64",
    "n_chars": "int32",
    "data": "string",
    "collection": "string",  # the collection the trace was first stored in (membership: ``memberships``)
    "created_at": "float64",
}
"""The ``traces`` table's columns in its order, with their Arrow types."""


def _rows(traces: list[tuple[str, Trace]], collection: str, now: float) -> pa.Table:
    """The ``traces`` rows of (hash, trace) pairs as an Arrow table, its columns in the table's order, and each
    row's position (``pos``), so that they are stored in the order given."""
    import pyarrow as pa

    schema = pa.schema([*_COLUMNS.items(), ("pos", "int64")])
    columns: list[list[Any]] = [[] for _ in schema]
    for pos, (trace_hash, trace) in enumerate(traces):
        row = (
            trace_hash,
            trace.trace_id,
            trace.source,
            trace.question,
            trace.outcome,
            len(trace.cot),
            json.dumps(trace.to_dict()),
            collection,
            now,
            pos,
        )
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    return pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(columns, schema, strict=True)], schema=schema)


def _with_id(trace: Trace, trace_id: str | None) -> Trace:
    return trace if trace_id is None or trace_id == trace.trace_id else replace(trace, trace_id=trace_id)
