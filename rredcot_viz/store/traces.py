"""Traces by content hash, grouped into named collections (samples, uploads, dataset imports)."""

from __future__ import annotations

import json
import time

from rredcot_viz.store.base import StoreBase
from rredcot_viz.traces.trace import Trace


class TraceStore(StoreBase):
    """The ``traces`` table: a trace is stored once per content, whatever its id or collection."""

    def put_traces(self, traces: list[Trace], collection: str = "user") -> int:
        """Store traces not stored yet (re-adding is a no-op); returns how many were given."""
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
        if rows:  # DuckDB refuses an empty executemany
            with self.cursor() as cur:
                cur.executemany("INSERT OR IGNORE INTO traces VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        return len(rows)

    def trace(self, trace_hash: str) -> Trace | None:
        with self.cursor() as cur:
            row = cur.execute("SELECT data FROM traces WHERE trace_hash = ?", [trace_hash]).fetchone()
        return Trace.from_dict(json.loads(row[0])) if row else None

    def traces(self, collection: str | None = None, limit: int | None = None) -> list[Trace]:
        """Traces in the order they were stored (of one collection when given)."""
        query = "SELECT data FROM traces" + (" WHERE collection = ?" if collection else "") + " ORDER BY created_at"
        query += f" LIMIT {int(limit)}" if limit else ""
        with self.cursor() as cur:
            rows = cur.execute(query, [collection] if collection else []).fetchall()
        return [Trace.from_dict(json.loads(r[0])) for r in rows]

    def collections(self) -> dict[str, int]:
        """Trace counts by collection, by name."""
        with self.cursor() as cur:
            rows = cur.execute("SELECT collection, count(*) FROM traces GROUP BY collection ORDER BY 1").fetchall()
        return {name: int(count) for name, count in rows}
